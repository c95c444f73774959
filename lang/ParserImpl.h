//===- ParserImpl.h - Internals shared by lang/Parser*.cpp ------*- C++ -*-===//
//
// Private to the parser: the only header besides the generated ones that
// names ANTLR types. Never include it outside lang/Parser*.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef BMB_LANG_PARSERIMPL_H
#define BMB_LANG_PARSERIMPL_H

#include "lang/AST.h"
#include "lang/Diagnostics.h"
#include "lang/Parser.h"

#include "BmbLexer.h"
#include "BmbParser.h"
#include "antlr4-runtime.h"

#include <string>
#include <string_view>
#include <vector>

namespace bmb::parser {

using G = bmbgrammar::BmbParser;
using L = bmbgrammar::BmbLexer;

/// Thrown inside the parser to abandon a file once the diagnostic engine's
/// error limit is reached; caught in parseFile, never escapes it.
struct TooManyErrors {};

/// Maps ANTLR's token positions (code-point indices into the decoded text)
/// to byte offsets and 1-based byte columns of the original buffer.
class SourceMap {
public:
  SourceMap(uint32_t fileId, std::string_view text);

  uint32_t file() const { return fileId; }
  std::string_view source() const { return buffer; }
  size_t byteOfCodePoint(size_t cp) const;
  Loc locOfByte(size_t offset) const;
  /// Where the token starts (EOF: the end of the buffer).
  Loc loc(const antlr4::Token *t) const;
  /// The token's exact source bytes (empty for EOF).
  std::string_view text(const antlr4::Token *t) const;

private:
  uint32_t fileId;
  std::string_view buffer;
  std::vector<size_t> lineStarts;
  // Code-point index of every multi-byte character and, in parallel, the
  // number of extra bytes up to and including it. Empty for ASCII files.
  std::vector<size_t> wideIndex, wideExtra;
  size_t bom = 0; // bytes of a leading byte order mark
};

/// What one parse shares between the error strategy and the AST builder.
struct Session {
  Session(const SourceMap &map, DiagnosticEngine &diags, const ParseLimits &limits)
      : map(map), diags(diags), limits(limits) {}

  const SourceMap &map;
  DiagnosticEngine &diags;
  const ParseLimits &limits;
  /// An unterminated block comment swallowed the rest of the file: what the
  /// parser then misses at the end is not worth a second error.
  bool unterminatedComment = false;
  /// ANTLR found a syntax error (whether or not a message was printed for it).
  bool syntaxFailed = false;

  /// Reports an error, after any queued token error located before it;
  /// throws TooManyErrors once past the engine's limit.
  Diagnostic &error(Loc loc, std::string message);
  /// Queues an error found while scanning the tokens, so that it is printed
  /// in source order among the syntax errors. `distorts`: the parser will
  /// not see the text as written (an unknown character is dropped, an
  /// unterminated string or comment swallows the line or the file), so
  /// syntax errors right after it are most likely its echo.
  void tokenError(Loc loc, std::string message, bool distorts);
  /// Reports a syntax error at `loc` (`prev`: the token before it) unless it
  /// is most likely an echo: a distorting token error precedes it on its
  /// line or on the line of `prev`, or a syntax error was already reported
  /// earlier on its line.
  void syntaxError(Loc loc, Loc prev, std::string message);
  /// Prints every queued token error.
  void flushTokenErrors() { flushBefore(Loc{map.file(), UINT32_MAX, UINT32_MAX}); }

private:
  void flushBefore(Loc loc);
  bool distortedBefore(Loc loc) const;

  std::vector<std::pair<Loc, std::string>> queued; // in source order
  size_t nextQueued = 0;
  std::vector<Loc> distorted; // in source order
  Loc lastSyntaxError;
};

/// Replaces ANTLR's messages ("mismatched input ... expecting {...}") with
/// ours while keeping its recovery, so one run reports several errors.
class ErrorStrategy : public antlr4::DefaultErrorStrategy {
public:
  explicit ErrorStrategy(Session &session) : session(session) {}

  void sync(antlr4::Parser *parser) override;

protected:
  void reportNoViableAlternative(antlr4::Parser *parser,
                                 const antlr4::NoViableAltException &e) override;
  void reportInputMismatch(antlr4::Parser *parser,
                           const antlr4::InputMismatchException &e) override;
  void reportFailedPredicate(antlr4::Parser *parser,
                             const antlr4::FailedPredicateException &e) override;
  void reportUnwantedToken(antlr4::Parser *parser) override;
  void reportMissingToken(antlr4::Parser *parser) override;

private:
  void report(antlr4::Parser *parser, antlr4::Token *offending,
              const antlr4::misc::IntervalSet &expected, bool deepFailure);

  Session &session;
};

/// True for tokens the lexer produces only for malformed input; they were
/// reported when the file was lexed.
bool isErrorToken(size_t type);

/// How a token reads in a message: 'x', keyword 'for', string "...", end of
/// file.
std::string describeToken(const SourceMap &map, const antlr4::Token *t);

//===----------------------------------------------------------------------===//
// Literals (ParserLiterals.cpp). Each decoder returns an error message, empty
// on success; they run once when the file is lexed (to report) and again when
// the AST is built (to get the value).
//===----------------------------------------------------------------------===//

/// Decimal digits to int64_t, digit by digit with overflow detection.
std::string decodeInt(std::string_view text, int64_t &value);
/// `1.0`, `6e-4`, `10000.0` (locale-independent); rejects overflow/underflow.
std::string decodeFloat(std::string_view text, double &value);
/// `6GiB`, `512MB`, `1.5GB` to a whole number of bytes.
std::string decodeSize(std::string_view text, int64_t &value);
/// The message for a BAD_NUMBER token (`12abc`, `0x1f`, `8B`).
std::string badNumberMessage(std::string_view text);
/// Decodes a STRING token (with its quotes). On error, `errorOffset` is the
/// byte offset within `text` of the bad escape.
std::string decodeString(std::string_view text, std::string &value, size_t &errorOffset);
/// `'text'`, cut short with "..." when long so messages stay one line.
std::string quoted(std::string_view text, size_t maxBytes = 32);

/// Builds the AST from a parse tree that had no syntax errors. Returns
/// nullptr if building found errors (bad literals, nesting, a second
/// forward, ...).
std::unique_ptr<ast::File> buildAst(G::FileContext *tree, Session &session);

} // namespace bmb::parser

#endif // BMB_LANG_PARSERIMPL_H
