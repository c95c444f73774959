// bmrt::dropout, the element function of generated dropout kernels: the
// mask is a pure function of its key (same key, same mask), each field of
// the key changes it, the keep rate is 1 - p, kept elements are scaled by
// exactly 1 / (1 - p), and the keying is the documented Philox4x32-10 block
// (so the CUDA backend and test/e2e/check_train.py can reproduce it).
#include "bmrt/dropout.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

namespace {

using bmrt::dropout;
using bmrt::dropout_bits;
using bmrt::dropout_keep;

struct Key {
  uint64_t seed = 7;
  int64_t step = 1, micro = 0, id = 0, layer = 0;
};

std::vector<bool> mask(const Key &k, double p, int64_t n) {
  std::vector<bool> m((size_t)n);
  for (int64_t i = 0; i < n; ++i)
    m[(size_t)i] = dropout_keep(p, k.seed, k.step, k.micro, k.id, k.layer, i);
  return m;
}

double differing(const std::vector<bool> &a, const std::vector<bool> &b) {
  int64_t d = 0;
  for (size_t i = 0; i < a.size(); ++i)
    d += a[i] != b[i];
  return (double)d / (double)a.size();
}

TEST(Dropout, KeepRateIsOneMinusP) {
  const int64_t n = 1 << 20;
  for (double p : {0.1, 0.5, 0.9}) {
    std::vector<bool> m = mask(Key(), p, n);
    int64_t kept = 0;
    for (bool b : m)
      kept += b;
    double rate = (double)kept / (double)n;
    double sigma = std::sqrt(p * (1 - p) / (double)n);
    EXPECT_NEAR(rate, 1 - p, 5 * sigma) << "p = " << p;
  }
}

TEST(Dropout, ScaleIsExact) {
  const double p = 0.1;
  const float scale = (float)(1.0 / (1.0 - p));
  int64_t kept = 0, dropped = 0;
  for (int64_t i = 0; i < 4096; ++i) {
    float x = 0.25f + (float)i * 0.001f;
    float y = dropout(x, p, 7, 1, 0, 0, 0, i);
    if (dropout_keep(p, 7, 1, 0, 0, 0, i)) {
      EXPECT_EQ(y, x * scale);
      ++kept;
    } else {
      EXPECT_EQ(y, 0.0f);
      ++dropped;
    }
    // double programs: the scale in double.
    double yd = dropout((double)x, p, 7, 1, 0, 0, 0, i);
    EXPECT_EQ(yd, y == 0.0f ? 0.0 : (double)x * (1.0 / (1.0 - p)));
  }
  EXPECT_GT(kept, 0);
  EXPECT_GT(dropped, 0);
}

TEST(Dropout, ZeroProbabilityKeepsEverything) {
  for (int64_t i = 0; i < 4096; ++i)
    EXPECT_EQ(dropout(1.5f, 0.0, 7, 1, 0, 0, 0, i), 1.5f);
}

TEST(Dropout, SameKeySameMask) {
  Key k;
  k.seed = 0x123456789ABCDEFull, k.step = 42, k.micro = 3, k.id = 5, k.layer = 11;
  EXPECT_EQ(mask(k, 0.3, 1 << 14), mask(k, 0.3, 1 << 14));
}

TEST(Dropout, EveryFieldOfTheKeyChangesTheMask) {
  // Independent masks differ at a fraction 2 p (1 - p) of the elements.
  const double p = 0.5, expect = 2 * p * (1 - p);
  const int64_t n = 1 << 16;
  const std::vector<bool> base = mask(Key(), p, n);
  auto check = [&](Key k, const char *field) {
    EXPECT_NEAR(differing(base, mask(k, p, n)), expect, 0.02) << field;
  };
  Key k;
  k.seed = 8;
  check(k, "seed");
  k = Key();
  k.seed = 7 + (1ull << 32); // the high word of the seed
  check(k, "seed (high word)");
  k = Key();
  k.step = 2;
  check(k, "step");
  k = Key();
  k.micro = 1;
  check(k, "micro-step");
  k = Key();
  k.id = 1;
  check(k, "rng_id");
  k = Key();
  k.layer = 1;
  check(k, "layer");
  // The element index: element i of one tensor is not element i + n.
  std::vector<bool> shifted((size_t)n);
  for (int64_t i = 0; i < n; ++i)
    shifted[(size_t)i] = dropout_keep(p, 7, 1, 0, 0, 0, i + n);
  EXPECT_NEAR(differing(base, shifted), expect, 0.02) << "index";
  // Index bits above 32 count too.
  for (int64_t i = 0; i < n; ++i)
    shifted[(size_t)i] = dropout_keep(p, 7, 1, 0, 0, 0, i + (int64_t(1) << 32));
  EXPECT_NEAR(differing(base, shifted), expect, 0.02) << "index bit 32";
}

TEST(Dropout, KeyingIsTheDocumentedPhiloxBlock) {
  const uint64_t seed = 0xA409382229F31D0ull;
  const int64_t step = 9, micro = 2, id = 3, layer = 4, index = (int64_t(5) << 32) | 6;
  const uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
  const uint32_t ctr[4] = {6u, 5u | (4u << 16), 9u, 0x80000000u | (3u << 16) | 2u};
  EXPECT_EQ(dropout_bits(seed, step, micro, id, layer, index),
            bmrt::philox4x32_10(ctr, key).v[0]);
  // Kept exactly when the bits reach floor(p * 2^32).
  const double p = 0.25;
  EXPECT_EQ(bmrt::dropout_threshold(p), 1u << 30);
  EXPECT_EQ(dropout_keep(p, seed, step, micro, id, layer, index),
            dropout_bits(seed, step, micro, id, layer, index) >= (1u << 30));
  // p just under 1 keeps the largest draw (the threshold does not overflow).
  EXPECT_EQ(bmrt::dropout_threshold(std::nextafter(1.0, 0.0)), 4294967295u);
  EXPECT_EQ(bmrt::dropout_threshold(0.0), 0u);
}

TEST(Dropout, TagBitStaysSetAtTheFieldLimits) {
  // Parameter init and sampling draw with ctr[3] = 0 and data order with
  // "DATA" (bit 31 clear): bit 31 of ctr[3] keeps dropout's blocks apart.
  // The largest rng_id and micro-step must not reach it.
  const uint32_t key[2] = {7u, 0u};
  const uint32_t ctr[4] = {1u, 0xFFFFu << 16, 1u, 0xFFFFFFFFu};
  EXPECT_EQ(dropout_bits(7, 1, 0xFFFF, 0x7FFF, 0xFFFF, 1), bmrt::philox4x32_10(ctr, key).v[0]);
}

} // namespace
