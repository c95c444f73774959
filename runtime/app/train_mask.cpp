//===- app/train_mask.cpp - BERT's masked-LM batches ----------------------===//
#include "app/train_mask.h"

#include "bmrt/philox.h"

namespace bmrt {

namespace {
// Counter word 3: keeps these draws apart from dropout's (same seed).
constexpr uint32_t kMaskStream = 0x4D4C4D31u; // "MLM1"
constexpr int32_t kIgnore = -100;

double unit(uint32_t hi, uint32_t lo) {
  uint64_t bits = (((uint64_t)hi << 32) | lo) >> 11; // 53 bits
  return (double)bits * (1.0 / 9007199254740992.0);
}
} // namespace

void maskTokens(const TrainInfo &t, int64_t vocab, uint64_t seed, int64_t step,
                uint32_t microStep, int32_t *tokens, int32_t *targets, int64_t rows) {
  const uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
  for (int64_t i = 0; i < rows; ++i) {
    const uint32_t ctr[4] = {(uint32_t)i, microStep, (uint32_t)step, kMaskStream};
    Philox4x32Block r = philox4x32_10(ctr, key);
    if (unit(r.v[0], r.v[1]) >= t.maskProb) {
      targets[i] = kIgnore;
      continue;
    }
    targets[i] = tokens[i];
    // 80% [MASK], 10% a random id, 10% unchanged.
    const double how = (double)r.v[2] * (1.0 / 4294967296.0);
    if (how < 0.8)
      tokens[i] = (int32_t)t.maskId;
    else if (how < 0.9)
      tokens[i] = (int32_t)(((uint64_t)r.v[3] * (uint64_t)vocab) >> 32); // uniform in [0, vocab)
  }
}

} // namespace bmrt
