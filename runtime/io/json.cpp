//===- io/json.cpp - A small, strict, linear-time JSON reader -------------===//
//
// Why hand-written: the runtime takes no dependencies beyond BLAS/OpenMP, and
// the files it reads (safetensors headers, shard indexes, tokenizer.json with
// 50k-entry vocabularies) need only a tree builder. One pass, one cursor:
// every byte is looked at a constant number of times, so a 2 MB tokenizer.json
// parses in milliseconds. Strict RFC 8259: no comments, no trailing commas, no
// NaN, no control characters inside strings, no lone surrogates; every error
// names the source and the byte offset, so a corrupt file is easy to find.
//
//===----------------------------------------------------------------------===//
#include "bmrt/json.h"

#include "bmrt/context.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace bmrt::json {

const Value *Value::get(std::string_view key) const {
  if (kind != Kind::Object)
    return nullptr;
  for (const auto &member : object)
    if (member.first == key)
      return &member.second;
  return nullptr;
}

namespace {

constexpr int kMaxDepth = 512;

struct Parser {
  std::string_view text;
  const std::string &what;
  size_t pos = 0;
  int depth = 0;

  [[noreturn]] void error(const std::string &problem, size_t at) const {
    fail(what + ": invalid JSON at byte " + std::to_string(at) + ": " + problem);
  }
  [[noreturn]] void error(const std::string &problem) const { error(problem, pos); }

  bool atEnd() const { return pos >= text.size(); }

  void skipSpace() {
    while (pos < text.size()) {
      char c = text[pos];
      if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
        return;
      ++pos;
    }
  }

  // A readable name for the byte at pos, for "expected X, found Y".
  std::string found() const {
    if (atEnd())
      return "end of input";
    unsigned char c = (unsigned char)text[pos];
    if (c >= 0x20 && c < 0x7f)
      return std::string("'") + (char)c + "'";
    char buf[16];
    snprintf(buf, sizeof buf, "byte 0x%02x", c);
    return buf;
  }

  void expectLiteral(std::string_view word) {
    if (text.substr(pos, word.size()) != word)
      error("expected a value, found " + found());
    pos += word.size();
  }

  void parseValue(Value &out) {
    skipSpace();
    if (atEnd())
      error("expected a value, found end of input");
    switch (text[pos]) {
    case '{': parseObject(out); return;
    case '[': parseArray(out); return;
    case '"':
      out.kind = Value::Kind::String;
      parseString(out.string);
      return;
    case 't': expectLiteral("true"); out.kind = Value::Kind::Bool; out.boolean = true; return;
    case 'f': expectLiteral("false"); out.kind = Value::Kind::Bool; out.boolean = false; return;
    case 'n': expectLiteral("null"); out.kind = Value::Kind::Null; return;
    default:
      if (text[pos] == '-' || (text[pos] >= '0' && text[pos] <= '9')) {
        parseNumber(out);
        return;
      }
      error("expected a value, found " + found());
    }
  }

  void enter() {
    if (++depth > kMaxDepth)
      error("nesting deeper than " + std::to_string(kMaxDepth) + " levels");
  }

  void parseObject(Value &out) {
    enter();
    out.kind = Value::Kind::Object;
    ++pos; // '{'
    skipSpace();
    if (!atEnd() && text[pos] == '}') {
      ++pos;
      --depth;
      return;
    }
    for (;;) {
      skipSpace();
      if (atEnd() || text[pos] != '"')
        error("expected a string key, found " + found());
      out.object.emplace_back();
      auto &member = out.object.back();
      parseString(member.first);
      skipSpace();
      if (atEnd() || text[pos] != ':')
        error("expected ':' after an object key, found " + found());
      ++pos;
      parseValue(member.second);
      skipSpace();
      if (!atEnd() && text[pos] == ',') {
        ++pos;
        continue;
      }
      if (!atEnd() && text[pos] == '}') {
        ++pos;
        break;
      }
      error("expected ',' or '}' in an object, found " + found());
    }
    --depth;
  }

  void parseArray(Value &out) {
    enter();
    out.kind = Value::Kind::Array;
    ++pos; // '['
    skipSpace();
    if (!atEnd() && text[pos] == ']') {
      ++pos;
      --depth;
      return;
    }
    for (;;) {
      out.array.emplace_back();
      parseValue(out.array.back());
      skipSpace();
      if (!atEnd() && text[pos] == ',') {
        ++pos;
        continue;
      }
      if (!atEnd() && text[pos] == ']') {
        ++pos;
        break;
      }
      error("expected ',' or ']' in an array, found " + found());
    }
    --depth;
  }

  // Four hex digits after "\u"; pos is on the first digit.
  uint32_t parseHex4() {
    if (pos + 4 > text.size())
      error("truncated \\u escape");
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) {
      char c = text[pos + i];
      v <<= 4;
      if (c >= '0' && c <= '9') v |= c - '0';
      else if (c >= 'a' && c <= 'f') v |= c - 'a' + 10;
      else if (c >= 'A' && c <= 'F') v |= c - 'A' + 10;
      else error("bad hex digit in \\u escape", pos + i);
    }
    pos += 4;
    return v;
  }

