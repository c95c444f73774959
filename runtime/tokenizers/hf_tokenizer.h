//===- tokenizers/hf_tokenizer.h - A Hugging Face pipeline as a Tokenizer -===//
//
// GPT-2, BERT and Llama-family tokenizers are all one HF pipeline with
// different parts, so one class runs them; the loaders (tokenizer_json.cpp,
// legacy_files.cpp) only decide the parts. Loaders that read a file check it
// completely, so a constructed tokenizer cannot fail on its own data later.
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_TOKENIZERS_HF_TOKENIZER_H
#define BMRT_TOKENIZERS_HF_TOKENIZER_H

#include "added_vocabulary.h"
#include "bmrt/tokenizer.h"
#include "models.h"
#include "pipeline.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace bmrt::tok {

struct HfTokenizerParts {
  const char *kind = "";   // a Tokenizer::kind() name
  std::string what;        // the file, for messages
  std::vector<NormalizerStep> normalizer;
  std::vector<PreTokenizerStep> preTokenizer;
  std::unique_ptr<BpeModel> bpe;             // exactly one of bpe, wordPiece
  std::unique_ptr<WordPieceModel> wordPiece;
  AddedVocabulary added;                     // build() is called by the tokenizer
  // The post-processor for one sequence: ids before and after it.
  std::vector<int32_t> specialPrefix, specialSuffix;
  bool hasDecoder = false;                   // none: tokens joined by spaces
  std::vector<DecoderStep> decoder;
  std::optional<int32_t> bos, eos;
};

std::unique_ptr<Tokenizer> makeHfTokenizer(HfTokenizerParts parts);

/// The id of `token` in the added tokens or the model's vocabulary.
std::optional<int32_t> findTokenId(const HfTokenizerParts &parts, const std::string &token);

} // namespace bmrt::tok

#endif // BMRT_TOKENIZERS_HF_TOKENIZER_H
