//===- data/batches.cpp - B x (T+1) windows over a token file --------------===//
//
// Window b of batch `step`:
//   sequential: window number (step * B + b) mod windows, starting at
//               begin + number * T (stride T: consecutive windows share one
//               token, so every token of the split is a target once per epoch);
//   random:     begin + r mod (end - begin - T), r = 64 bits of Philox4x32-10
//               with key = seed and counter = (step, b, kDataStream).
// Both are pure functions of (seed, step), so resuming needs only the step.
//
//===----------------------------------------------------------------------===//
#include "bmrt/tokens.h"

#include "bmrt/context.h"
#include "bmrt/philox.h"

#include <cmath>

namespace bmrt {

namespace {
// Keeps data draws apart from other users of the same seed (sampling, dropout).
constexpr uint32_t kDataStream = 0x44415441u; // "DATA"
} // namespace

TokenBatches::TokenBatches(const TokenFile &file, int64_t batch, int64_t seqLen, DataSplit split,
                           BatchOrder order, uint64_t seed, double heldOutFraction)
    : file_(file), batch_(batch), seqLen_(seqLen), order_(order), seed_(seed) {
  if (batch < 1 || seqLen < 1)
    fail(file.path() + ": batch size and sequence length must be >= 1 (got " + std::to_string(batch) +
         " x " + std::to_string(seqLen) + ")");
  if (!(heldOutFraction >= 0.0 && heldOutFraction < 1.0))
    fail(file.path() + ": held-out fraction must be in [0, 1) (got " + std::to_string(heldOutFraction) +
         ")");
  uint64_t n = file.size();
  uint64_t heldOut = (uint64_t)std::ceil((double)n * heldOutFraction);
  if (heldOut > n)
    heldOut = n;
  if (split == DataSplit::Train) {
    begin_ = 0;
    end_ = n - heldOut;
  } else {
    if (heldOut == 0)
      fail(file.path() + ": the eval split is empty (held-out fraction 0)");
    begin_ = n - heldOut;
    end_ = n;
  }
  uint64_t len = end_ - begin_;
  if (len < (uint64_t)seqLen + 1)
    fail(file.path() + ": the " + std::string(split == DataSplit::Train ? "train" : "eval") +
         " split has " + std::to_string(len) + " tokens, fewer than sequence length + 1 (" +
         std::to_string(seqLen + 1) + ")");
  windows_ = (len - 1) / (uint64_t)seqLen;
}

uint64_t TokenBatches::windowStart(uint64_t step, int64_t b) const {
  if (order_ == BatchOrder::Sequential) {
    // (step * B + b) mod windows, without overflow for any step.
    uint64_t w = (uint64_t)(((unsigned __int128)step * (uint64_t)batch_ + (uint64_t)b) % windows_);
    return begin_ + w * (uint64_t)seqLen_;
  }
  const uint32_t key[2] = {(uint32_t)seed_, (uint32_t)(seed_ >> 32)};
  const uint32_t ctr[4] = {(uint32_t)step, (uint32_t)(step >> 32), (uint32_t)b, kDataStream};
  Philox4x32Block r = philox4x32_10(ctr, key);
  uint64_t bits = ((uint64_t)r.v[0] << 32) | r.v[1];
  uint64_t starts = end_ - begin_ - (uint64_t)seqLen_; // starts s with s + T < end
  return begin_ + bits % starts;
}

void TokenBatches::batchAt(uint64_t step, int32_t *inputs, int32_t *targets) const {
  for (int64_t b = 0; b < batch_; ++b) {
    uint64_t start = windowStart(step, b);
    int32_t *in = inputs + b * seqLen_, *out = targets + b * seqLen_;
    for (int64_t t = 0; t < seqLen_; ++t) {
      in[t] = file_.at(start + (uint64_t)t);
      out[t] = file_.at(start + (uint64_t)t + 1);
    }
  }
}

void TokenBatches::next(int32_t *inputs, int32_t *targets) {
  batchAt(step_, inputs, targets);
  ++step_;
}

DataState TokenBatches::state() const {
  DataState s;
  s.step = step_;
  s.seed = seed_;
  s.fileChecksum = file_.checksum();
  s.fileCount = file_.size();
  return s;
}

void TokenBatches::restore(const DataState &s) {
  if (s.fileChecksum != file_.checksum() || s.fileCount != file_.size())
    fail(file_.path() + ": the saved data position belongs to another token file (" +
         std::to_string(s.fileCount) + " ids, checksum " + std::to_string(s.fileChecksum) + ")");
  if (s.seed != seed_)
    fail(file_.path() + ": the saved data position was made with seed " + std::to_string(s.seed) +
         ", not " + std::to_string(seed_));
  step_ = s.step;
}

} // namespace bmrt
