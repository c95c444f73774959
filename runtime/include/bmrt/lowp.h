//===- bmrt/lowp.h - bf16 and fp16: types, rounding, reduced-input GEMMs --===//
//
// Mixed precision (docs/training.md "Mixed precision"). The element types
// are plain 16-bit storage with explicit conversions, written with integer
// operations only, so they give the same bits under any compiler flags
// (no FTZ/fast-math dependence) and in `__host__ __device__` code:
//
//   bf16: float's top 16 bits; fp32 -> bf16 rounds to nearest even, NaN
//         becomes 0x7fc0 (as torch's c10::BFloat16). Range of fp32.
//   fp16: IEEE binary16; fp32 -> fp16 rounds to nearest even, overflow
//         (|x| >= 65520) gives inf, tiny values become subnormals or 0.
//
// The host computes "reduced-precision storage, fp32 math": the GEMMs
// below round their inputs a and b to the reduced type (into fp32 scratch
// panels) and call the fp32 GEMM, so the products are exact and accumulated
// in fp32 - the numerics of a bf16 tensor-core GEMM with fp32 accumulation.
// (Debian's OpenBLAS exports no sbgemm.) Bias, residual and output stay fp32.
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_LOWP_H
#define BMRT_LOWP_H

#include "bmrt/context.h"
#include "bmrt/kernels.h"
#include "bmrt/portable.h"
#include "bmrt/program.h"

#include <cstdint>
#include <cstring>
#include <string>

namespace bmrt {

struct bf16 {
  uint16_t bits;
};
struct fp16 {
  uint16_t bits;
};

BMRT_HD uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
BMRT_HD float bits_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

BMRT_HD bf16 to_bf16(float f) {
  uint32_t x = float_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u)
    return bf16{0x7fc0};
  x += 0x7fffu + ((x >> 16) & 1u); // round to nearest, ties to even
  return bf16{(uint16_t)(x >> 16)};
}

BMRT_HD float to_float(bf16 h) { return bits_float((uint32_t)h.bits << 16); }

BMRT_HD fp16 to_fp16(float f) {
  const uint32_t x = float_bits(f);
  const uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
  const uint32_t a = x & 0x7fffffffu;
  if (a >= 0x7f800000u) // inf, NaN (quiet)
    return fp16{(uint16_t)(sign | (a > 0x7f800000u ? 0x7e00u : 0x7c00u))};
  if (a >= 0x477ff000u) // >= 65520: rounds past 65504
    return fp16{(uint16_t)(sign | 0x7c00u)};
  if (a >= 0x38800000u) { // a normal half (>= 2^-14): drop 13 bits, ties to even
    uint32_t r = a + 0xfffu + ((a >> 13) & 1u);
    r -= 112u << 23; // exponent bias 127 -> 15
    return fp16{(uint16_t)(sign | (r >> 13))};
  }
  if (a < 0x33000000u) // below 2^-25: rounds to zero
    return fp16{sign};
  // A subnormal half: the value in units of 2^-24, rounded to nearest even.
  const uint32_t e = a >> 23;                      // 102 .. 112
  const uint32_t m = (a & 0x7fffffu) | 0x800000u;  // 24-bit significand
  const uint32_t shift = 126u - e;                 // 14 .. 24
  uint32_t q = m >> shift;
  const uint32_t rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1u);
  if (rem > half || (rem == half && (q & 1u)))
    ++q; // may carry into the smallest normal: its encoding follows on
  return fp16{(uint16_t)(sign | q)};
}

BMRT_HD float to_float(fp16 h) {
  const uint32_t sign = (uint32_t)(h.bits & 0x8000u) << 16;
  uint32_t e = (h.bits >> 10) & 0x1fu, m = h.bits & 0x3ffu;
  if (e == 0x1fu)
    return bits_float(sign | 0x7f800000u | (m << 13));
  if (e == 0) {
    if (m == 0)
      return bits_float(sign);
    e = 113; // subnormal: normalize
    while (!(m & 0x400u)) {
      m <<= 1;
      --e;
    }
    return bits_float(sign | (e << 23) | ((m & 0x3ffu) << 13));
  }
  return bits_float(sign | ((e + 112u) << 23) | (m << 13));
}

/// The reduced type a GEMM's inputs are rounded to.
// LowPrecision (BF16, FP16) is declared in bmrt/kernels.h (AttentionArgs uses it).

/// x rounded to `p` (the value a `p` copy of x holds), as fp32.
BMRT_HD float round_to(LowPrecision p, float x) {
  return p == LowPrecision::BF16 ? to_float(to_bf16(x)) : to_float(to_fp16(x));
}

