//===- bmrt/philox.h - Counter-based random numbers (Philox4x32-10) -------===//
//
// DESIGN decision 6: randomness is counter-based. A draw is a pure function
// of (key, counter), so the same seed gives the same tokens (and dropout
// masks) on every machine, thread count and backend, with no generator state
// to carry, save or split. Philox4x32-10 (Salmon et al., "Parallel Random
// Numbers: As Easy as 1, 2, 3", SC'11) is the generator cuRAND and most
// frameworks use; it is checked against the Random123 known-answer vectors in
// test/runtime/app.
//
// Header-only and __host__ __device__ so generated kernels can call it too.
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_PHILOX_H
#define BMRT_PHILOX_H

#include "bmrt/portable.h"

#include <cstdint>

namespace bmrt {

// The round multipliers and the Weyl key increments of Philox4x32.
constexpr uint32_t kPhiloxM0 = 0xD2511F53u, kPhiloxM1 = 0xCD9E8D57u;
constexpr uint32_t kPhiloxW0 = 0x9E3779B9u, kPhiloxW1 = 0xBB67AE85u;

/// One Philox4x32 block: 128 random bits for one (counter, key).
struct Philox4x32Block {
  uint32_t v[4];
};

/// Philox4x32 with 10 rounds: out = philox(ctr[4], key[2]).
BMRT_HD Philox4x32Block philox4x32_10(const uint32_t ctr[4], const uint32_t key[2]) {
  uint32_t c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3];
  uint32_t k0 = key[0], k1 = key[1];
  for (int round = 0; round < 10; round++) {
    // The 32x32 -> 64-bit products give the hi/lo halves the round mixes.
    uint64_t p0 = (uint64_t)kPhiloxM0 * c0;
    uint64_t p1 = (uint64_t)kPhiloxM1 * c2;
    uint32_t hi0 = (uint32_t)(p0 >> 32), lo0 = (uint32_t)p0;
    uint32_t hi1 = (uint32_t)(p1 >> 32), lo1 = (uint32_t)p1;
    c0 = hi1 ^ c1 ^ k0;
    c1 = lo1;
    c2 = hi0 ^ c3 ^ k1;
    c3 = lo0;
    // The key is bumped between rounds (the first round uses the key as given).
    k0 += kPhiloxW0;
    k1 += kPhiloxW1;
  }
  Philox4x32Block out = {{c0, c1, c2, c3}};
  return out;
}

/// A uniform double in [0, 1) with 53 random bits from the first two words of
/// the block for key = seed and counter = (index, stream, 0). `stream` keeps
/// the uses of one seed apart (sampling, dropout, ...).
BMRT_HD double philoxUniform(uint64_t seed, uint64_t index, uint32_t stream) {
  const uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
  const uint32_t ctr[4] = {(uint32_t)index, (uint32_t)(index >> 32), stream, 0u};
  Philox4x32Block b = philox4x32_10(ctr, key);
  uint64_t bits = (((uint64_t)b.v[0] << 32) | b.v[1]) >> 11; // the top 53 bits
  return (double)bits * (1.0 / 9007199254740992.0);           // 2^-53
}

} // namespace bmrt

#endif // BMRT_PHILOX_H
