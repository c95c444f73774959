//===- host/gemv.cpp - Bandwidth-bound x . W^T for batch-1 decode ---------===//
//
// Every Linear and the LM head in batch-1 decode is c[1, n] = x[1, k] . W^T
// with W stored [n, k]: each row of W is one contiguous dot product with x.
// The cost is reading W from memory once, so the kernel is shaped around the
// memory stream, not the arithmetic:
//  - OpenMP splits the rows of W into one contiguous range per thread
//    (schedule(static)), so each core streams its own part sequentially and
//    the hardware prefetchers see a handful of linear streams.
//  - A block of kBlockRows rows is dotted with x at once: x is loaded once per
//    block, and the independent accumulators hide the FMA latency. While a
//    block is computed the next one is prefetched (a few percent at m = 1,
//    more at m > 1 where a block is compute-heavier).
//  - With AVX-512 (the lib is built -march=native) the k tail is a masked
//    load, so no scalar loop; elsewhere `#pragma omp simd` reductions let the
//    compiler vectorize for whatever the target is. double always takes the
//    portable path (it serves the gradient checks, not speed).
//  - For m > 1 (up to kMatvecMaxRows) rows of a go two at a time (each load
//    of W feeds two FMAs) and each block of W is reused from L1/L2 for every
//    pair, so W is still read from memory once.
// The epilogue (bias, activation, residual) is applied as each output is
// produced: c is written once and never re-read.
//
//===----------------------------------------------------------------------===//
#include "host/gemv.h"

#include <algorithm>

#include "host/avx512.h"

