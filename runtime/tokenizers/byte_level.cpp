//===- tokenizers/byte_level.cpp - GPT-2's byte map and pre-split regex ---===//
//
// The byte map is a constant table built on first use. The regex is a
// left-to-right scan: at each position the alternatives are tried in the
// regex's order, and the one backtracking case (\s+(?!\S), which gives back
// the last space of a run so that it can lead the next word) is decided by
// looking at the run's end. Every alternative consumes at least one
// character, so the scan always advances.
//
//===----------------------------------------------------------------------===//
#include "byte_level.h"

#include "unicode.h"

#include <array>

namespace bmrt::tok {

namespace {

struct ByteMap {
  std::array<std::string, 256> toUnicode;
  std::array<char32_t, 256> codePoint;
};

// bytes_to_unicode(): printable Latin-1 bytes map to themselves, the other
// 68 to U+0100.. in byte order.
const ByteMap &byteMap() {
  static const ByteMap map = [] {
    ByteMap m;
    char32_t next = 256;
    for (int b = 0; b < 256; ++b) {
      bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE);
      m.codePoint[b] = printable ? (char32_t)b : next++;
      unicode::appendUtf8(m.toUnicode[b], m.codePoint[b]);
    }
    return m;
  }();
  return map;
}

enum class CharClass : uint8_t { Letter, Number, Space, Other };

struct Unit {
  size_t pos;
  uint32_t length;
  CharClass cls;
  char32_t cp; // U+FFFD for an ill-formed subpart
};

CharClass classify(const unicode::Utf8Unit &u) {
  if (!u.valid)
    return CharClass::Other;
  uint32_t flags = unicode::charFlags(u.cp);
  if (flags & unicode::kLetter)
    return CharClass::Letter;
  if (flags & unicode::kNumber)
    return CharClass::Number;
  if (flags & unicode::kWhiteSpace)
    return CharClass::Space;
  return CharClass::Other;
}

// Length in units of the contraction ('s 't 're 've 'm 'll 'd, lower case
// only, as in the regex) starting at unit i, or 0.
size_t contractionLength(const std::vector<Unit> &units, size_t i) {
  auto at = [&](size_t k) -> char32_t { return k < units.size() ? units[k].cp : 0; };
  if (at(i) != '\'')
    return 0;
  char32_t a = at(i + 1), b = at(i + 2);
  if (a == 's' || a == 't' || a == 'm' || a == 'd')
    return 2;
  if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l'))
    return 3;
  return 0;
}

} // namespace

const std::string &byteToUnicode(uint8_t b) { return byteMap().toUnicode[b]; }

int unicodeToByte(char32_t c) {
  if (c < 256) {
    bool printable = (c >= '!' && c <= '~') || (c >= 0xA1 && c <= 0xAC) || (c >= 0xAE);
    return printable ? (int)c : -1;
  }
  const ByteMap &m = byteMap();
  if (c < 256 + 68) {
    for (int b = 0; b < 256; ++b)
      if (m.codePoint[b] == c)
        return b;
  }
  return -1;
}

std::string bytesToUnicode(std::string_view bytes) {
  const ByteMap &m = byteMap();
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char b : bytes)
    out += m.toUnicode[(uint8_t)b];
  return out;
}

bool unicodeToBytes(std::string_view text, std::string &bytes) {
  bytes.clear();
  for (size_t pos = 0; pos < text.size();) {
    unicode::Utf8Unit u = unicode::decodeUtf8(text, pos);
    int b = u.valid ? unicodeToByte(u.cp) : -1;
    if (b < 0)
      return false;
    bytes += (char)b;
    pos += u.length;
  }
  return true;
}

void splitGpt2(std::string_view text, std::vector<std::pair<size_t, size_t>> &pieces) {
  std::vector<Unit> units;
  units.reserve(text.size());
  for (size_t pos = 0; pos < text.size();) {
    unicode::Utf8Unit u = unicode::decodeUtf8(text, pos);
    units.push_back({pos, u.length, classify(u), u.cp});
    pos += u.length;
  }
  const size_t n = units.size();
  auto emit = [&](size_t from, size_t to) { // unit indices, to exclusive
    size_t end = to < n ? units[to].pos : text.size();
    pieces.emplace_back(units[from].pos, end);
  };
  auto runEnd = [&](size_t from, CharClass cls) {
    size_t k = from;
    while (k < n && units[k].cls == cls)
      ++k;
    return k;
  };
  size_t i = 0;
  while (i < n) {
    // 's|'t|'re|'ve|'m|'ll|'d
    if (size_t len = contractionLength(units, i)) {
      emit(i, i + len);
      i += len;
      continue;
    }
    // ' ?\p{L}+', ' ?\p{N}+', ' ?[^\s\p{L}\p{N}]+': the optional space is
    // U+0020 only and is taken when a run of the class follows it.
    size_t start = i;
    if (units[i].cp == ' ' && i + 1 < n && units[i + 1].cls != CharClass::Space)
      ++start;
    CharClass cls = units[start].cls;
    if (cls != CharClass::Space) {
      size_t end = runEnd(start, cls);
      emit(i, end);
      i = end;
      continue;
    }
    // '\s+(?!\S)': the whole run if it ends the text, else all but its last
    // character (which must stay before the non-space); a single space
    // before a non-space falls through to '\s+'.
    size_t end = runEnd(i, CharClass::Space);
    if (end < n && end - i >= 2)
      --end;
    emit(i, end);
    i = end;
  }
}

} // namespace bmrt::tok
