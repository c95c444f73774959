//===- host/backward_norms.cpp - LayerNorm / RMSNorm backward (CPU) -------===//
//
// Why it is shaped like this:
//  - The forward_save variants repeat norms.cpp's row arithmetic exactly, so
//    their output is bit-identical to layernorm_forward / rmsnorm_forward.
//  - The backwards make one pass over the rows (x and dout are read from
//    memory once): dx per row, and dw/db as partial sums per chunk of
//    kRowChunk rows, added up afterwards in chunk order. The chunks do not
//    depend on the thread count, so neither do the bits; no atomics.
//  - mean/rstd may be given (saved by the forward, as llm.c does) or null
//    (recomputed here with the forward's arithmetic).
// Accumulation is in T, like the forward.
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

constexpr int64_t kRowChunk = 32; // rows per dw/db partial sum

using host::threadCount;


using host::layernormStats;

// rstd of one row of C, as norms.cpp's rmsnormRow computes it.
template <class T> T rmsnormRstd(const T *x, int64_t C, float eps) {
  T sq = 0;
#pragma omp simd reduction(+ : sq)
  for (int64_t i = 0; i < C; ++i)
    sq += x[i] * x[i];
  return T(1) / std::sqrt(sq / T(C) + T(eps));
}

} // namespace

template <class T>
void layernorm_forward_save(Context &ctx, T *out, T *mean, T *rstd, const T *x, const T *w,
                            const T *b, int64_t rows, int64_t C, float eps) {
  ProfileScope profile(ctx, KernelKind::Norm);
  host::checkRowShape("layernorm_forward_save", rows, C);
#pragma omp parallel for num_threads(threadCount(ctx)) schedule(static) if (rows > 1)
  for (int64_t r = 0; r < rows; ++r) {
    const T *xr = x + r * C; // [C]
    T *o = out + r * C;      // [C]
    T m, s;
    layernormStats(xr, C, eps, &m, &s);
    mean[r] = m;
    rstd[r] = s;
    if (b) {
#pragma omp simd
      for (int64_t i = 0; i < C; ++i)
        o[i] = (xr[i] - m) * s * w[i] + b[i];
    } else {
#pragma omp simd
      for (int64_t i = 0; i < C; ++i)
        o[i] = (xr[i] - m) * s * w[i];
    }
  }
}

template <class T>
void layernorm_backward(Context &ctx, T *dx, T *dw, T *db, const T *dout, const T *x,
                        const T *w, const T *mean, const T *rstd, int64_t rows, int64_t C,
                        float eps) {
  ProfileScope profile(ctx, KernelKind::Norm);
  host::checkRowShape("layernorm_backward", rows, C);
  if ((mean == nullptr) != (rstd == nullptr))
    fail("layernorm_backward: give both mean and rstd, or neither (recompute)");
  if (rows == 0)
    return;
  const int64_t chunks = (rows + kRowChunk - 1) / kRowChunk;
  const bool weights = dw || db;
  // Per chunk of rows, its partial sums of dw and db: [chunks, C] each.
  std::vector<T> partial(weights ? 2 * chunks * C : 0);

#pragma omp parallel num_threads(threadCount(ctx)) if (rows > 1)
  {
    // One pass over the rows: a row of x and dout is read from memory once
    // and stays in L1 for its statistics, dx, and the chunk's dw/db sums.
    //   dx += rstd * (dnorm - mean(dnorm) - xhat * mean(dnorm * xhat)),
    //   dnorm = dout * w, xhat = (x - mean) * rstd.
#pragma omp for schedule(static)
    for (int64_t chunk = 0; chunk < chunks; ++chunk) {
      T *dwPart = weights ? partial.data() + chunk * C : nullptr;            // [C]
      T *dbPart = weights ? partial.data() + (chunks + chunk) * C : nullptr; // [C]
      if (weights) {
        std::fill(dwPart, dwPart + C, T(0));
        std::fill(dbPart, dbPart + C, T(0));
      }
      for (int64_t r = chunk * kRowChunk; r < std::min(rows, (chunk + 1) * kRowChunk); ++r) {
        const T *xr = x + r * C;    // [C]
        const T *dr = dout + r * C; // [C]
        T m, s;
        if (mean) {
          m = mean[r];
          s = rstd[r];
        } else {
          layernormStats(xr, C, eps, &m, &s);
        }
        // The chunk's dw/db sums ride along the reduction pass.
        T dnormMean = 0, dnormNormMean = 0;
        if (weights) {
#pragma omp simd reduction(+ : dnormMean, dnormNormMean)
          for (int64_t i = 0; i < C; ++i) {
            const T xhat = (xr[i] - m) * s, dnorm = dr[i] * w[i];
            dwPart[i] += dr[i] * xhat;
            dbPart[i] += dr[i];
            dnormMean += dnorm;
            dnormNormMean += dnorm * xhat;
          }
        } else {
#pragma omp simd reduction(+ : dnormMean, dnormNormMean)
          for (int64_t i = 0; i < C; ++i) {
            const T dnorm = dr[i] * w[i];
            dnormMean += dnorm;
            dnormNormMean += dnorm * ((xr[i] - m) * s);
          }
        }
        if (!dx)
          continue;
        T *dxr = dx + r * C; // [C]
        dnormMean /= T(C);
        dnormNormMean /= T(C);
#pragma omp simd
        for (int64_t i = 0; i < C; ++i) {
          const T xhat = (xr[i] - m) * s;
          dxr[i] += s * (dr[i] * w[i] - dnormMean - xhat * dnormNormMean);
        }
      }
    }
    // dw, db += the chunks' partial sums, in chunk order (threads split C).
    if (weights) {
#pragma omp for schedule(static)
      for (int64_t i = 0; i < C; ++i) {
        T sw = 0, sb = 0;
        for (int64_t chunk = 0; chunk < chunks; ++chunk) {
          sw += partial[chunk * C + i];
          sb += partial[(chunks + chunk) * C + i];
        }
        if (dw)
          dw[i] += sw;
        if (db)
          db[i] += sb;
      }
    }
  }
}

