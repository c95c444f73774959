//===- Parser.cpp - Pre-scan, lex, parse, build ---------------------------===//
//
// parseFile runs four stages and stops at the first that fails:
//
//  1. a byte-level pre-scan (size cap, NUL bytes, strict UTF-8), because the
//     ANTLR runtime's UTF-8 decoder throws on bad input and a huge file would
//     be decoded to 4 bytes per character before anything else happens;
//  2. lexing the whole file, then one pass over the tokens that reports every
//     lexical problem (unknown characters, unterminated strings and comments,
//     malformed or out-of-range numbers, bad escapes) and bounds the nesting
//     depth: brackets and runs of prefix operators are the only recursion in
//     the generated parser, so bounding them here bounds its stack use;
//  3. the ANTLR parse, with ErrorStrategy rewording and recovering;
//  4. the AST builder (ParserBuilder.cpp), only for a tree without errors.
//
// Every exception is caught here: parseFile never throws.
//
//===----------------------------------------------------------------------===//
#include "lang/Parser.h"
#include "lang/ParserImpl.h"

#include <algorithm>
#include <cstdio>
#include <new>

namespace bmb::parser {

//===----------------------------------------------------------------------===//
// SourceMap
//===----------------------------------------------------------------------===//

SourceMap::SourceMap(uint32_t fileId, std::string_view text) : fileId(fileId), buffer(text) {
  lineStarts.push_back(0);
  // ANTLRInputStream drops a leading UTF-8 byte order mark before decoding,
  // so its code point 0 is byte 3 then.
  size_t start = text.substr(0, 3) == "\xEF\xBB\xBF" ? 3 : 0;
  bom = start;
  size_t cp = 0, extra = start;
  for (size_t i = start; i < text.size(); ++cp) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    size_t len = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    if (c == '\n')
      lineStarts.push_back(i + 1);
    if (len > 1) {
      extra += len - 1;
      wideIndex.push_back(cp);
      wideExtra.push_back(extra);
    }
    i += len;
  }
}

size_t SourceMap::byteOfCodePoint(size_t cp) const {
  // Extra bytes of the multi-byte characters before `cp`.
  size_t k = std::lower_bound(wideIndex.begin(), wideIndex.end(), cp) - wideIndex.begin();
  size_t byte = cp + (k ? wideExtra[k - 1] : bom);
  return std::min(byte, buffer.size());
}

Loc SourceMap::locOfByte(size_t offset) const {
  offset = std::min(offset, buffer.size());
  size_t line = std::upper_bound(lineStarts.begin(), lineStarts.end(), offset) - lineStarts.begin();
  return Loc{fileId, static_cast<uint32_t>(line),
             static_cast<uint32_t>(offset - lineStarts[line - 1] + 1)};
}

Loc SourceMap::loc(const antlr4::Token *t) const {
  size_t start = t->getStartIndex();
  // Tokens conjured by error recovery have no position.
  if (start == INVALID_INDEX || t->getType() == antlr4::Token::EOF)
    return locOfByte(buffer.size());
  return locOfByte(byteOfCodePoint(start));
}

std::string_view SourceMap::text(const antlr4::Token *t) const {
  size_t start = t->getStartIndex(), stop = t->getStopIndex();
  if (t->getType() == antlr4::Token::EOF || start == INVALID_INDEX || stop == INVALID_INDEX ||
      stop < start)
    return {};
  size_t b = byteOfCodePoint(start), e = byteOfCodePoint(stop + 1);
  return buffer.substr(b, e - b);
}

static bool before(const Loc &a, const Loc &b) {
  return a.line < b.line || (a.line == b.line && a.col < b.col);
}

Diagnostic &Session::error(Loc loc, std::string message) {
  flushBefore(loc);
  // One error past the limit is still handed to the engine, which prints
  // "too many errors" in its place; then the parse is abandoned.
  bool over = diags.tooManyErrors();
  Diagnostic &d = diags.error(loc, std::move(message));
  if (over)
    throw TooManyErrors{};
  return d;
}

void Session::tokenError(Loc loc, std::string message, bool distorts) {
  queued.emplace_back(loc, std::move(message));
  if (distorts)
    distorted.push_back(loc);
  // Past any sensible error limit the order no longer matters: print now
  // (which throws TooManyErrors) rather than hold a queue as big as the file.
  if (queued.size() - nextQueued >= 1000)
    flushTokenErrors();
}

void Session::flushBefore(Loc loc) {
  while (nextQueued < queued.size() && !before(loc, queued[nextQueued].first)) {
    auto &[at, message] = queued[nextQueued++];
    bool over = diags.tooManyErrors();
    diags.error(at, std::move(message));
    if (over)
      throw TooManyErrors{};
  }
}

