//===- host/host_common.h - Shared by the host kernel files -----*- C++ -*-===//
//
// What every forward and backward kernel file of the host backend needs the
// same way: the thread count of a Context, the argument checks shared by a
// kernel and its backward, and rotary's inverse frequencies (whose rounding
// the backward must reproduce exactly).
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_HOST_HOST_COMMON_H
#define BMRT_HOST_HOST_COMMON_H

#include "bmrt/kernels.h"

#include <cmath>
#include <string>
#include <vector>

namespace bmrt::host {

inline int threadCount(const Context &ctx) { return ctx.numThreads > 0 ? ctx.numThreads : 1; }

/// rows x C row kernels (norms, softmax).
inline void checkRowShape(const char *kernel, int64_t rows, int64_t C) {
  if (rows < 0 || C < 1)
    fail(std::string(kernel) + ": needs rows >= 0 and C >= 1 (got rows " +
         std::to_string(rows) + ", C " + std::to_string(C) + ")");
}

/// The head counts of an attention call, forward or backward.
inline void checkAttentionHeads(const char *kernel, const AttentionArgs &a) {
  auto bad = [&](const std::string &what) { fail(std::string(kernel) + ": " + what); };
  if (a.batch < 1 || a.rows < 0)
    bad("batch must be >= 1 and rows >= 0 (got batch " + std::to_string(a.batch) +
        ", rows " + std::to_string(a.rows) + ")");
  if (a.heads < 1 || a.kvHeads < 1 || a.headDim < 1)
    bad("heads, kvHeads and headDim must be >= 1 (got " + std::to_string(a.heads) + ", " +
        std::to_string(a.kvHeads) + ", " + std::to_string(a.headDim) + ")");
  if (a.heads % a.kvHeads != 0)
    bad("heads (" + std::to_string(a.heads) + ") is not a multiple of kvHeads (" +
        std::to_string(a.kvHeads) + ")");
}

/// The arguments of rotary_forward / rotary_backward.
inline void checkRotaryArgs(const char *kernel, int64_t rows, int64_t heads, int64_t headDim,
                            int64_t rowStride, float base) {
  if (headDim < 2 || headDim % 2 != 0)
    fail(std::string(kernel) + ": head dimension must be even and >= 2 (got " +
         std::to_string(headDim) + ")");
  if (heads < 1 || rows < 0 || rowStride < heads * headDim)
    fail(std::string(kernel) + ": bad shape (rows " + std::to_string(rows) + ", heads " +
         std::to_string(heads) + ", headDim " + std::to_string(headDim) + ", rowStride " +
         std::to_string(rowStride) + ")");
  if (!(base > 1.0f))
    fail(std::string(kernel) + ": base must be > 1 (got " + std::to_string(base) + ")");
}

/// inv_freq[i] = base^(-2i/headDim), i < headDim/2: HF's fp32 steps for
/// float (rotary matches transformers' rounding), exact fp64 for double.
inline void inverseFrequencies(float *invFreq, int64_t headDim, float base) {
  for (int64_t i = 0; i < headDim / 2; ++i)
    invFreq[i] = 1.0f / std::pow(base, float(2 * i) / float(headDim));
}
inline void inverseFrequencies(double *invFreq, int64_t headDim, float base) {
  for (int64_t i = 0; i < headDim / 2; ++i)
    invFreq[i] = std::pow(double(base), -double(2 * i) / double(headDim));
}

/// cos and sin of one row's rotary angles pos * invFreq[i], i < half; the
/// angle is rounded in T first, as HF does in fp32.
template <class T>
inline void rotaryAngles(T *cosv, T *sinv, int32_t pos, const T *invFreq, int64_t half) {
  for (int64_t i = 0; i < half; ++i) {
    const T angle = T(pos) * invFreq[i];
    cosv[i] = std::cos(angle);
    sinv[i] = std::sin(angle);
  }
}

/// rotary_forward (Backward = false: out = the rotation of x) and
/// rotary_backward (Backward = true: out += the rotation back of x, the
/// transpose of the forward's) over rows x heads, sharing the argument
/// checks, the angles and the threading so the two always agree.
template <bool Backward, class T>
void rotaryRows(Context &ctx, const char *kernel, T *out, const T *x, const int32_t *pos,
                int64_t rows, int64_t heads, int64_t headDim, int64_t rowStride, float base) {
  ProfileScope profile(ctx, KernelKind::Rotary);
  checkRotaryArgs(kernel, rows, heads, headDim, rowStride, base);
  const int64_t half = headDim / 2;
  std::vector<T> invFreq(half);
  inverseFrequencies(invFreq.data(), headDim, base);
#pragma omp parallel num_threads(threadCount(ctx)) if (rows > 1)
  {
    std::vector<T> table(2 * half); // cos then sin of one row's angles
    T *cosv = table.data(), *sinv = table.data() + half;
#pragma omp for schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
      rotaryAngles(cosv, sinv, pos[r], invFreq.data(), half);
      for (int64_t h = 0; h < heads; ++h) {
        const T *xh = x + r * rowStride + h * headDim;
        T *oh = out + r * rowStride + h * headDim;
        if constexpr (!Backward) {
          // rotate_half: (x1, x2) -> (x1 cos - x2 sin, x2 cos + x1 sin); both
          // halves are read before either is written, so out may alias x.
#pragma omp simd
          for (int64_t i = 0; i < half; ++i) {
            const T x1 = xh[i], x2 = xh[i + half];
            oh[i] = x1 * cosv[i] - x2 * sinv[i];
            oh[i + half] = x2 * cosv[i] + x1 * sinv[i];
          }
        } else {
          // The transpose: dx1 += d1 c + d2 s, dx2 += d2 c - d1 s.
#pragma omp simd
          for (int64_t i = 0; i < half; ++i) {
            const T d1 = xh[i], d2 = xh[i + half];
            oh[i] += d1 * cosv[i] + d2 * sinv[i];
            oh[i + half] += d2 * cosv[i] - d1 * sinv[i];
          }
        }
      }
    }
  }
}

/// Mean and 1/sqrt(var + eps) of one row of C (two passes, accumulating in
/// T): layernorm's forward and backward must see the same statistics.
template <class T>
inline void layernormStats(const T *x, int64_t C, float eps, T *mean, T *rstd) {
  T sum = 0;
#pragma omp simd reduction(+ : sum)
  for (int64_t i = 0; i < C; ++i)
    sum += x[i];
  const T m = sum / T(C);
  T sq = 0;
#pragma omp simd reduction(+ : sq)
  for (int64_t i = 0; i < C; ++i)
    sq += (x[i] - m) * (x[i] - m);
  *mean = m;
  *rstd = T(1) / std::sqrt(sq / T(C) + T(eps));
}

} // namespace bmrt::host

#endif // BMRT_HOST_HOST_COMMON_H