  static void appendUtf8(std::string &out, uint32_t cp) {
    if (cp < 0x80) {
      out += (char)cp;
    } else if (cp < 0x800) {
      out += (char)(0xC0 | (cp >> 6));
      out += (char)(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += (char)(0xE0 | (cp >> 12));
      out += (char)(0x80 | ((cp >> 6) & 0x3F));
      out += (char)(0x80 | (cp & 0x3F));
    } else {
      out += (char)(0xF0 | (cp >> 18));
      out += (char)(0x80 | ((cp >> 12) & 0x3F));
      out += (char)(0x80 | ((cp >> 6) & 0x3F));
      out += (char)(0x80 | (cp & 0x3F));
    }
  }

  // pos is on the opening quote. Runs of plain bytes are appended in one go
  // (the common case: vocabulary entries have no escapes).
  void parseString(std::string &out) {
    size_t start = pos;
    ++pos;
    for (;;) {
      size_t run = pos;
      while (pos < text.size()) {
        unsigned char c = (unsigned char)text[pos];
        if (c == '"' || c == '\\' || c < 0x20)
          break;
        ++pos;
      }
      out.append(text.data() + run, pos - run);
      if (atEnd())
        error("unterminated string", start);
      char c = text[pos];
      if (c == '"') {
        ++pos;
        return;
      }
      if (c != '\\')
        error("control character in a string (must be escaped)");
      size_t escape = pos;
      ++pos;
      if (atEnd())
        error("unterminated string", start);
      switch (text[pos++]) {
      case '"': out += '"'; break;
      case '\\': out += '\\'; break;
      case '/': out += '/'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 't': out += '\t'; break;
      case 'u': {
        uint32_t cp = parseHex4();
        if (cp >= 0xDC00 && cp <= 0xDFFF)
          error("lone low surrogate in \\u escape", escape);
        if (cp >= 0xD800 && cp <= 0xDBFF) {
          // A high surrogate must be followed by "\u" + a low surrogate.
          if (text.substr(pos, 2) != "\\u")
            error("high surrogate in \\u escape not followed by a low surrogate", escape);
          pos += 2;
          uint32_t low = parseHex4();
          if (low < 0xDC00 || low > 0xDFFF)
            error("high surrogate in \\u escape not followed by a low surrogate", escape);
          cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
        }
        appendUtf8(out, cp);
        break;
      }
      default:
        error("unknown escape '\\" + std::string(1, text[pos - 1]) + "'", escape);
      }
    }
  }

  // Validates the RFC 8259 grammar first (from_chars alone would accept
  // "01", "1." or "+1" style variants), then converts.
  void parseNumber(Value &out) {
    size_t start = pos;
    auto digits = [&] {
      size_t first = pos;
      while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9')
        ++pos;
      return pos - first;
    };
    if (text[pos] == '-')
      ++pos;
    if (pos < text.size() && text[pos] == '0') {
      ++pos;
      if (pos < text.size() && text[pos] >= '0' && text[pos] <= '9')
        error("leading zero in a number", start);
    } else if (digits() == 0) {
      error("expected digits in a number, found " + found());
    }
    if (pos < text.size() && text[pos] == '.') {
      ++pos;
      if (digits() == 0)
        error("expected digits after '.' in a number, found " + found());
    }
    if (pos < text.size() && (text[pos] == 'e' || text[pos] == 'E')) {
      ++pos;
      if (pos < text.size() && (text[pos] == '+' || text[pos] == '-'))
        ++pos;
      if (digits() == 0)
        error("expected digits in the exponent of a number, found " + found());
    }
    double value = 0;
    auto result = std::from_chars(text.data() + start, text.data() + pos, value);
    if (result.ec == std::errc::result_out_of_range) {
      // from_chars leaves `value` untouched on overflow and on underflow;
      // strtod tells them apart (underflow to 0 or a denormal is fine).
      std::string copy(text.substr(start, pos - start));
      value = std::strtod(copy.c_str(), nullptr);
      if (!std::isfinite(value))
        error("number out of range of a double", start);
    } else if (result.ec != std::errc() || result.ptr != text.data() + pos) {
      error("malformed number", start);
    }
    out.kind = Value::Kind::Number;
    out.number = value;
  }
};

} // namespace

Value parse(std::string_view text, const std::string &what) {
  Parser parser{text, what};
  Value root;
  parser.parseValue(root);
  parser.skipSpace();
  if (!parser.atEnd())
    parser.error("unexpected " + parser.found() + " after the top-level value");
  return root;
}

std::string quote(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += (char)c;
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += (char)c;
    }
  }
  return out + '"';
}

} // namespace bmrt::json