/// out[i] = to_bf16(in[i]) / to_float(in[i]) ... for i < n (parallel).
void convert(Context &ctx, bf16 *out, const float *in, int64_t n);
void convert(Context &ctx, float *out, const bf16 *in, int64_t n);
void convert(Context &ctx, fp16 *out, const float *in, int64_t n);
void convert(Context &ctx, float *out, const fp16 *in, int64_t n);

/// gemm (kernels.h) with a and b rounded to `p` first; the product and the
/// epilogue are fp32. Same argument rules as gemm.
void gemm_lowp(Context &ctx, LowPrecision p, int64_t m, int64_t n, int64_t k, const float *a,
               int64_t lda, const float *b, int64_t ldb, Trans transB, float *c, int64_t ldc,
               const float *bias, Epilogue act, const float *residual);

/// gemm_ex (kernels_backward.h) with a and b rounded to `p` first.
void gemm_ex_lowp(Context &ctx, LowPrecision p, Trans transA, Trans transB, int64_t m,
                  int64_t n, int64_t k, const float *a, int64_t lda, const float *b,
                  int64_t ldb, float *c, int64_t ldc, bool accumulate);

/// gemm_lowp whose b is given in the reduced type already (`b` holds bf16 /
/// fp16 bits as `p` says: the weight copy Buffers::lowParams); a is rounded.
void gemm_lowp_w(Context &ctx, LowPrecision p, int64_t m, int64_t n, int64_t k, const float *a,
                 int64_t lda, const uint16_t *b, int64_t ldb, Trans transB, float *c,
                 int64_t ldc, const float *bias, Epilogue act, const float *residual);

/// gemm_ex_lowp whose b is given in the reduced type already (as above).
void gemm_ex_lowp_w(Context &ctx, LowPrecision p, Trans transA, Trans transB, int64_t m,
                    int64_t n, int64_t k, const float *a, int64_t lda, const uint16_t *b,
                    int64_t ldb, float *c, int64_t ldc, bool accumulate);

//===--- The weight copy of a mixed-precision training program ----------===//

/// Whether the program computes its GEMMs in a reduced type (precision
/// bf16 / fp16), and which (p).
inline bool lowPrecisionOf(const TrainInfo &train, LowPrecision &p) {
  if (!train.precision)
    return false;
  if (!std::strcmp(train.precision, "bf16"))
    p = LowPrecision::BF16;
  else if (!std::strcmp(train.precision, "fp16"))
    p = LowPrecision::FP16;
  else
    return false;
  return true;
}

/// Bytes of Buffers::lowParams a program needs: 2 per element of the
/// trainable group for precision bf16 / fp16 (under zero = 3, 2 per element
/// of the param staging: no rank holds the whole group), 0 otherwise. The
/// same on every backend.
inline int64_t low_param_bytes(const TrainInfo &train) {
  LowPrecision p;
  if (!lowPrecisionOf(train, p))
    return 0;
  // zero = 3: the copy mirrors the (fp32) param staging, 2 bytes for 4.
  return train.zeroStage == 3 ? train.paramStagingBytes / 2 : 2 * train.groupElems;
}

/// Buffers::lowParams = the whole trainable group of buf.params rounded to
/// the program's reduced type. Called after every update (when every rank
/// holds every param: after the all-gather under ZeRO-1) and after params
/// are initialized or loaded; a no-op for fp32/fp64 programs and under
/// zero = 3, whose entries round each gathered unit instead (round_unit).
void refresh_low_params(Context &ctx, const Buffers &buf, const TrainInfo &train);

/// ZeRO-3 with bf16/fp16 (bmb_exec.round_unit): elements [at, at + n) of
/// Buffers::paramStaging, a unit just gathered, rounded to `p` into the
/// same elements of Buffers::lowParams (laid out as the param staging).
void round_unit(Context &ctx, LowPrecision p, const Buffers &buf, int64_t at, int64_t n);

/// round_unit's arguments, checked alike by both backends before any work.
inline void checkRoundUnit(LowPrecision p, const Buffers &buf, int64_t at, int64_t n) {
  if (!buf.paramStaging || !buf.lowParams)
    fail("round_unit: this zero = 3 bf16/fp16 program needs Buffers::paramStaging and "
         "Buffers::lowParams, which the app did not allocate");
  if (at < 0 || n < 0)
    fail("round_unit: elements [" + std::to_string(at) + ", " + std::to_string(at + n) +
         ") of the staging (a bmbc bug)");
  if (p != LowPrecision::BF16 && p != LowPrecision::FP16)
    fail("round_unit: invalid precision " + std::to_string((int)p));
}

} // namespace bmrt

#endif // BMRT_LOWP_H
