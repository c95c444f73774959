//===- ParserLiterals.cpp - Decoding and checking literal tokens ----------===//
//
// Literal values never go through std::stoll/strtod's error-prone paths:
// integers are accumulated digit by digit with overflow checks, floats use
// the locale-independent std::from_chars, and string escapes are decoded
// here so that a bad escape is reported at its own column.
//
//===----------------------------------------------------------------------===//
#include "lang/ParserImpl.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>

namespace bmb::parser {

std::string quoted(std::string_view text, size_t maxBytes) {
  std::string out = "'";
  if (text.size() <= maxBytes) {
    out.append(text);
  } else {
    // Cut on a UTF-8 character boundary so the message stays valid text.
    size_t cut = maxBytes;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80)
      --cut;
    out.append(text.substr(0, cut));
    out.append("...");
  }
  out.push_back('\'');
  return out;
}

static constexpr int64_t kMaxInt = std::numeric_limits<int64_t>::max();

std::string decodeInt(std::string_view text, int64_t &value) {
  value = 0;
  for (char c : text) {
    int digit = c - '0';
    if (digit < 0 || digit > 9)
      return "invalid integer literal " + quoted(text);
    if (value > (kMaxInt - digit) / 10) {
      value = 0;
      return "integer literal " + quoted(text) + " is too large (max " + std::to_string(kMaxInt) +
             ")";
    }
    value = value * 10 + digit;
  }
  return {};
}

std::string decodeFloat(std::string_view text, double &value) {
  value = 0;
  const char *end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec == std::errc::result_out_of_range || (ec == std::errc() && !std::isfinite(value))) {
    value = 0;
    return "floating-point literal " + quoted(text) + " is out of range";
  }
  if (ec != std::errc() || ptr != end) {
    value = 0;
    return "invalid floating-point literal " + quoted(text);
  }
  return {};
}

namespace {
struct SizeUnit {
  std::string_view name;
  int64_t bytes;
};
constexpr SizeUnit kUnits[] = {
    {"KiB", int64_t(1) << 10},
    {"MiB", int64_t(1) << 20},
    {"GiB", int64_t(1) << 30},
    {"TiB", int64_t(1) << 40},
    {"KB", 1000},
    {"MB", 1000 * 1000},
    {"GB", 1000 * 1000 * 1000},
    {"TB", int64_t(1000) * 1000 * 1000 * 1000},
};
} // namespace

std::string decodeSize(std::string_view text, int64_t &value) {
  value = 0;
  size_t digitsEnd = 0;
  while (digitsEnd < text.size() &&
         ((text[digitsEnd] >= '0' && text[digitsEnd] <= '9') || text[digitsEnd] == '.'))
    ++digitsEnd;
  std::string_view number = text.substr(0, digitsEnd);
  std::string_view unitName = text.substr(digitsEnd);
  int64_t unit = 0;
  for (const SizeUnit &u : kUnits)
    if (u.name == unitName)
      unit = u.bytes;
  if (!unit)
    return "invalid size literal " + quoted(text);

  // value = (whole + frac / 10^k) * unit, computed exactly in integers.
  std::string_view whole = number.substr(0, number.find('.'));
  std::string_view frac;
  if (whole.size() < number.size())
    frac = number.substr(whole.size() + 1);
  while (!frac.empty() && frac.back() == '0')
    frac.remove_suffix(1);
  const std::string tooLarge =
      "size literal " + quoted(text) + " is too large (max " + std::to_string(kMaxInt) + " bytes)";
  int64_t w = 0;
  if (!decodeInt(whole, w).empty() || __builtin_mul_overflow(w, unit, &value)) {
    value = 0;
    return tooLarge;
  }
  if (frac.empty())
    return {};
  int64_t f = 0, scale = 1;
  for (char c : frac) {
    if (__builtin_mul_overflow(scale, 10, &scale) || __builtin_mul_overflow(f, 10, &f) ||
        __builtin_add_overflow(f, c - '0', &f)) {
      value = 0;
      return "size literal " + quoted(text) + " is not a whole number of bytes";
    }
  }
  // f * unit may overflow where the quotient does not: divide first when exact.
  int64_t fracBytes = 0;
  if (unit % scale == 0) {
    fracBytes = f * (unit / scale);
  } else if (__builtin_mul_overflow(f, unit, &fracBytes) || fracBytes % scale != 0) {
    value = 0;
    return "size literal " + quoted(text) + " is not a whole number of bytes";
  } else {
    fracBytes /= scale;
  }
  if (__builtin_add_overflow(value, fracBytes, &value)) {
    value = 0;
    return tooLarge;
  }
  return {};
}