namespace bmrt {
namespace host {
namespace {

constexpr int kBlockRows = 4; // rows of b per tile
constexpr int kTileRowsA = 2; // rows of a per tile (m > 1)

// Below this many multiply-adds a parallel region costs more than it saves.
constexpr int64_t kMinParallelWork = 1 << 15;

// out[r] = a[0:k] . b[r * ldb + (0:k)], r < kBlockRows.
template <class T>
inline void dotBlockPortable(const T *a, const T *b, int64_t ldb, int64_t k, T *out) {
  const T *b0 = b, *b1 = b + ldb, *b2 = b + 2 * ldb, *b3 = b + 3 * ldb;
  T s0 = 0, s1 = 0, s2 = 0, s3 = 0;
#pragma omp simd reduction(+ : s0, s1, s2, s3)
  for (int64_t p = 0; p < k; p++) {
    T x = a[p];
    s0 += x * b0[p];
    s1 += x * b1[p];
    s2 += x * b2[p];
    s3 += x * b3[p];
  }
  out[0] = s0, out[1] = s1, out[2] = s2, out[3] = s3;
}

template <class T> inline T dotPortable(const T *a, const T *b, int64_t k) {
  T s = 0;
#pragma omp simd reduction(+ : s)
  for (int64_t p = 0; p < k; p++)
    s += a[p] * b[p];
  return s;
}

// A tile: out[i * R + r] = a[i * lda + (0:k)] . b[r * ldb + (0:k)] for i < M
// rows of a and R rows of b (R is kBlockRows, or 1 at the end of b).
// `prefetch` (may be null) is the next tile of b: asking for it while this
// one is computed keeps memory busy when m > 1 makes the tile compute-heavy.
template <int M, int R, class T>
inline void dotTilePortable(const T *a, int64_t lda, const T *b, int64_t ldb, int64_t k,
                            T *out) {
  static_assert(R == kBlockRows || R == 1, "tiles are kBlockRows or 1 rows of b");
  for (int i = 0; i < M; i++) {
    if constexpr (R == kBlockRows)
      dotBlockPortable(a + i * lda, b, ldb, k, out + i * R);
    else
      out[i] = dotPortable(a + i * lda, b, k);
  }
}

#ifdef __AVX512F__
// 16 lanes at a time with M * R accumulators; each load of b feeds M FMAs.
template <int M, int R>
inline void dotTile(const float *a, int64_t lda, const float *b, int64_t ldb, int64_t k,
                    float *out, const float *prefetch) {
  __m512 s[M][R];
  for (int i = 0; i < M; i++)
    for (int r = 0; r < R; r++)
      s[i][r] = _mm512_setzero_ps();
  int64_t p = 0;
  for (; p + 16 <= k; p += 16) {
    __m512 x[M];
    for (int i = 0; i < M; i++)
      x[i] = _mm512_loadu_ps(a + i * lda + p);
    for (int r = 0; r < R; r++) {
      if (prefetch)
        _mm_prefetch((const char *)(prefetch + r * ldb + p), _MM_HINT_T0);
      __m512 w = _mm512_loadu_ps(b + r * ldb + p);
      for (int i = 0; i < M; i++)
        s[i][r] = _mm512_fmadd_ps(x[i], w, s[i][r]);
    }
  }
  if (p < k) {
    // Masked-off lanes are neither read (no fault past the row) nor summed.
    __mmask16 mask = (__mmask16)((1u << (k - p)) - 1u);
    __m512 x[M];
    for (int i = 0; i < M; i++)
      x[i] = _mm512_maskz_loadu_ps(mask, a + i * lda + p);
    for (int r = 0; r < R; r++) {
      __m512 w = _mm512_maskz_loadu_ps(mask, b + r * ldb + p);
      for (int i = 0; i < M; i++)
        s[i][r] = _mm512_fmadd_ps(x[i], w, s[i][r]);
    }
  }
  for (int i = 0; i < M; i++)
    for (int r = 0; r < R; r++)
      out[i * R + r] = _mm512_reduce_add_ps(s[i][r]);
}
#else
template <int M, int R>
inline void dotTile(const float *a, int64_t lda, const float *b, int64_t ldb, int64_t k,
                    float *out, const float *) {
  dotTilePortable<M, R>(a, lda, b, ldb, k, out);
}
#endif

template <int M, int R>
inline void dotTile(const double *a, int64_t lda, const double *b, int64_t ldb, int64_t k,
                    double *out, const double *) {
  dotTilePortable<M, R>(a, lda, b, ldb, k, out);
}

// acc[i * kBlockRows + r] for M rows of a against `rows` (<= kBlockRows) rows
// of b.
template <int M, class T>
inline void dotRows(const T *a, int64_t lda, const T *b, int64_t ldb, int64_t k,
                    int64_t rows, T *acc, const T *prefetch) {
  if (rows == kBlockRows) {
    dotTile<M, kBlockRows>(a, lda, b, ldb, k, acc, prefetch);
    return;
  }
  for (int64_t r = 0; r < rows; r++) {
    T one[M];
    dotTile<M, 1>(a, lda, b + r * ldb, ldb, k, one, (const T *)nullptr);
    for (int i = 0; i < M; i++)
      acc[i * kBlockRows + r] = one[i];
  }
}

} // namespace

template <class T>
void matvec_nt(const Context &ctx, int64_t m, int64_t n, int64_t k, const T *a,
               int64_t lda, const T *b, int64_t ldb, T *c, int64_t ldc, const T *bias,
               Epilogue act, const T *residual) {
  const int64_t numBlocks = (n + kBlockRows - 1) / kBlockRows;
  const int threads = std::max(1, ctx.numThreads);
  const bool parallel = threads > 1 && m * n * k >= kMinParallelWork;
#pragma omp parallel for schedule(static) num_threads(threads) if (parallel)
  for (int64_t blockIdx = 0; blockIdx < numBlocks; blockIdx++) {
    const int64_t j0 = blockIdx * kBlockRows;
    const int64_t rows = std::min<int64_t>(kBlockRows, n - j0);
    const T *block = b + j0 * ldb; // [rows, k], stride ldb
    // The next block is requested during the first tile only, so it arrives
    // while later tiles re-read this block from L1/L2 (m > 1). For m == 1
    // it measured a few percent above the hardware prefetcher alone. Past
    // the end of b the hint is harmless (prefetches never fault).
    const T *next = block + kBlockRows * ldb;
    for (int64_t i = 0; i < m; i += kTileRowsA) {
      const int64_t tileRows = std::min<int64_t>(kTileRowsA, m - i);
      T acc[kTileRowsA * kBlockRows]; // [tileRows, kBlockRows]
      if (tileRows == 2)
        dotRows<2>(a + i * lda, lda, block, ldb, k, rows, acc, i == 0 ? next : nullptr);
      else
        dotRows<1>(a + i * lda, lda, block, ldb, k, rows, acc, i == 0 ? next : nullptr);
      for (int64_t t = 0; t < tileRows; t++) {
        T *out = c + (i + t) * ldc + j0;
        // residual may alias c: each element is read before it is written.
        const T *res = residual ? residual + (i + t) * ldc + j0 : nullptr;
        for (int64_t r = 0; r < rows; r++) {
          T v = acc[t * kBlockRows + r];
          if (bias)
            v += bias[j0 + r];
          v = activate(act, v);
          if (res)
            v += res[r];
          out[r] = v;
        }
      }
    }
  }
}

template void matvec_nt<float>(const Context &, int64_t, int64_t, int64_t, const float *,
                               int64_t, const float *, int64_t, float *, int64_t,
                               const float *, Epilogue, const float *);
template void matvec_nt<double>(const Context &, int64_t, int64_t, int64_t,
                                const double *, int64_t, const double *, int64_t,
                                double *, int64_t, const double *, Epilogue,
                                const double *);

} // namespace host
} // namespace bmrt
