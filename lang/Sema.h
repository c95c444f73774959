//===- Sema.h - Names, hyperparameters, shapes and jobs ---------*- C++ -*-===//
//
// The front end after parsing: loads a file and its imports, resolves names
// across them, evaluates hyperparameters, instantiates the job's model (with
// B and T bound by the job: DESIGN decision 1) and checks every shape with the
// shared rules in dialects/Bmb/ShapeRules.h. The result is a
// program::Program that MLIRGen maps onto the `bmb` dialect without further
// checks. Every problem is reported to the DiagnosticEngine at the user's
// line; nothing throws.
//
//===----------------------------------------------------------------------===//
#ifndef BMB_LANG_SEMA_H
#define BMB_LANG_SEMA_H

#include "lang/AST.h"
#include "lang/Diagnostics.h"
#include "lang/Program.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace bmb {

struct FrontendOptions {
  /// Directories searched for `import "x"` after the importing file's own
  /// directory, in order. The stdlib's parent directory belongs here so that
  /// `import "stdlib/nn.bmb"` works from anywhere.
  std::vector<std::string> importDirs;
  /// Imports larger than this are rejected before they are read.
  size_t maxFileBytes = 8u << 20;
  /// At most this many files per compilation (imports included).
  unsigned maxFiles = 256;
  /// Layers nested deeper than this are rejected (catches self-recursion).
  unsigned maxInstantiationDepth = 64;
  /// Bracket nesting limit handed to the parser.
  unsigned maxNesting = 200;
  /// The job to elaborate (`--job`); empty: the file's only job, if any.
  std::string job;
  /// With no job: the model to elaborate (`--model`); empty: the only model.
  std::string model;
  /// With no job: the values bound to B and T.
  int64_t defaultBatch = 1;
  int64_t defaultSeq = 0; // 0: the model's `ctx` hyperparameter
  /// When > 0, T is bound to this value whatever the job says: an infer job
  /// is elaborated twice, at T = ctx for prefill and at T = 1 for decode
  /// (DESIGN decision 1: two entry points sharing parameters and KV state).
  int64_t seqOverride = 0;
};

/// Every file of one compilation, parsed, in load order (the main file first).
struct LoadedFiles {
  std::vector<std::unique_ptr<ast::File>> files;
};

/// Reads `path` and everything it imports. Reports unreadable files,
/// non-regular files (`/dev/zero`), oversized files, import cycles and parse
/// errors. Returns nullopt if anything failed.
std::optional<LoadedFiles> loadFiles(const std::string &path,
                                     const FrontendOptions &options,
                                     SourceManager &sources,
                                     DiagnosticEngine &diags);

/// Like loadFiles, for a main file already in memory (tools, fuzzers);
/// `path` names it in diagnostics and anchors its relative imports.
std::optional<LoadedFiles> loadSource(const std::string &path, std::string text,
                                      const FrontendOptions &options,
                                      SourceManager &sources, DiagnosticEngine &diags);

/// Checks the loaded files and elaborates the selected job (or model).
/// Returns nullopt after reporting errors.
std::optional<program::Program> analyze(const LoadedFiles &files,
                                        const FrontendOptions &options,
                                        const SourceManager &sources,
                                        DiagnosticEngine &diags);


} // namespace bmb

#endif // BMB_LANG_SEMA_H