bool Session::distortedBefore(Loc loc) const {
  // The last distorting error at or before `loc`, on the same line.
  auto it = std::upper_bound(distorted.begin(), distorted.end(), loc, before);
  return it != distorted.begin() && std::prev(it)->line == loc.line;
}

void Session::syntaxError(Loc loc, Loc prev, std::string message) {
  if (distortedBefore(loc) || (prev.valid() && distortedBefore(prev)))
    return;
  if (lastSyntaxError.line == loc.line && !before(loc, lastSyntaxError))
    return;
  lastSyntaxError = loc;
  error(loc, std::move(message));
}

//===----------------------------------------------------------------------===//
// Stage 1: bytes
//===----------------------------------------------------------------------===//

/// Offset of the first byte that is not part of well-formed UTF-8 (no
/// overlong forms, no surrogates, nothing above U+10FFFF), or of the first
/// NUL byte; npos if the text is clean.
static size_t firstBadByte(std::string_view s) {
  const auto *p = reinterpret_cast<const unsigned char *>(s.data());
  const size_t n = s.size();
  for (size_t i = 0; i < n;) {
    unsigned char c = p[i];
    if (c >= 0x01 && c < 0x80) {
      ++i;
      continue;
    }
    if (c == 0)
      return i;
    size_t len;
    unsigned char lo = 0x80, hi = 0xBF; // bounds for the second byte
    if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      if (c == 0xE0)
        lo = 0xA0; // overlong
      if (c == 0xED)
        hi = 0x9F; // surrogates
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      if (c == 0xF0)
        lo = 0x90; // overlong
      if (c == 0xF4)
        hi = 0x8F; // above U+10FFFF
    } else {
      return i;
    }
    if (i + len > n)
      return i;
    if (p[i + 1] < lo || p[i + 1] > hi)
      return i;
    for (size_t k = 2; k < len; ++k)
      if (p[i + k] < 0x80 || p[i + k] > 0xBF)
        return i;
    i += len;
  }
  return std::string_view::npos;
}

//===----------------------------------------------------------------------===//
// Stage 2: tokens
//===----------------------------------------------------------------------===//

static bool endsOperand(size_t type) {
  switch (type) {
  case G::IDENT:
  case G::INT:
  case G::FLOAT:
  case G::SIZE:
  case G::BAD_NUMBER:
  case G::STRING:
  case G::BAD_STRING:
  case G::TRUE:
  case G::FALSE:
  case G::RPAREN:
  case G::RBRACK:
  case G::ELLIPSIS:
    return true;
  default:
    return false;
  }
}

static std::string unknownCharMessage(std::string_view ch) {
  unsigned char c = ch.empty() ? 0 : static_cast<unsigned char>(ch[0]);
  if (c >= 0x21 && c < 0x7F) {
    std::string msg = "unknown character " + (c == '\'' ? "\"'\"" : quoted(ch));
    if (c == '#')
      msg += " (comments start with '//')";
    else if (c == '\'' || c == '`')
      msg += " (strings use double quotes)";
    return msg;
  }
  // Decode the code point for U+XXXX; print the character itself only when
  // it is not a control character.
  uint32_t cp = c;
  if (c >= 0x80) {
    size_t len = ch.size();
    cp = c & (len == 2 ? 0x1F : len == 3 ? 0x0F : 0x07);
    for (size_t i = 1; i < len; ++i)
      cp = (cp << 6) | (static_cast<unsigned char>(ch[i]) & 0x3F);
  }
  char buf[16];
  std::snprintf(buf, sizeof buf, "U+%04X", static_cast<unsigned>(cp));
  // Control, format and zero-width characters would print as nothing.
  bool invisible = cp < 0xA0 || cp == 0xAD || cp == 0xFEFF || (cp >= 0x200B && cp <= 0x200F) ||
                   (cp >= 0x2028 && cp <= 0x202E) || (cp >= 0x2060 && cp <= 0x2064);
  if (invisible)
    return std::string("unknown character ") + buf;
  return "unknown character " + quoted(ch) + " (" + buf + ")";
}

