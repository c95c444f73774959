//===- bmrt/tokens.h - Training data: token files, batches, BPE training ---===//
//
// Training reads a corpus that was tokenized once, ahead of time, by
// `bmb-tokenize`, into a token file:
//
//   bytes  0..7   magic "BMBTOK1\0"
//          8..11  version (uint32, 1)
//         12..15  bytes per id (uint32): 2 (uint16) when vocab <= 65536, else 4
//         16..23  count: number of ids (uint64)
//         24..31  vocab size (uint64); every id is < vocab
//         32..39  checksum (uint64): FNV-1a 64 over the id bytes
//         40..63  zero
//         64..    the ids, little-endian
//
// Files are written atomically (temp file, fsync, rename) and read by mmap.
// Opening validates everything (size, magic, version, width, count against
// the file size, checksum, every id < vocab) and fails with bmrt::fail
// naming the file and the problem.
//
// TokenBatches cuts B x (T+1) windows out of a token file: inputs are the
// first T ids of a window, targets the last T (inputs shifted by one). The
// last `heldOutFraction` of the file is the eval split; no window of one
// split touches a token of the other. Batches are a pure function of (seed,
// step) — random window starts come from Philox keyed by the seed with the
// step as counter, sequential order walks the split — so the data position a
// checkpoint must save is just DataState (the step, plus what identifies the
// file and the order, checked on restore).
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_TOKENS_H
#define BMRT_TOKENS_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace bmrt {

constexpr size_t kTokenFileHeaderBytes = 64;

/// The width a file for `vocabSize` ids uses: 2 or 4 bytes.
int tokenIdBytesFor(uint64_t vocabSize);

/// FNV-1a 64 of `n` bytes (the token file checksum).
uint64_t tokenChecksum(const void *data, size_t n);

/// Writes `ids` (each in [0, vocabSize)) to `file` atomically. Fails naming
/// the file on a bad id or an I/O error (the temp file is removed).
void writeTokenFile(const std::string &file, const std::vector<int32_t> &ids, uint64_t vocabSize);

/// A validated, read-only, memory-mapped token file.
class TokenFile {
public:
  /// Maps and validates `file` (see the top of this header).
  static TokenFile open(const std::string &file);
  TokenFile(TokenFile &&other) noexcept;
  TokenFile &operator=(TokenFile &&other) noexcept;
  TokenFile(const TokenFile &) = delete;
  TokenFile &operator=(const TokenFile &) = delete;
  ~TokenFile();

  const std::string &path() const { return path_; }
  uint64_t size() const { return count_; }
  uint64_t vocabSize() const { return vocab_; }
  int idBytes() const { return idBytes_; }
  uint64_t checksum() const { return checksum_; }
  /// Id number i (i < size()).
  int32_t at(uint64_t i) const;
  /// ids [begin, begin + n) into out (fails if past the end).
  void copy(uint64_t begin, uint64_t n, int32_t *out) const;
  std::vector<int32_t> all() const;

private:
  TokenFile() = default;
  std::string path_;
  const uint8_t *map_ = nullptr;
  size_t mapBytes_ = 0;
  const uint8_t *ids_ = nullptr;
  uint64_t count_ = 0, vocab_ = 0, checksum_ = 0;
  int idBytes_ = 2;
};

enum class DataSplit { Train, Eval };
enum class BatchOrder { Sequential, Random };

/// What a checkpoint saves to resume the data stream exactly.
struct DataState {
  uint64_t step = 0;      // the next batch to give
  uint64_t seed = 0;
  uint64_t fileChecksum = 0, fileCount = 0; // identifies the token file
};

class TokenBatches {
public:
  /// `file` must outlive this. batch B >= 1, seqLen T >= 1; the split must
  /// hold at least T + 1 tokens. heldOutFraction in [0, 1): the eval split
  /// is the last ceil(count * fraction) tokens (Eval needs it > 0).
  TokenBatches(const TokenFile &file, int64_t batch, int64_t seqLen, DataSplit split,
               BatchOrder order, uint64_t seed, double heldOutFraction);

  int64_t batch() const { return batch_; }
  int64_t seqLen() const { return seqLen_; }
  /// The split's token range [begin, end) in the file.
  uint64_t begin() const { return begin_; }
  uint64_t end() const { return end_; }
  /// Windows in the split (sequential order: stride T, so every token of
  /// the split but a tail shorter than T is a target once per epoch).
  uint64_t windows() const { return windows_; }
  /// Steps until sequential order has given every window once.
  uint64_t stepsPerEpoch() const { return (windows_ + batch_ - 1) / batch_; }
  /// The file offset where window b of batch `step` starts.
  uint64_t windowStart(uint64_t step, int64_t b) const;

  /// Fills inputs and targets (each B*T, row-major) for batch `step`;
  /// nothing else is read, so any step can be asked for in any order.
  void batchAt(uint64_t step, int32_t *inputs, int32_t *targets) const;
  /// batchAt(position) and advances the position.
  void next(int32_t *inputs, int32_t *targets);

  uint64_t position() const { return step_; }
  void seek(uint64_t step) { step_ = step; }
  DataState state() const;
  /// Resumes from a saved state; fails if it was saved for another file or seed.
  void restore(const DataState &state);

private:
  const TokenFile &file_;
  int64_t batch_, seqLen_;
  BatchOrder order_;
  uint64_t seed_, begin_ = 0, end_ = 0, windows_ = 0, step_ = 0;
};

/// Byte-level BPE training with GPT-2's pre-tokenization (the regex split,
/// no prefix space) on whole documents. The vocabulary is the 256 byte
/// characters (in GPT-2's order), then one token per merge, then
/// "<|endoftext|>" last; `vocabSize` counts all of them. Pairs are merged by
/// count, ties to the pair of smallest ids (as Hugging Face's BpeTrainer);
/// pairs seen fewer than `minFrequency` times are not merged.
struct BpeResult {
  std::vector<std::string> vocab;                          // by id
  std::vector<std::pair<std::string, std::string>> merges; // in rank order
  std::string maskToken; // "" or the last id's token, a special mask token (RoBERTa's <mask>)
};
BpeResult trainByteLevelBpe(const std::vector<std::string> &documents, int64_t vocabSize,
                            int64_t minFrequency);
/// Writes dir/vocab.json and dir/merges.txt (GPT-2's layout; dir is created),
/// and with a mask token dir/tokenizer_config.json naming it ("mask_token"),
/// which makes it a special token for transformers and for loadTokenizer.
void writeBpeFiles(const std::string &dir, const BpeResult &bpe);

} // namespace bmrt

#endif // BMRT_TOKENS_H
