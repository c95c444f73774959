//===- bmrt/tokenizer.h - Text <-> token ids ------------------------------===//
//
// The tokenizers the executables use: GPT-2 byte-level BPE (vocab.json +
// merges.txt, or tokenizer.json), BERT WordPiece (vocab.txt, or
// tokenizer.json), SentencePiece-style BPE from a Llama-family
// tokenizer.json, and a byte-level tokenizer (ids 0..255 are bytes) for
// models trained here. Files are found in a checkpoint directory or named
// directly. Bad files fail with bmrt::fail naming the file and the problem.
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_TOKENIZER_H
#define BMRT_TOKENIZER_H

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace bmrt {

class Tokenizer {
public:
  virtual ~Tokenizer() = default;
  /// "gpt2-bpe", "wordpiece", "sentencepiece-bpe", "byte".
  virtual const char *kind() const = 0;
  /// Token ids of `text`. With addSpecial, the model's framing tokens are
  /// added as Hugging Face does by default (BERT: [CLS] ... [SEP]; Llama:
  /// <s> first; GPT-2 and byte: none).
  virtual std::vector<int32_t> encode(std::string_view text, bool addSpecial) const = 0;
  /// The text of ids, as Hugging Face's decode(skip_special_tokens=True).
  virtual std::string decode(const std::vector<int32_t> &ids) const = 0;
  /// The raw bytes one token stands for when streamed (may be a partial
  /// UTF-8 sequence for byte-level BPE; the caller buffers). Special tokens
  /// give "".
  virtual std::string tokenBytes(int32_t id) const = 0;
  virtual int64_t vocabSize() const = 0;
  virtual std::optional<int32_t> eosId() const = 0;
  virtual std::optional<int32_t> bosId() const = 0;
};

/// `path` is a directory (tokenizer.json, else vocab.json + merges.txt, else
/// vocab.txt, else tokenizer.model is refused with a clear message) or one of
/// those files. `hint` is "", "gpt2", "bert", "llama" or "byte" ("byte"
/// needs no files).
std::unique_ptr<Tokenizer> loadTokenizer(const std::string &path, const std::string &hint);

/// The byte-level tokenizer (vocab 256 + optional EOS id 256 when withEos).
std::unique_ptr<Tokenizer> makeByteTokenizer(bool withEos);

} // namespace bmrt

#endif // BMRT_TOKENIZER_H
