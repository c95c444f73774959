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

} // namespace bmrt::host

#endif // BMRT_HOST_HOST_COMMON_H
