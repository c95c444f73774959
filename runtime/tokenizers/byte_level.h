//===- tokenizers/byte_level.h - GPT-2's byte-level pieces -----------------===//
//
// GPT-2 tokenizes bytes, not characters: each byte is first mapped to a
// printable character (bytes_to_unicode in OpenAI's encoder.py, HF's
// ByteLevel), so the BPE vocabulary is plain text and any byte string can be
// encoded. Before that, the text is split by GPT-2's regex
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// which is implemented here by hand (see splitGpt2) with the tables of
// unicode.h, so no regex engine is needed and the result is exactly the
// backtracking semantics HF's Oniguruma gives.
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_TOKENIZERS_BYTE_LEVEL_H
#define BMRT_TOKENIZERS_BYTE_LEVEL_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace bmrt::tok {

/// The character byte `b` stands for (as UTF-8).
const std::string &byteToUnicode(uint8_t b);
/// The byte a character stands for, or -1 if it is not one of the 256.
int unicodeToByte(char32_t c);
/// `bytes` with every byte mapped to its character.
std::string bytesToUnicode(std::string_view bytes);
/// The bytes of `text` if every character of it is one of the 256; false
/// otherwise (HF then keeps the token's own UTF-8).
bool unicodeToBytes(std::string_view text, std::string &bytes);

/// Byte ranges [begin, end) of the pieces GPT-2's regex cuts `text` into.
/// Invalid UTF-8 bytes count as "other" characters (neither letter, number
/// nor space), one per ill-formed subpart; HF cannot take such input.
void splitGpt2(std::string_view text, std::vector<std::pair<size_t, size_t>> &pieces);

} // namespace bmrt::tok

#endif // BMRT_TOKENIZERS_BYTE_LEVEL_H
