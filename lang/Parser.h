//===- Parser.h - .bmb source text to AST -----------------------*- C++ -*-===//
//
// The front end's entry point. The implementation drives an ANTLR4 parser
// generated from lang/Bmb.g4, but nothing ANTLR leaks through this header:
// callers get the plain AST of lang/AST.h and diagnostics.
//
//===----------------------------------------------------------------------===//
#ifndef BMB_LANG_PARSER_H
#define BMB_LANG_PARSER_H

#include "lang/AST.h"
#include "lang/Diagnostics.h"

#include <cstddef>
#include <cstdint>
#include <memory>

namespace bmb {

/// Bounds that keep hostile input from exhausting memory or the stack. They
/// are checked before ANTLR sees the text (size, bytes, bracket nesting) or
/// while the AST is built (expression depth).
struct ParseLimits {
  /// Larger files are rejected unread.
  size_t maxFileBytes = 8u << 20;
  /// Lexing stops with an error past this many tokens (comments and white
  /// space do not count). Tokens and the parse tree take about 0.6 KB per
  /// token, so this bounds the parser's memory (to about 600 MB) whatever the
  /// bytes; a million tokens is about 4 MiB of typical source.
  size_t maxTokens = 1000000;
  /// Nesting of '(', '[' and '{' plus runs of prefix '-' / 'not': each level
  /// is a recursion in the generated parser.
  unsigned maxNesting = 200;
  /// Depth of one expression tree (a chain `a + b + ... + z` is as deep as it
  /// is long, as are `else if` and `x if c else y if d ...` chains), so that
  /// every later recursive walk of the AST, including its destructor, stays
  /// shallow.
  unsigned maxExprDepth = 1000;
};

/// Parses the buffer `fileId` of `sources`. Reports every problem to `diags`;
/// returns nullptr if there was any error. Never throws.
std::unique_ptr<ast::File> parseFile(uint32_t fileId, const SourceManager &sources,
                                     DiagnosticEngine &diags, const ParseLimits &limits = {});

} // namespace bmb

#endif // BMB_LANG_PARSER_H