/// Reports lexical problems and checks literals. Returns false when the
/// nesting bound is exceeded: then the parser must not run at all.
static bool checkTokens(const std::vector<antlr4::Token *> &tokens, Session &s) {
  const SourceMap &map = s.map;
  // Nesting: one frame per open bracket (plus the top level), each counting
  // the prefix operators waiting for their operand at that level.
  std::vector<unsigned> unaryRuns{0};
  size_t depth = 0; // open brackets + all pending prefix operators
  size_t prevType = antlr4::Token::INVALID_TYPE;
  size_t lastUnknownStop = INVALID_INDEX;
  // `a if c if c if c ...`: each `if` without `else` makes ANTLR look ahead
  // to the end of the chain for a possible `else`, so the parse time grows
  // with the square of the chain. Count the `if`s of one expression (they
  // start over at `{`, `}`, `=`, `,` and `return`, which end expressions).
  unsigned ifChain = 0;
  for (antlr4::Token *t : tokens) {
    const size_t type = t->getType();
    std::string_view text = map.text(t);
    switch (type) {
    case G::UNKNOWN_CHAR:
      // One error per run of adjacent unknown characters.
      if (lastUnknownStop == INVALID_INDEX || t->getStartIndex() != lastUnknownStop + 1)
        s.tokenError(map.loc(t), unknownCharMessage(text), true);
      lastUnknownStop = t->getStopIndex();
      continue;
    case G::UNTERMINATED_COMMENT:
      s.unterminatedComment = true;
      s.tokenError(map.loc(t), "unterminated block comment: '/*' has no matching '*/'", true);
      continue;
    case G::BAD_STRING:
      s.tokenError(map.loc(t), "unterminated string literal", true);
      break;
    case G::BAD_NUMBER:
      s.tokenError(map.loc(t), badNumberMessage(text), true);
      break;
    case G::INT: {
      int64_t v;
      std::string msg = decodeInt(text, v);
      if (!msg.empty())
        s.tokenError(map.loc(t), msg, false);
      break;
    }
    case G::FLOAT: {
      double v;
      std::string msg = decodeFloat(text, v);
      if (!msg.empty())
        s.tokenError(map.loc(t), msg, false);
      break;
    }
    case G::SIZE: {
      int64_t v;
      std::string msg = decodeSize(text, v);
      if (!msg.empty())
        s.tokenError(map.loc(t), msg, false);
      break;
    }
    case G::STRING: {
      std::string v;
      size_t offset = 0;
      std::string msg = decodeString(text, v, offset);
      if (!msg.empty())
        s.tokenError(map.locOfByte(map.byteOfCodePoint(t->getStartIndex()) + offset), msg, false);
      break;
    }
    default:
      break;
    }
    if (t->getChannel() != antlr4::Token::DEFAULT_CHANNEL)
      continue;

    const unsigned limit = s.limits.maxNesting;
    if (type == G::IF) {
      if (++ifChain > limit) {
        s.error(map.loc(t), "expression nested too deeply: more than " +
                                std::to_string(limit) + " 'if's in one expression");
        return false;
      }
    } else if (type == G::LBRACE || type == G::RBRACE || type == G::ASSIGN ||
               type == G::COMMA || type == G::RETURN) {
      ifChain = 0;
    }
    switch (type) {
    case G::LPAREN:
    case G::LBRACK:
    case G::LBRACE:
      if (depth + 1 > limit) {
        s.error(map.loc(t),
                "brackets nested too deeply (the limit is " + std::to_string(limit) + ")");
        return false;
      }
      ++depth;
      unaryRuns.push_back(0);
      break;
    case G::RPAREN:
    case G::RBRACK:
    case G::RBRACE:
      if (unaryRuns.size() > 1) {
        depth -= unaryRuns.back() + 1;
        unaryRuns.pop_back();
      }
      // A closed bracket is an operand: the prefix operators before it are done.
      depth -= unaryRuns.back();
      unaryRuns.back() = 0;
      break;
    case G::MINUS:
    case G::NOT:
      if (type == G::MINUS && endsOperand(prevType))
        break; // binary minus
      if (depth + 1 > limit) {
        s.error(map.loc(t),
                "expression nested too deeply (the limit is " + std::to_string(limit) + ")");
        return false;
      }
      ++depth;
      ++unaryRuns.back();
      break;
    default:
      if (endsOperand(type)) {
        depth -= unaryRuns.back();
        unaryRuns.back() = 0;
      }
      break;
    }
    prevType = type;
  }
  return true;
}

/// Retypes the names that start recipe directives as VERB (see Bmb.g4): in
/// a recipe body, outside any inner bracket, a name that follows the body's
/// '{' or a ';', or that begins a line after a complete argument or value,
/// and that is not followed by '=' (which makes it a setting name).
static void markDirectiveVerbs(const std::vector<antlr4::Token *> &all) {
  std::vector<antlr4::Token *> tokens;
  tokens.reserve(all.size());
  for (antlr4::Token *t : all)
    if (t->getChannel() == antlr4::Token::DEFAULT_CHANNEL)
      tokens.push_back(t);
  size_t depth = 0; // brace depth inside the current recipe; 0: outside
  for (size_t i = 0; i < tokens.size(); ++i) {
    const size_t type = tokens[i]->getType();
    if (depth == 0) {
      // `recipe NAME {` opens a body.
      if (type == G::LBRACE && i >= 2 && tokens[i - 2]->getType() == G::RECIPE)
        depth = 1;
      continue;
    }
    if (type == G::LBRACE || type == G::LPAREN || type == G::LBRACK) {
      ++depth;
      continue;
    }
    if (type == G::RBRACE || type == G::RPAREN || type == G::RBRACK) {
      --depth;
      continue;
    }
    if (type != G::IDENT || depth != 1)
      continue;
    antlr4::Token *prev = tokens[i - 1];
    bool next = i + 1 < tokens.size() && tokens[i + 1]->getType() == G::ASSIGN;
    bool start = prev->getType() == G::LBRACE || prev->getType() == G::SEMI ||
                 (prev->getLine() < tokens[i]->getLine() &&
                  (endsOperand(prev->getType()) || prev->getType() == G::RBRACE ||
                   prev->getType() == G::VERB));
    if (start && !next)
      if (auto *w = dynamic_cast<antlr4::WritableToken *>(tokens[i]))
        w->setType(G::VERB);
  }
}