std::string badNumberMessage(std::string_view text) {
  size_t i = 0;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9')
    ++i;
  std::string_view suffix = text.substr(i);
  if (!suffix.empty() && suffix.size() <= 3 && (suffix.back() == 'B' || suffix.back() == 'b'))
    return "unknown size unit " + quoted(suffix) + " in " + quoted(text) +
           " (use KB, MB, GB, TB, KiB, MiB, GiB or TiB)";
  if (suffix.size() >= 1 && (suffix[0] == 'x' || suffix[0] == 'X') && i == 1 && text[0] == '0')
    return "invalid number " + quoted(text) + ": hexadecimal literals are not supported";
  return "invalid number " + quoted(text) + ": a number cannot be followed by letters";
}

static int hexValue(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

static void appendUtf8(std::string &out, uint32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

std::string decodeString(std::string_view text, std::string &value, size_t &errorOffset) {
  value.clear();
  errorOffset = 0;
  // The lexer guarantees the quotes; be defensive anyway.
  if (text.size() < 2 || text.front() != '"' || text.back() != '"')
    return "unterminated string literal";
  const size_t end = text.size() - 1;
  for (size_t i = 1; i < end; ++i) {
    char c = text[i];
    if (c != '\\') {
      value.push_back(c);
      continue;
    }
    size_t escStart = i;
    char e = i + 1 < end ? text[i + 1] : '\0';
    ++i;
    switch (e) {
    case 'n':
      value.push_back('\n');
      continue;
    case 't':
      value.push_back('\t');
      continue;
    case 'r':
      value.push_back('\r');
      continue;
    case '"':
      value.push_back('"');
      continue;
    case '\\':
      value.push_back('\\');
      continue;
    case 'u':
      break;
    default: {
      errorOffset = escStart;
      // Show the whole (possibly multi-byte) character after the backslash.
      size_t len = 1;
      while (i + len < end && (static_cast<unsigned char>(text[i + len]) & 0xC0) == 0x80)
        ++len;
      return "unknown escape sequence " + quoted(text.substr(escStart, 1 + len)) +
             " in string literal";
    }
    }
    // \u{X...}: 1 to 6 hex digits naming a Unicode scalar value.
    const std::string form = " (write \\u{...} with 1 to 6 hex digits)";
    errorOffset = escStart;
    if (i + 1 >= end || text[i + 1] != '{')
      return "invalid unicode escape" + form;
    size_t j = i + 2;
    uint32_t cp = 0;
    size_t digits = 0;
    while (j < end && hexValue(text[j]) >= 0) {
      if (++digits > 6)
        return "invalid unicode escape" + form;
      cp = cp * 16 + static_cast<uint32_t>(hexValue(text[j]));
      ++j;
    }
    if (digits == 0 || j >= end || text[j] != '}')
      return "invalid unicode escape" + form;
    if (cp == 0 || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
      return "unicode escape " + quoted(text.substr(escStart, j + 1 - escStart)) +
             " is not a valid character";
    appendUtf8(value, cp);
    i = j;
  }
  errorOffset = 0;
  return {};
}

} // namespace bmb::parser
