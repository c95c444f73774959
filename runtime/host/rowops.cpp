//===- host/rowops.cpp - Softmax, rotary, embedding, positions, copies ----===//
//
// Why it is shaped like this:
//  - Each kernel is a loop over independent rows spread over OpenMP threads;
//    the small ones (positions, short copies) stay serial because waking the
//    thread team costs more than the work.
//  - rotary_forward for float reproduces Hugging Face's arithmetic, not just
//    its formula: HF computes inv_freq = 1 / base^(2i/d) and the angle
//    pos * inv_freq in fp32 (even for fp64 models), so at position p the fp32
//    angle is off the exact one by ~p * 6e-8 rad. Checkpoints were trained
//    with those angles; matching them keeps our logits on HF's. The double
//    instantiation (gradient checks) computes the exact angle in fp64.
//  - embedding_forward validates every id before copying anything, so a bad
//    token fails with its position and no exception crosses an OpenMP region.
//
//===----------------------------------------------------------------------===//
#include "bmrt/kernels.h"
#include "bmrt/iteration_gate.h"
#include "host/host_common.h"

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

namespace bmrt {
namespace {

using host::threadCount;

// Below this many elements a copy is not worth a parallel region.
constexpr int64_t kParallelElements = 1 << 15;


} // namespace

template <class T>
void softmax_forward(Context &ctx, T *out, const T *x, int64_t rows, int64_t C) {
  ProfileScope profile(ctx, KernelKind::Softmax);
  if (rows < 0 || C < 1)
    fail("softmax_forward: needs rows >= 0 and C >= 1 (got rows " + std::to_string(rows) +
         ", C " + std::to_string(C) + ")");
#pragma omp parallel for num_threads(threadCount(ctx)) schedule(static) if (rows > 1)
  for (int64_t r = 0; r < rows; ++r) {
    const T *xr = x + r * C;
    T *o = out + r * C;
    T m = xr[0];
#pragma omp simd reduction(max : m)
    for (int64_t i = 1; i < C; ++i)
      m = xr[i] > m ? xr[i] : m;
    T sum = 0;
    for (int64_t i = 0; i < C; ++i) {
      o[i] = std::exp(xr[i] - m); // <= 1: no overflow
      sum += o[i];
    }
    const T inv = T(1) / sum;
#pragma omp simd
    for (int64_t i = 0; i < C; ++i)
      o[i] *= inv;
  }
}

template <class T>
void rotary_forward(Context &ctx, T *out, const T *x, const int32_t *pos, int64_t rows,
                    int64_t heads, int64_t headDim, int64_t rowStride, float base) {
  host::rotaryRows<false>(ctx, "rotary_forward", out, x, pos, rows, heads, headDim, rowStride,
                          base);
}

template <class T>
void embedding_forward(Context &ctx, T *out, const int32_t *ids, const T *table,
                       int64_t rows, int64_t vocab, int64_t C) {
  ProfileScope profile(ctx, KernelKind::Embedding);
  for (int64_t r = 0; r < rows; ++r)
    if (ids[r] < 0 || ids[r] >= vocab)
      fail("token id " + std::to_string(ids[r]) + " at row " + std::to_string(r) +
           " is outside the vocabulary [0, " + std::to_string(vocab) + ")");
#pragma omp parallel for num_threads(threadCount(ctx)) schedule(static) \
    if (rows * C >= kParallelElements)
  for (int64_t r = 0; r < rows; ++r)
    std::memcpy(out + r * C, table + int64_t(ids[r]) * C, C * sizeof(T));
}

void positions_forward(Context &ctx, int32_t *out, int64_t rows, int64_t start) {
  ProfileScope profile(ctx, KernelKind::Copy);
  if (start < 0 || start + rows > INT32_MAX)
    fail("positions_forward: positions [" + std::to_string(start) + ", " +
         std::to_string(start + rows) + ") do not fit in int32");
  for (int64_t r = 0; r < rows; ++r)
    out[r] = int32_t(start + r);
}

// Not profiled: one store (it was an inline store of the emitted program).
template <class T> void iteration_gate(Context &, T *out, bool open) {
  out[0] = open ? T(1) : T(0);
}

template <class T>
void copy_strided(Context &ctx, T *out, const T *x, int64_t outer, int64_t inner,
                  int64_t xOuterStride, int64_t xOffset) {
  ProfileScope profile(ctx, KernelKind::Copy);
#pragma omp parallel for num_threads(threadCount(ctx)) schedule(static) \
    if (outer * inner >= kParallelElements)
  for (int64_t o = 0; o < outer; ++o)
    std::memcpy(out + o * inner, x + o * xOuterStride + xOffset, inner * sizeof(T));
}

#define BMRT_INSTANTIATE_ROWOPS(T)                                                       \
  template void softmax_forward<T>(Context &, T *, const T *, int64_t, int64_t);         \
  template void rotary_forward<T>(Context &, T *, const T *, const int32_t *, int64_t,   \
                                  int64_t, int64_t, int64_t, float);                     \
  template void embedding_forward<T>(Context &, T *, const int32_t *, const T *,         \
                                     int64_t, int64_t, int64_t);                         \
  template void copy_strided<T>(Context &, T *, const T *, int64_t, int64_t, int64_t,    \
                                int64_t);                                                \
  template void iteration_gate<T>(Context &, T *, bool);
BMRT_INSTANTIATE_ROWOPS(float)
BMRT_INSTANTIATE_ROWOPS(double)
#undef BMRT_INSTANTIATE_ROWOPS

} // namespace bmrt
