//===- FrontendFuzzer.cpp - libFuzzer entry point for the front end -------===//
//
// Feeds arbitrary bytes to the bmb front end as the text of one file and
// checks the front end's contract on them: it never crashes, never throws,
// and a stage that fails has reported at least one error. ASan (built in with
// -fsanitize=fuzzer,address) catches memory errors; libFuzzer's -timeout and
// -rss_limit_mb catch hangs and runaway memory.
//
// The input runs through the stages in `runStages` in order, each on the
// previous one's result, stopping at the first that fails: the parser, then
// Sema over the same text with its imports (the stdlib resolves from the
// source tree), which selects the file's only job or model.
//
// Build and run: docs/building.md ("The libFuzzer front-end fuzzer").
//
//===----------------------------------------------------------------------===//
#include "lang/Diagnostics.h"
#include "lang/Parser.h"
#include "lang/Sema.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <string>

namespace {

/// What one input carries from stage to stage.
struct FuzzState {
  bmb::SourceManager sources;
  std::ostringstream messages; // diagnostics are rendered (exercising the
                               // renderer) but not printed
  bmb::DiagnosticEngine diags{sources, messages};
  uint32_t fileId = 0;
  std::unique_ptr<bmb::ast::File> file;
};

/// Stops the fuzzer with a report: a broken contract is a finding, like a
/// crash.
[[noreturn]] void contractViolated(const char *stage, const char *what) {
  std::fprintf(stderr, "bmb-frontend-fuzzer: %s: %s\n", stage, what);
  std::abort();
}

/// Parsing (lang/Parser.h): no file exactly when an error was reported.
bool parseStage(FuzzState &s) {
  s.file = bmb::parseFile(s.fileId, s.sources, s.diags);
  if (!s.file && !s.diags.hasErrors())
    contractViolated("parse", "returned no file and reported no error");
  if (s.file && s.diags.hasErrors())
    contractViolated("parse", "reported an error but returned a file");
  return s.file != nullptr;
}

/// Sema (lang/Sema.h): a program exactly when no error was reported. It
/// loads the text again through loadSource so imports resolve as in bmbc.
bool semaStage(FuzzState &s) {
  bmb::SourceManager sources;
  std::ostringstream messages;
  bmb::DiagnosticEngine diags(sources, messages);
  bmb::FrontendOptions options;
  options.importDirs.push_back(BMB_SOURCE_DIR);
  std::optional<bmb::LoadedFiles> files =
      bmb::loadSource("fuzz.bmb", s.sources.text(s.fileId), options, sources, diags);
  if (!files) {
    if (!diags.hasErrors())
      contractViolated("load", "failed and reported no error");
    return false;
  }
  std::optional<bmb::program::Program> program =
      bmb::analyze(*files, options, sources, diags);
  if (!program && !diags.hasErrors())
    contractViolated("sema", "returned no program and reported no error");
  if (program && diags.hasErrors())
    contractViolated("sema", "reported an error but returned a program");
  diags.flush();
  return program.has_value();
}

using Stage = bool (*)(FuzzState &);
constexpr Stage runStages[] = {parseStage, semaStage};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  FuzzState s;
  s.fileId = s.sources.addBuffer(
      "fuzz.bmb", std::string(reinterpret_cast<const char *>(data), size));
  for (Stage stage : runStages)
    if (!stage(s))
      break;
  s.diags.flush();
  return 0;
}