template <class T>
void rmsnorm_forward_save(Context &ctx, T *out, T *rstd, const T *x, const T *w,
                          int64_t rows, int64_t C, float eps) {
  ProfileScope profile(ctx, KernelKind::Norm);
  host::checkRowShape("rmsnorm_forward_save", rows, C);
#pragma omp parallel for num_threads(threadCount(ctx)) schedule(static) if (rows > 1)
  for (int64_t r = 0; r < rows; ++r) {
    const T *xr = x + r * C; // [C]
    T *o = out + r * C;      // [C]
    const T s = rmsnormRstd(xr, C, eps);
    rstd[r] = s;
#pragma omp simd
    for (int64_t i = 0; i < C; ++i)
      o[i] = xr[i] * s * w[i];
  }
}

template <class T>
void rmsnorm_backward(Context &ctx, T *dx, T *dw, const T *dout, const T *x, const T *w,
                      const T *rstd, int64_t rows, int64_t C, float eps) {
  ProfileScope profile(ctx, KernelKind::Norm);
  host::checkRowShape("rmsnorm_backward", rows, C);
  if (rows == 0)
    return;
  const int64_t chunks = (rows + kRowChunk - 1) / kRowChunk;
  // Per chunk of rows, its partial sum of dw: [chunks, C].
  std::vector<T> partial(dw ? chunks * C : 0);

#pragma omp parallel num_threads(threadCount(ctx)) if (rows > 1)
  {
    // One pass over the rows, as layernorm_backward:
    //   dx += rstd * (dnorm - xhat * mean(dnorm * xhat)), dnorm = dout * w,
    //   xhat = x * rstd; dw += sum_r dout * xhat.
#pragma omp for schedule(static)
    for (int64_t chunk = 0; chunk < chunks; ++chunk) {
      T *dwPart = dw ? partial.data() + chunk * C : nullptr; // [C]
      if (dw)
        std::fill(dwPart, dwPart + C, T(0));
      for (int64_t r = chunk * kRowChunk; r < std::min(rows, (chunk + 1) * kRowChunk); ++r) {
        const T *xr = x + r * C;    // [C]
        const T *dr = dout + r * C; // [C]
        const T s = rstd ? rstd[r] : rmsnormRstd(xr, C, eps);
        T dnormNormMean = 0;
        if (dw) {
#pragma omp simd reduction(+ : dnormNormMean)
          for (int64_t i = 0; i < C; ++i) {
            const T xhat = xr[i] * s;
            dwPart[i] += dr[i] * xhat;
            dnormNormMean += dr[i] * w[i] * xhat;
          }
        } else {
#pragma omp simd reduction(+ : dnormNormMean)
          for (int64_t i = 0; i < C; ++i)
            dnormNormMean += dr[i] * w[i] * (xr[i] * s);
        }
        if (!dx)
          continue;
        T *dxr = dx + r * C; // [C]
        dnormNormMean /= T(C);
#pragma omp simd
        for (int64_t i = 0; i < C; ++i)
          dxr[i] += s * (dr[i] * w[i] - (xr[i] * s) * dnormNormMean);
      }
    }
    // dw += the chunks' partial sums, in chunk order (threads split C).
    if (dw) {
#pragma omp for schedule(static)
      for (int64_t i = 0; i < C; ++i) {
        T sum = 0;
        for (int64_t chunk = 0; chunk < chunks; ++chunk)
          sum += partial[chunk * C + i];
        dw[i] += sum;
      }
    }
  }
}

#define BMRT_INSTANTIATE_NORMS_BACKWARD(T)                                               \
  template void layernorm_forward_save<T>(Context &, T *, T *, T *, const T *, const T *, \
                                          const T *, int64_t, int64_t, float);           \
  template void layernorm_backward<T>(Context &, T *, T *, T *, const T *, const T *,    \
                                      const T *, const T *, const T *, int64_t, int64_t, \
                                      float);                                            \
  template void rmsnorm_forward_save<T>(Context &, T *, T *, const T *, const T *,       \
                                        int64_t, int64_t, float);                        \
  template void rmsnorm_backward<T>(Context &, T *, T *, const T *, const T *, const T *, \
                                    const T *, int64_t, int64_t, float);
BMRT_INSTANTIATE_NORMS_BACKWARD(float)
BMRT_INSTANTIATE_NORMS_BACKWARD(double)
#undef BMRT_INSTANTIATE_NORMS_BACKWARD

} // namespace bmrt
