//===- host/backward_gemm.cpp - GEMM with transposes, row sums (CPU) ------===//
//
// Why it is shaped like this:
//  - gemm_ex is the backward's GEMM: the weight gradient needs op(a) = dy^T
//    and both gradients accumulate (micro-batches, tied weights), which
//    BLAS does for free with beta = 1. It is a thin checked call into
//    OpenBLAS; the forward's gemm() keeps its epilogue and matvec path.
//  - sum_rows is the bias gradient. A reduction over rows split across
//    threads would change the order of additions with the thread count, so
//    threads split the columns and each walks all rows in order.
//  - Arguments are checked on every call: a wrong leading dimension from the
//    emitter must fail loudly, not read out of bounds.
//
//===----------------------------------------------------------------------===//
#include "bmrt/kernels_backward.h"
#include "host/host_common.h"

#include <cblas.h>

#include <algorithm>
#include <cstring>
#include <string>

namespace bmrt {
namespace {

using host::threadCount;

constexpr int64_t kParallelElements = 1 << 15;
constexpr int64_t kColumnBlock = 64; // sum_rows: columns per work item

void checkGemmExArgs(Trans transA, Trans transB, int64_t m, int64_t n, int64_t k,
                     const void *a, int64_t lda, const void *b, int64_t ldb, const void *c,
                     int64_t ldc) {
  auto bad = [&](const std::string &what) {
    fail("gemm_ex(m=" + std::to_string(m) + ", n=" + std::to_string(n) +
         ", k=" + std::to_string(k) + "): " + what);
  };
  if (m < 0 || n < 0 || k < 0)
    bad("negative dimension");
  if ((transA != Trans::N && transA != Trans::T) || (transB != Trans::N && transB != Trans::T))
    bad("invalid transA/transB");
  const int64_t aRowLen = transA == Trans::T ? m : k; // a is [k, m] or [m, k]
  const int64_t bRowLen = transB == Trans::T ? k : n; // b is [n, k] or [k, n]
  if (lda < std::max<int64_t>(1, aRowLen))
    bad("lda=" + std::to_string(lda) + " is less than " +
        (transA == Trans::T ? "m (A is [k, m])" : "k (A is [m, k])"));
  if (ldb < std::max<int64_t>(1, bRowLen))
    bad("ldb=" + std::to_string(ldb) + " is less than " +
        (transB == Trans::T ? "k (B is [n, k])" : "n (B is [k, n])"));
  if (ldc < std::max<int64_t>(1, n))
    bad("ldc=" + std::to_string(ldc) + " is less than n");
  if (m > 0 && n > 0 && (!c || (k > 0 && (!a || !b))))
    bad("null a, b or c");
}

CBLAS_TRANSPOSE blasTrans(Trans t) { return t == Trans::T ? CblasTrans : CblasNoTrans; }

void blasGemm(Trans ta, Trans tb, int64_t m, int64_t n, int64_t k, const float *a,
              int64_t lda, const float *b, int64_t ldb, float beta, float *c, int64_t ldc) {
  cblas_sgemm(CblasRowMajor, blasTrans(ta), blasTrans(tb), m, n, k, 1.0f, a, lda, b, ldb,
              beta, c, ldc);
}
void blasGemm(Trans ta, Trans tb, int64_t m, int64_t n, int64_t k, const double *a,
              int64_t lda, const double *b, int64_t ldb, double beta, double *c,
              int64_t ldc) {
  cblas_dgemm(CblasRowMajor, blasTrans(ta), blasTrans(tb), m, n, k, 1.0, a, lda, b, ldb,
              beta, c, ldc);
}

} // namespace

template <class T>
void gemm_ex(Context &ctx, Trans transA, Trans transB, int64_t m, int64_t n, int64_t k,
             const T *a, int64_t lda, const T *b, int64_t ldb, T *c, int64_t ldc,
             bool accumulate) {
  checkGemmExArgs(transA, transB, m, n, k, a, lda, b, ldb, c, ldc);
  if (m == 0 || n == 0)
    return;
  ProfileScope scope(ctx, KernelKind::Gemm);
  if (k == 0) {
    // An empty sum (BLAS would reject the leading dimensions).
    if (!accumulate)
      for (int64_t i = 0; i < m; ++i)
        std::fill(c + i * ldc, c + i * ldc + n, T(0));
    return;
  }
  blasGemm(transA, transB, m, n, k, a, lda, b, ldb, accumulate ? T(1) : T(0), c, ldc);
}

template <class T>
void sum_rows(Context &ctx, T *out, const T *x, int64_t rows, int64_t C) {
  ProfileScope profile(ctx, KernelKind::Generated);
  if (rows < 0 || C < 0)
    fail("sum_rows: needs rows >= 0 and C >= 0 (got rows " + std::to_string(rows) + ", C " +
         std::to_string(C) + ")");
  const int64_t blocks = (C + kColumnBlock - 1) / kColumnBlock;
#pragma omp parallel for num_threads(threadCount(ctx)) schedule(static) \
    if (rows * C >= kParallelElements && blocks > 1)
  for (int64_t blk = 0; blk < blocks; ++blk) {
    const int64_t c0 = blk * kColumnBlock;
    const int64_t n = std::min(kColumnBlock, C - c0);
    T *o = out + c0; // [n]
    for (int64_t r = 0; r < rows; ++r) {
      const T *xr = x + r * C + c0; // [n]
#pragma omp simd
      for (int64_t i = 0; i < n; ++i)
        o[i] += xr[i];
    }
  }
}

template <class T> void fill_zero(Context &, T *x, int64_t n) {
  if (n < 0)
    fail("fill_zero: n must be >= 0 (got " + std::to_string(n) + ")");
  if (n > 0)
    std::memset(static_cast<void *>(x), 0, size_t(n) * sizeof(T));
}

#define BMRT_INSTANTIATE_BACKWARD_GEMM(T)                                                \
  template void gemm_ex<T>(Context &, Trans, Trans, int64_t, int64_t, int64_t, const T *, \
                           int64_t, const T *, int64_t, T *, int64_t, bool);             \
  template void sum_rows<T>(Context &, T *, const T *, int64_t, int64_t);                \
  template void fill_zero<T>(Context &, T *, int64_t);
BMRT_INSTANTIATE_BACKWARD_GEMM(float)
BMRT_INSTANTIATE_BACKWARD_GEMM(double)
#undef BMRT_INSTANTIATE_BACKWARD_GEMM

} // namespace bmrt
