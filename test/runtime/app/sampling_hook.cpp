//===- sampling_hook.cpp - extern "C" access to sampling for Python tests --===//
//
// test_sampling_hf.py loads this library with ctypes and feeds the same
// logits to our sampler and to transformers' warpers. Errors come back as a
// return value plus a message in the caller's buffer (no exceptions cross
// the C boundary).
//
//===----------------------------------------------------------------------===//
#include "bmrt/philox.h"
#include "bmrt/sampling.h"

#include <cstring>

namespace {

bmrt::SamplingConfig makeConfig(int mode, double temperature, int64_t topK, double topP,
                                uint64_t seed) {
  bmrt::SamplingConfig c;
  c.mode = (bmrt::SamplingMode)mode;
  c.temperature = temperature;
  c.topK = topK;
  c.topP = topP;
  c.seed = seed;
  return c;
}

void copyMessage(const std::exception &e, char *error, int64_t errorLen) {
  if (errorLen > 0) {
    std::strncpy(error, e.what(), (size_t)errorLen - 1);
    error[errorLen - 1] = '\0';
  }
}

} // namespace

extern "C" {

/// The filtered distribution (probs[vocab]); returns the kept count or -1.
int64_t bmrt_test_filter(int mode, double temperature, int64_t topK, double topP,
                         const float *logits, int64_t vocab, double *probs, char *error,
                         int64_t errorLen) {
  try {
    bmrt::Sampler s = bmrt::makeSampler(makeConfig(mode, temperature, topK, topP, 0), vocab);
    int64_t kept = bmrt::filterDistribution(s, logits);
    std::memcpy(probs, s.probs.data(), (size_t)vocab * sizeof(double));
    return kept;
  } catch (const std::exception &e) {
    copyMessage(e, error, errorLen);
    return -1;
  }
}

/// Tokens sampled at steps first .. first+count-1 from the same logits.
int64_t bmrt_test_sample_steps(int mode, double temperature, int64_t topK, double topP,
                               uint64_t seed, uint64_t first, int64_t count,
                               const float *logits, int64_t vocab, int32_t *tokens,
                               char *error, int64_t errorLen) {
  try {
    bmrt::Sampler s = bmrt::makeSampler(makeConfig(mode, temperature, topK, topP, seed), vocab);
    bmrt::Context ctx;
    for (int64_t i = 0; i < count; i++)
      tokens[i] = bmrt::sampleToken(ctx, s, logits, first + (uint64_t)i);
    return count;
  } catch (const std::exception &e) {
    copyMessage(e, error, errorLen);
    return -1;
  }
}

void bmrt_test_philox(const uint32_t *ctr, const uint32_t *key, uint32_t *out) {
  bmrt::Philox4x32Block b = bmrt::philox4x32_10(ctr, key);
  std::memcpy(out, b.v, sizeof b.v);
}

} // extern "C"
