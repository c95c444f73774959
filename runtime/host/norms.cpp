//===- host/norms.cpp - LayerNorm and RMSNorm, with fused residual (CPU) --===//
//
// Why it is shaped like this:
//  - One row per loop iteration, rows spread over OpenMP threads; a row of C
//    stays in L1 between its passes.
//  - Two passes (mean, then the variance of x - mean) rather than E[x^2] -
//    E[x]^2, which cancels catastrophically when |mean| >> std. Sums are
//    accumulated in T: fp32 for float (what PyTorch does on CPU), fp64 for
//    double (gradient checks want every bit).
//  - The residual forms write `sum` first and normalize from it, so `sum`
//    may alias a or r (the residual stream updated in place); every element
//    is read before it is written, so out may alias x as well.
//
//===----------------------------------------------------------------------===//
#include "bmrt/kernels.h"
#include "host/host_common.h"

#include <cmath>
#include <string>

namespace bmrt {
namespace {

using host::threadCount;


// out = (x - mean) / sqrt(var + eps) * w + b for one row of C.
template <class T>
void layernormRow(T *out, const T *x, const T *w, const T *b, int64_t C, float eps) {
  T mean, rstd;
  host::layernormStats(x, C, eps, &mean, &rstd);
  if (b) {
#pragma omp simd
    for (int64_t i = 0; i < C; ++i)
      out[i] = (x[i] - mean) * rstd * w[i] + b[i];
  } else {
#pragma omp simd
    for (int64_t i = 0; i < C; ++i)
      out[i] = (x[i] - mean) * rstd * w[i];
  }
}

// out = x / sqrt(mean(x^2) + eps) * w for one row of C.
template <class T> void rmsnormRow(T *out, const T *x, const T *w, int64_t C, float eps) {
  T sq = 0;
#pragma omp simd reduction(+ : sq)
  for (int64_t i = 0; i < C; ++i)
    sq += x[i] * x[i];
  const T rstd = T(1) / std::sqrt(sq / T(C) + T(eps));
#pragma omp simd
  for (int64_t i = 0; i < C; ++i)
    out[i] = x[i] * rstd * w[i];
}

// sum = a + r for one row; sum may be a or r (no restrict).
template <class T> void addRow(T *sum, const T *a, const T *r, int64_t C) {
  for (int64_t i = 0; i < C; ++i)
    sum[i] = a[i] + r[i];
}

} // namespace

template <class T>
void layernorm_forward(Context &ctx, T *out, const T *x, const T *w, const T *b,
                       int64_t rows, int64_t C, float eps) {
  ProfileScope profile(ctx, KernelKind::Norm);
  host::checkRowShape("layernorm_forward", rows, C);
#pragma omp parallel for num_threads(threadCount(ctx)) schedule(static) if (rows > 1)
  for (int64_t r = 0; r < rows; ++r)
    layernormRow(out + r * C, x + r * C, w, b, C, eps);
}

template <class T>
void residual_layernorm_forward(Context &ctx, T *sum, T *out, const T *a, const T *r,
                                const T *w, const T *b, int64_t rows, int64_t C,
                                float eps) {
  ProfileScope profile(ctx, KernelKind::Norm);
  host::checkRowShape("residual_layernorm_forward", rows, C);
#pragma omp parallel for num_threads(threadCount(ctx)) schedule(static) if (rows > 1)
  for (int64_t row = 0; row < rows; ++row) {
    T *s = sum + row * C;
    addRow(s, a + row * C, r + row * C, C);
    layernormRow(out + row * C, s, w, b, C, eps);
  }
}

template <class T>
void rmsnorm_forward(Context &ctx, T *out, const T *x, const T *w, int64_t rows,
                     int64_t C, float eps) {
  ProfileScope profile(ctx, KernelKind::Norm);
  host::checkRowShape("rmsnorm_forward", rows, C);
#pragma omp parallel for num_threads(threadCount(ctx)) schedule(static) if (rows > 1)
  for (int64_t r = 0; r < rows; ++r)
    rmsnormRow(out + r * C, x + r * C, w, C, eps);
}

template <class T>
void residual_rmsnorm_forward(Context &ctx, T *sum, T *out, const T *a, const T *r,
                              const T *w, int64_t rows, int64_t C, float eps) {
  ProfileScope profile(ctx, KernelKind::Norm);
  host::checkRowShape("residual_rmsnorm_forward", rows, C);
#pragma omp parallel for num_threads(threadCount(ctx)) schedule(static) if (rows > 1)
  for (int64_t row = 0; row < rows; ++row) {
    T *s = sum + row * C;
    addRow(s, a + row * C, r + row * C, C);
    rmsnormRow(out + row * C, s, w, C, eps);
  }
}

#define BMRT_INSTANTIATE_NORMS(T)                                                        \
  template void layernorm_forward<T>(Context &, T *, const T *, const T *, const T *,   \
                                     int64_t, int64_t, float);                           \
  template void residual_layernorm_forward<T>(Context &, T *, T *, const T *, const T *, \
                                              const T *, const T *, int64_t, int64_t,    \
                                              float);                                    \
  template void rmsnorm_forward<T>(Context &, T *, const T *, const T *, int64_t,        \
                                   int64_t, float);                                      \
  template void residual_rmsnorm_forward<T>(Context &, T *, T *, const T *, const T *,   \
                                            const T *, int64_t, int64_t, float);
BMRT_INSTANTIATE_NORMS(float)
BMRT_INSTANTIATE_NORMS(double)
#undef BMRT_INSTANTIATE_NORMS

} // namespace bmrt
