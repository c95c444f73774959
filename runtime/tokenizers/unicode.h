//===- tokenizers/unicode.h - UTF-8 and the Unicode data tokenizers need --===//
//
// Tokenizers must split text exactly as Hugging Face's `tokenizers` does,
// so the character classes are not the C library's (locale dependent) but
// tables generated from Unicode 14 with the differences HF's own frozen
// tables have (see scripts/gen-unicode-tables.py). Everything here is pure:
// functions of their arguments and constant tables.
//
// Invalid UTF-8: decodeUtf8 reports each maximal ill-formed subpart as one
// error unit (the Unicode "substitution of maximal subparts" practice that
// Rust's String::from_utf8_lossy and Python's errors="replace" follow), so
// replacing them by U+FFFD gives the same string both would.
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_TOKENIZERS_UNICODE_H
#define BMRT_TOKENIZERS_UNICODE_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace bmrt::unicode {

constexpr char32_t kReplacementChar = 0xFFFD;

/// Bits of charFlags(); the generator writes the same values.
enum CharFlag : uint32_t {
  kLetter = 1,           // \p{L} (Unicode 14), GPT-2's letters
  kNumber = 2,           // \p{N} (Unicode 14), GPT-2's numbers
  kWhiteSpace = 4,       // White_Space: regex \s and Rust char::is_whitespace
  kBertPunctuation = 8,  // ASCII punctuation or P* as HF's BERT sees it
  kBertNonspacingMark = 16, // Mn as HF's BERT strip_accents sees it
  kBertControl = 32,     // Cc, Cf, Co as HF's BERT clean_text sees it
  kWordChar = 64,        // regex \w (added tokens' single_word)
};

uint32_t charFlags(char32_t c);
inline bool isWhiteSpace(char32_t c) { return charFlags(c) & kWhiteSpace; }

/// One decoded unit: a code point, or one ill-formed subpart (`valid`
/// false, `cp` = U+FFFD); `length` is its size in bytes.
struct Utf8Unit {
  char32_t cp;
  uint32_t length;
  bool valid;
};
/// The unit that starts at text[pos] (pos < text.size()).
Utf8Unit decodeUtf8(std::string_view text, size_t pos);

void appendUtf8(std::string &out, char32_t c);
/// `text` with every ill-formed subpart replaced by U+FFFD.
std::string toValidUtf8(std::string_view text);
/// Code points of valid UTF-8 `text` (ill-formed parts become U+FFFD).
std::vector<char32_t> toCodePoints(std::string_view text);
std::string fromCodePoints(const std::vector<char32_t> &cps);

/// Full lower-case mapping of one code point (no context, as Rust's
/// char::to_lowercase): up to 3 code points appended to `out`.
void appendLowercase(std::vector<char32_t> &out, char32_t c);
/// Canonical decomposition (NFD) with canonical reordering of marks.
std::vector<char32_t> nfd(const std::vector<char32_t> &cps);

/// The CJK ideograph blocks BERT pads with spaces.
bool isBertChineseChar(char32_t c);

} // namespace bmrt::unicode

#endif // BMRT_TOKENIZERS_UNICODE_H
