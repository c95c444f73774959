//===- host/backward_rowops.cpp - Activation, softmax, rotary, embedding, ===//
//===  copy backward (CPU) -----------------------------------------------===//
//
// Why it is shaped like this:
//  - act_backward, softmax_backward, rotary_backward: independent elements or
//    rows over OpenMP threads, like their forwards.
//  - rotary_backward recomputes the forward's angles with the forward's
//    precision rules (HF's fp32 steps for float, exact fp64 for double; see
//    rowops.cpp) and applies the transposed rotation.
//  - embedding_backward is a scatter-add where ids repeat. Threads split the
//    C dimension (column blocks), each walking every row in order, so two
//    threads never touch the same dtable element and repeated ids add in row
//    order: no atomics, same bits for any thread count.
//  - Ids are validated before anything is written, so a bad id fails
//    (bmrt::fail) with dtable untouched and no exception crosses OpenMP.
//
//===----------------------------------------------------------------------===//
#include "bmrt/kernels_backward.h"
#include "host/host_common.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace bmrt {
namespace {

using host::threadCount;

// Below this many elements a parallel region costs more than the work.
constexpr int64_t kParallelElements = 1 << 15;
constexpr int64_t kColumnBlock = 64; // embedding_backward: columns per work item


// dx[i] += f(x[i], dout[i]) for one activation's element derivative.
// simdlen(16): 16 float lanes (AVX-512) where GCC would pick 8; the GELU
// derivative's exp and divide make this loop compute-bound.
template <class T, class F>
void actLoop(Context &ctx, T *dx, const T *x, const T *dout, int64_t n, F f) {
#pragma omp parallel for simd simdlen(16) num_threads(threadCount(ctx)) schedule(static) \
    if (n >= kParallelElements)
  for (int64_t i = 0; i < n; ++i)
    dx[i] += f(x[i], dout[i]);
}

} // namespace

template <class T>
void act_backward(Context &ctx, T *dx, const T *x, const T *dout, int64_t n, Epilogue act) {
  ProfileScope profile(ctx, KernelKind::Generated);
  if (n < 0)
    fail("act_backward: n must be >= 0 (got " + std::to_string(n) + ")");
  switch (act) {
  case Epilogue::None:
    actLoop(ctx, dx, x, dout, n, [](T, T d) { return d; });
    break;
  case Epilogue::GeluTanh:
    actLoop(ctx, dx, x, dout, n, [](T v, T d) { return gelu_tanh_backward(v, d); });
    break;
  case Epilogue::GeluErf:
    actLoop(ctx, dx, x, dout, n, [](T v, T d) { return gelu_erf_backward(v, d); });
    break;
  case Epilogue::Relu:
    actLoop(ctx, dx, x, dout, n, [](T v, T d) { return relu_backward(v, d); });
    break;
  case Epilogue::Silu:
    actLoop(ctx, dx, x, dout, n, [](T v, T d) { return silu_backward(v, d); });
    break;
  case Epilogue::Tanh:
    actLoop(ctx, dx, x, dout, n, [](T v, T d) { return tanh_backward(v, d); });
    break;
  default:
    fail("act_backward: unknown activation " + std::to_string(int(act)));
  }
}

template <class T>
void softmax_backward(Context &ctx, T *dx, const T *out, const T *dout, int64_t rows,
                      int64_t C) {
  ProfileScope profile(ctx, KernelKind::Softmax);
  if (rows < 0 || C < 1)
    fail("softmax_backward: needs rows >= 0 and C >= 1 (got rows " + std::to_string(rows) +
         ", C " + std::to_string(C) + ")");
#pragma omp parallel for num_threads(threadCount(ctx)) schedule(static) if (rows > 1)
  for (int64_t r = 0; r < rows; ++r) {
    const T *y = out + r * C;   // [C]
    const T *d = dout + r * C;  // [C]
    T *dxr = dx + r * C;        // [C]
    T dot = 0;
#pragma omp simd reduction(+ : dot)
    for (int64_t i = 0; i < C; ++i)
      dot += d[i] * y[i];
#pragma omp simd
    for (int64_t i = 0; i < C; ++i)
      dxr[i] += y[i] * (d[i] - dot);
  }
}

