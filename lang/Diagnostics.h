//===- Diagnostics.h - Source files, locations and error reporting -*- C++ -*-===//
//
// The front end's own diagnostics, free of ANTLR and MLIR so that every
// front-end library can use them. Messages render as
//
//   models/gpt2.bmb:12:7: error: unknown layer 'Blok'
//     h = repeat(layers) Blok(dim, heads)
//                        ^
//   stdlib/nn.bmb:40:3: note: instantiated from here
//
// Errors are counted, never thrown; callers keep going where they can so one
// run reports several mistakes, up to a limit.
//
//===----------------------------------------------------------------------===//
#ifndef BMB_LANG_DIAGNOSTICS_H
#define BMB_LANG_DIAGNOSTICS_H

#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>
#include <deque>
#include <vector>

namespace bmb {

/// A position in a loaded file; line and column are 1-based, column counts
/// bytes. line == 0 means "no location".
struct Loc {
  uint32_t file = 0;
  uint32_t line = 0;
  uint32_t col = 0;
  bool valid() const { return line != 0; }
};

/// Owns the text of every file the front end reads, so locations stay valid
/// for the whole compilation.
class SourceManager {
public:
  /// Registers a buffer; returns its file id. `path` is how it is printed.
  uint32_t addBuffer(std::string path, std::string text);
  const std::string &path(uint32_t file) const { return files[file].path; }
  const std::string &text(uint32_t file) const { return files[file].text; }
  size_t numFiles() const { return files.size(); }
  /// The text of line `line` (1-based) of `file`, without its newline.
  std::string_view lineText(uint32_t file, uint32_t line) const;

private:
  struct Entry {
    std::string path;
    std::string text;
    std::vector<size_t> lineStarts; // offset of each line's first byte
  };
  std::vector<Entry> files;
};

enum class Severity { Error, Warning, Note };

struct Diagnostic {
  Severity severity;
  Loc loc;
  std::string message;
  std::vector<std::pair<Loc, std::string>> notes;
  Diagnostic &note(Loc l, std::string m) {
    notes.emplace_back(l, std::move(m));
    return *this;
  }
};

class DiagnosticEngine {
public:
  DiagnosticEngine(const SourceManager &sources, std::ostream &os)
      : sources(sources), os(os) {}

  /// Reports a diagnostic; notes attach to it and print right after.
  Diagnostic &error(Loc loc, std::string message);
  Diagnostic &warning(Loc loc, std::string message);
  /// Prints every pending diagnostic (in report order) and clears them.
  void flush();

  unsigned errorCount() const { return numErrors; }
  bool hasErrors() const { return numErrors != 0; }
  /// After this many errors, further errors are counted but not printed and
  /// `tooManyErrors()` becomes true so callers can stop early.
  void setErrorLimit(unsigned limit) { errorLimit = limit; }
  bool tooManyErrors() const { return errorLimit && numErrors >= errorLimit; }

  /// Renders one diagnostic line with the source line and a caret.
  void render(Severity severity, Loc loc, std::string_view message) const;

  ~DiagnosticEngine() { flush(); }

private:
  const SourceManager &sources;
  std::ostream &os;
  std::deque<Diagnostic> pending; // deque: references stay valid
  unsigned numErrors = 0;
  unsigned errorLimit = 20;
  unsigned shownErrors = 0;
  bool limitReported = false;
};

} // namespace bmb

#endif // BMB_LANG_DIAGNOSTICS_H