//===----------------------------------------------------------------------===//
// The driver
//===----------------------------------------------------------------------===//

static std::unique_ptr<ast::File> parseChecked(uint32_t fileId, const SourceManager &sources,
                                               DiagnosticEngine &diags, const ParseLimits &limits) {
  const std::string &text = sources.text(fileId);
  const Loc fileStart{fileId, 1, 1};
  if (text.size() > limits.maxFileBytes) {
    diags.error(fileStart, "file is too large (" + std::to_string(text.size()) +
                               " bytes; the limit is " + std::to_string(limits.maxFileBytes) + ")");
    return nullptr;
  }
  if (size_t bad = firstBadByte(text); bad != std::string_view::npos) {
    // Everything before the bad byte is clean, so it can be mapped.
    SourceMap prefix(fileId, std::string_view(text).substr(0, bad));
    diags.error(prefix.locOfByte(bad), "file is not UTF-8 text");
    return nullptr;
  }
  const SourceMap map(fileId, text);
  Session session{map, diags, limits};
  const unsigned errorsBefore = diags.errorCount();

  antlr4::ANTLRInputStream input(text);
  L lexer(&input);
  lexer.removeErrorListeners(); // UNKNOWN_CHAR matches anything: no lexer errors
  // Lex into our own list first, so that a file of a million commas stops at
  // the token limit instead of filling memory.
  std::vector<std::unique_ptr<antlr4::Token>> owned;
  std::vector<antlr4::Token *> all;
  for (;;) {
    std::unique_ptr<antlr4::Token> t = lexer.nextToken();
    antlr4::Token *raw = t.get();
    owned.push_back(std::move(t));
    all.push_back(raw);
    if (raw->getType() == antlr4::Token::EOF)
      break;
    if (all.size() > limits.maxTokens) {
      session.error(map.loc(raw), "file has too many tokens (the limit is " +
                                      std::to_string(limits.maxTokens) + ")");
      return nullptr;
    }
  }
  if (!checkTokens(all, session)) {
    session.flushTokenErrors();
    return nullptr;
  }
  markDirectiveVerbs(all);
  antlr4::ListTokenSource source(std::move(owned));
  antlr4::CommonTokenStream tokens(&source);

  G parser(&tokens);
  parser.removeErrorListeners(); // all reporting goes through ErrorStrategy
  parser.setErrorHandler(std::make_shared<ErrorStrategy>(session));
  G::FileContext *tree = parser.file();
  session.flushTokenErrors();
  bool failed = session.syntaxFailed || parser.getNumberOfSyntaxErrors() != 0 || !tree;
  if (failed && diags.errorCount() == errorsBefore)
    session.error(fileStart, "syntax error"); // never return a tree with errors
  if (failed || diags.errorCount() != errorsBefore)
    return nullptr;
  std::unique_ptr<ast::File> file = buildAst(tree, session);
  if (diags.errorCount() != errorsBefore)
    return nullptr;
  return file;
}

} // namespace bmb::parser

std::unique_ptr<bmb::ast::File> bmb::parseFile(uint32_t fileId, const SourceManager &sources,
                                               DiagnosticEngine &diags, const ParseLimits &limits) {
  // Reporting itself may throw (std::bad_alloc); the outer catch keeps the
  // promise that nothing escapes.
  try {
    if (fileId >= sources.numFiles()) {
      diags.error(Loc{}, "no source buffer " + std::to_string(fileId));
      return nullptr;
    }
    try {
      return parser::parseChecked(fileId, sources, diags, limits);
    } catch (const parser::TooManyErrors &) {
      return nullptr;
    } catch (const std::bad_alloc &) {
      diags.error(Loc{fileId, 1, 1}, "out of memory while parsing this file");
      return nullptr;
    } catch (const std::exception &e) {
      diags.error(Loc{fileId, 1, 1}, std::string("internal parser error: ") + e.what());
      return nullptr;
    } catch (...) {
      diags.error(Loc{fileId, 1, 1}, "internal parser error");
      return nullptr;
    }
  } catch (...) {
    return nullptr;
  }
}