template <class T>
void rotary_backward(Context &ctx, T *dx, const T *dout, const int32_t *pos, int64_t rows,
                     int64_t heads, int64_t headDim, int64_t rowStride, float base) {
  host::rotaryRows<true>(ctx, "rotary_backward", dx, dout, pos, rows, heads, headDim,
                         rowStride, base);
}

template <class T>
void embedding_backward(Context &ctx, T *dtable, const int32_t *ids, const T *dout,
                        int64_t rows, int64_t vocab, int64_t C) {
  ProfileScope profile(ctx, KernelKind::Embedding);
  if (rows < 0 || C < 1)
    fail("embedding_backward: needs rows >= 0 and C >= 1 (got rows " +
         std::to_string(rows) + ", C " + std::to_string(C) + ")");
  for (int64_t r = 0; r < rows; ++r)
    if (ids[r] < 0 || ids[r] >= vocab)
      fail("token id " + std::to_string(ids[r]) + " at row " + std::to_string(r) +
           " is outside the vocabulary [0, " + std::to_string(vocab) + ")");
  const int64_t blocks = (C + kColumnBlock - 1) / kColumnBlock;
#pragma omp parallel for num_threads(threadCount(ctx)) schedule(static) \
    if (rows * C >= kParallelElements && blocks > 1)
  for (int64_t blk = 0; blk < blocks; ++blk) {
    const int64_t c0 = blk * kColumnBlock;
    const int64_t n = std::min(kColumnBlock, C - c0);
    for (int64_t r = 0; r < rows; ++r) {
      const T *d = dout + r * C + c0;              // [n]
      T *t = dtable + int64_t(ids[r]) * C + c0;    // [n]
#pragma omp simd
      for (int64_t i = 0; i < n; ++i)
        t[i] += d[i];
    }
  }
}

template <class T>
void copy_strided_backward(Context &ctx, T *dx, const T *dout, int64_t outer,
                           int64_t inner, int64_t xOuterStride, int64_t xOffset) {
  ProfileScope profile(ctx, KernelKind::Copy);
  if (outer < 0 || inner < 0 || xOffset < 0)
    fail("copy_strided_backward: bad shape (outer " + std::to_string(outer) + ", inner " +
         std::to_string(inner) + ", offset " + std::to_string(xOffset) + ")");
  // Slices of different o overlap when the stride is shorter than a slice:
  // then the adds must stay in order (serial).
  const bool disjoint = xOuterStride >= inner || outer <= 1;
#pragma omp parallel for num_threads(threadCount(ctx)) schedule(static) \
    if (disjoint && outer * inner >= kParallelElements)
  for (int64_t o = 0; o < outer; ++o) {
    const T *d = dout + o * inner;              // [inner]
    T *x = dx + o * xOuterStride + xOffset;     // [inner]
#pragma omp simd
    for (int64_t i = 0; i < inner; ++i)
      x[i] += d[i];
  }
}

#define BMRT_INSTANTIATE_ROWOPS_BACKWARD(T)                                              \
  template void act_backward<T>(Context &, T *, const T *, const T *, int64_t, Epilogue); \
  template void softmax_backward<T>(Context &, T *, const T *, const T *, int64_t,       \
                                    int64_t);                                            \
  template void rotary_backward<T>(Context &, T *, const T *, const int32_t *, int64_t,  \
                                   int64_t, int64_t, int64_t, float);                    \
  template void embedding_backward<T>(Context &, T *, const int32_t *, const T *,        \
                                      int64_t, int64_t, int64_t);                        \
  template void copy_strided_backward<T>(Context &, T *, const T *, int64_t, int64_t,    \
                                         int64_t, int64_t);
BMRT_INSTANTIATE_ROWOPS_BACKWARD(float)
BMRT_INSTANTIATE_ROWOPS_BACKWARD(double)
#undef BMRT_INSTANTIATE_ROWOPS_BACKWARD

} // namespace bmrt
