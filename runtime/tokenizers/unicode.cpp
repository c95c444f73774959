//===- tokenizers/unicode.cpp - UTF-8 and the Unicode data tokenizers need ===//
//
// Table lookups are binary searches over sorted ranges: a few thousand
// entries, about a dozen probes per character, no start-up cost and no
// mutable state. The tables come from unicode_tables.inc (generated; see
// scripts/gen-unicode-tables.py for the Unicode version and why some entries
// differ from plain Unicode 14).
//
//===----------------------------------------------------------------------===//
#include "unicode.h"

#include <algorithm>

namespace bmrt::unicode {

namespace {

struct CharClassRange {
  uint32_t first, last, flags;
};
struct LowercaseEntry {
  uint32_t cp;
  uint32_t lower[3]; // 0-terminated when shorter
};
struct DecompositionEntry {
  uint32_t cp, offset, length; // into kDecompositionData
};
struct CombiningClassRange {
  uint32_t first, last, ccc;
};

#include "unicode_tables.inc"

template <typename Range, size_t N>
const Range *findRange(const Range (&table)[N], char32_t c) {
  const Range *end = table + N;
  const Range *it = std::upper_bound(table, end, (uint32_t)c,
                                     [](uint32_t v, const Range &r) { return v < r.first; });
  if (it == table)
    return nullptr;
  --it;
  return c <= it->last ? it : nullptr;
}

template <typename Entry, size_t N>
const Entry *findEntry(const Entry (&table)[N], char32_t c) {
  const Entry *end = table + N;
  const Entry *it = std::lower_bound(table, end, (uint32_t)c,
                                     [](const Entry &e, uint32_t v) { return e.cp < v; });
  return it != end && it->cp == c ? it : nullptr;
}

uint32_t combiningClass(char32_t c) {
  const CombiningClassRange *r = findRange(kCombiningClass, c);
  return r ? r->ccc : 0;
}

// Hangul syllables decompose by formula (Unicode 3.12), not by table.
constexpr char32_t kHangulFirst = 0xAC00, kHangulLast = 0xD7A3;
constexpr char32_t kLeadBase = 0x1100, kVowelBase = 0x1161, kTrailBase = 0x11A7;
constexpr uint32_t kVowelCount = 21, kTrailCount = 28;

void appendDecomposition(std::vector<char32_t> &out, char32_t c) {
  if (c >= kHangulFirst && c <= kHangulLast) {
    uint32_t index = c - kHangulFirst;
    out.push_back(kLeadBase + index / (kVowelCount * kTrailCount));
    out.push_back(kVowelBase + (index % (kVowelCount * kTrailCount)) / kTrailCount);
    if (index % kTrailCount)
      out.push_back(kTrailBase + index % kTrailCount);
    return;
  }
  // Table entries are already fully (recursively) decomposed.
  if (const DecompositionEntry *e = findEntry(kDecomposition, c)) {
    out.insert(out.end(), kDecompositionData + e->offset,
               kDecompositionData + e->offset + e->length);
    return;
  }
  out.push_back(c);
}

} // namespace

uint32_t charFlags(char32_t c) {
  const CharClassRange *r = findRange(kCharClassRanges, c);
  return r ? r->flags : 0;
}

Utf8Unit decodeUtf8(std::string_view text, size_t pos) {
  auto byte = [&](size_t i) { return (uint8_t)text[i]; };
  uint8_t b0 = byte(pos);
  if (b0 < 0x80)
    return {b0, 1, true};
  // Lead byte: sequence length and the allowed range of the second byte
  // (Unicode Table 3-7); the rest are always 80..BF.
  uint32_t length;
  uint8_t lo = 0x80, hi = 0xBF;
  char32_t cp;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    length = 2, cp = b0 & 0x1F;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    length = 3, cp = b0 & 0x0F;
    if (b0 == 0xE0)
      lo = 0xA0;
    if (b0 == 0xED)
      hi = 0x9F; // no surrogates
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    length = 4, cp = b0 & 0x07;
    if (b0 == 0xF0)
      lo = 0x90;
    if (b0 == 0xF4)
      hi = 0x8F; // nothing above U+10FFFF
  } else {
    return {kReplacementChar, 1, false};
  }
  for (uint32_t i = 1; i < length; ++i) {
    if (pos + i >= text.size())
      return {kReplacementChar, i, false};
    uint8_t b = byte(pos + i);
    if (b < lo || b > hi)
      return {kReplacementChar, i, false};
    cp = (cp << 6) | (b & 0x3F);
    lo = 0x80, hi = 0xBF;
  }
  return {cp, length, true};
}

void appendUtf8(std::string &out, char32_t c) {
  if (c < 0x80) {
    out += (char)c;
  } else if (c < 0x800) {
    out += (char)(0xC0 | (c >> 6));
    out += (char)(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    out += (char)(0xE0 | (c >> 12));
    out += (char)(0x80 | ((c >> 6) & 0x3F));
    out += (char)(0x80 | (c & 0x3F));
  } else {
    out += (char)(0xF0 | (c >> 18));
    out += (char)(0x80 | ((c >> 12) & 0x3F));
    out += (char)(0x80 | ((c >> 6) & 0x3F));
    out += (char)(0x80 | (c & 0x3F));
  }
}

std::string toValidUtf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t pos = 0; pos < text.size();) {
    Utf8Unit u = decodeUtf8(text, pos);
    if (u.valid)
      out.append(text.data() + pos, u.length);
    else
      appendUtf8(out, kReplacementChar);
    pos += u.length;
  }
  return out;
}

std::vector<char32_t> toCodePoints(std::string_view text) {
  std::vector<char32_t> out;
  out.reserve(text.size());
  for (size_t pos = 0; pos < text.size();) {
    Utf8Unit u = decodeUtf8(text, pos);
    out.push_back(u.cp);
    pos += u.length;
  }
  return out;
}

std::string fromCodePoints(const std::vector<char32_t> &cps) {
  std::string out;
  out.reserve(cps.size());
  for (char32_t c : cps)
    appendUtf8(out, c);
  return out;
}

void appendLowercase(std::vector<char32_t> &out, char32_t c) {
  if (c < 0x80) {
    out.push_back(c >= 'A' && c <= 'Z' ? c + 32 : c);
    return;
  }
  const LowercaseEntry *e = findEntry(kLowercase, c);
  if (!e) {
    out.push_back(c);
    return;
  }
  for (uint32_t l : e->lower)
    if (l)
      out.push_back(l);
}

std::vector<char32_t> nfd(const std::vector<char32_t> &cps) {
  std::vector<char32_t> out;
  out.reserve(cps.size());
  for (char32_t c : cps)
    appendDecomposition(out, c);
  // Canonical ordering: within each run of non-starters, a stable sort by
  // combining class. Runs are short, so insertion sort.
  for (size_t i = 1; i < out.size(); ++i) {
    uint32_t ccc = combiningClass(out[i]);
    if (ccc == 0)
      continue;
    size_t j = i;
    while (j > 0) {
      uint32_t prev = combiningClass(out[j - 1]);
      if (prev == 0 || prev <= ccc)
        break;
      std::swap(out[j - 1], out[j]);
      --j;
    }
  }
  return out;
}

bool isBertChineseChar(char32_t c) {
  // The blocks BERT's BasicTokenizer (and HF's BertNormalizer) list.
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) ||
         (c >= 0x20000 && c <= 0x2A6DF) || (c >= 0x2A700 && c <= 0x2B73F) ||
         (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B920 && c <= 0x2CEAF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

} // namespace bmrt::unicode
