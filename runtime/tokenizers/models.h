//===- tokenizers/models.h - BPE and WordPiece: one piece -> token ids ----===//
//
// The model is the part of a tokenizer that maps one pre-tokenized piece to
// ids. BPE (GPT-2, SentencePiece-style Llama files) starts from characters
// and applies merges by rank; WordPiece (BERT) takes the longest vocabulary
// entry at each position. Both follow HF's implementations, including their
// unknown-token rules, because those decide the ids.
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_TOKENIZERS_MODELS_H
#define BMRT_TOKENIZERS_MODELS_H

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace bmrt::tok {

using Vocab = std::unordered_map<std::string, int32_t>;

struct BpeOptions {
  std::optional<std::string> unkToken;
  std::string continuingSubwordPrefix, endOfWordSuffix;
  bool fuseUnk = false;
  bool byteFallback = false; // unknown characters become <0xNN> tokens
  bool ignoreMerges = false; // a piece that is a vocabulary entry is taken whole
};

class BpeModel {
public:
  /// `what` names the file in errors: a merge naming a token that is not in
  /// the vocabulary, or whose result is not, fails.
  BpeModel(Vocab vocab, const std::vector<std::pair<std::string, std::string>> &merges,
           BpeOptions options, const std::string &what);
  /// Appends the ids of one piece.
  void tokenize(std::string_view piece, std::vector<int32_t> &ids) const;
  const Vocab &vocab() const { return vocab_; }

private:
  struct Merge {
    uint32_t rank;
    int32_t newId;
  };
  static uint64_t pairKey(int32_t a, int32_t b) { return ((uint64_t)(uint32_t)a << 32) | (uint32_t)b; }
  std::vector<int32_t> mergeWord(std::string_view piece) const;

  Vocab vocab_;
  std::unordered_map<uint64_t, Merge> merges_;
  BpeOptions options_;
  std::optional<int32_t> unkId_;
  // Pieces recur (words), so their ids are cached; bounded like HF's.
  mutable std::mutex cacheMutex_;
  mutable std::unordered_map<std::string, std::vector<int32_t>> cache_;
};

class WordPieceModel {
public:
  WordPieceModel(Vocab vocab, std::string unkToken, std::string prefix,
                 size_t maxInputCharsPerWord, const std::string &what);
  void tokenize(std::string_view piece, std::vector<int32_t> &ids) const;
  const Vocab &vocab() const { return vocab_; }

private:
  Vocab vocab_;
  int32_t unkId_;
  std::string prefix_;
  size_t maxInputCharsPerWord_;
  size_t longestEntry_ = 0; // bytes; no match can be longer
};

} // namespace bmrt::tok

#endif // BMRT_TOKENIZERS_MODELS_H
