//===- tokenizers/pipeline.h - The stages of a Hugging Face tokenizer -----===//
//
// HF's `tokenizers` runs text through normalizer -> pre-tokenizer -> model
// -> post-processor, and ids back through a decoder chain. A tokenizer.json
// names one component of each kind; vocab.txt or vocab.json + merges.txt
// imply the ones BERT and GPT-2 use. Only the component types the supported
// families need exist here; tokenizer_json.cpp refuses the others by name.
// Each step is plain data plus one function that applies a list of them.
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_TOKENIZERS_PIPELINE_H
#define BMRT_TOKENIZERS_PIPELINE_H

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace bmrt::tok {

struct NormalizerStep {
  enum class Kind { Prepend, Replace, Lowercase, Nfd, StripAccents, Bert };
  Kind kind = Kind::Lowercase;
  std::string pattern, content; // Replace: pattern -> content; Prepend: content
  // Bert (BertNormalizer); stripAccents is already resolved from `lowercase`
  // when the file leaves it null.
  bool cleanText = true, handleChineseChars = true, stripAccents = true, lowercase = true;
};
/// Applies the steps in order to valid UTF-8 `text`.
std::string normalize(const std::vector<NormalizerStep> &steps, std::string text);

/// One piece of text on its way to the model. `atStart`: it begins at byte 0
/// of the caller's text (Metaspace's prepend_scheme "first" needs it).
struct Piece {
  std::string text;
  bool atStart = false;
};

struct PreTokenizerStep {
  enum class Kind { ByteLevel, Bert, Metaspace };
  enum class Prepend { Always, First, Never };
  Kind kind = Kind::ByteLevel;
  bool addPrefixSpace = false, useRegex = true; // ByteLevel
  std::string replacement;                      // Metaspace, "▁"
  Prepend prependScheme = Prepend::Always;      // Metaspace
  bool split = true;                            // Metaspace
};
/// Splits every piece by every step in order; empty pieces are dropped (as
/// HF drops them). ByteLevel also maps the pieces' bytes to characters.
void preTokenize(const std::vector<PreTokenizerStep> &steps, std::vector<Piece> &pieces);

struct DecoderStep {
  enum class Kind { ByteLevel, WordPiece, Metaspace, Replace, ByteFallback, Fuse, Strip };
  Kind kind = Kind::Fuse;
  std::string pattern, content; // Replace; Strip: content is one character
  std::string prefix;           // WordPiece, "##"
  bool cleanup = true;          // WordPiece
  std::string replacement;      // Metaspace, "▁"
  bool prependNever = false;    // Metaspace prepend_scheme == "never"
  size_t stripStart = 0, stripStop = 0; // Strip
};
/// HF's decoder chain: each step maps the token list, the result is joined.
/// `streaming` decodes one token of a stream: no token is treated as the
/// first one (no Strip, no dropped leading "▁", WordPiece words get their
/// space) and byte tokens give their raw byte instead of U+FFFD.
std::string decodeTokens(const std::vector<DecoderStep> &steps, std::vector<std::string> tokens,
                         bool streaming);

} // namespace bmrt::tok

#endif // BMRT_TOKENIZERS_PIPELINE_H
