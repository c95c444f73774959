//===- ParserTestHelpers.h - Shared helpers of the parser tests -*- C++ -*-===//
#ifndef BMB_TEST_UNIT_PARSERTESTHELPERS_H
#define BMB_TEST_UNIT_PARSERTESTHELPERS_H

#include "lang/Parser.h"

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace bmb::test {

/// The result of parsing one buffer named "t.bmb".
struct Parsed {
  std::unique_ptr<ast::File> file;
  unsigned errors = 0;
  std::string output; // everything the DiagnosticEngine printed

  /// The "file:line:col: error: message" lines, in order.
  std::vector<std::string> errorLines() const {
    std::vector<std::string> out;
    std::istringstream in(output);
    for (std::string line; std::getline(in, line);)
      if (line.find(": error: ") != std::string::npos || line.rfind("error: ", 0) == 0)
        out.push_back(line);
    return out;
  }
  std::string firstError() const {
    std::vector<std::string> e = errorLines();
    return e.empty() ? std::string() : e.front();
  }
};

inline Parsed parseText(const std::string &text, const ParseLimits &limits = {},
                        const std::string &name = "t.bmb") {
  SourceManager sources;
  uint32_t id = sources.addBuffer(name, text);
  std::ostringstream os;
  Parsed p;
  {
    DiagnosticEngine diags(sources, os);
    p.file = parseFile(id, sources, diags, limits);
    p.errors = diags.errorCount();
    diags.flush();
  }
  p.output = os.str();
  return p;
}

inline std::string sourcePath(const std::string &rel) {
  return std::string(BMB_SOURCE_DIR) + "/" + rel;
}

inline std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// The invariant every input must satisfy: a tree and no errors, or no tree
/// and at least one error.
inline bool consistent(const Parsed &p) { return p.file ? p.errors == 0 : p.errors > 0; }

/// True if a message (not the echoed source lines) still uses ANTLR's own
/// wording, which the parser's error strategy replaces everywhere.
inline bool hasAntlrWording(const Parsed &p) {
  for (const std::string &line : p.errorLines())
    for (const char *antlr : {"mismatched input", "extraneous input", "expecting", "no viable",
                              "missing ", "token recognition", "<EOF>"})
      if (line.find(antlr) != std::string::npos)
        return true;
  return false;
}

} // namespace bmb::test

#endif // BMB_TEST_UNIT_PARSERTESTHELPERS_H
