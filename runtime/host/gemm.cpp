//===- host/gemm.cpp - GEMM with bias/activation/residual epilogue --------===//
//
// The one place that knows about layouts and transposes (kernels.h). The
// product goes to OpenBLAS (its OpenMP build, so BLAS and our loops share one
// thread pool); the epilogue act(. + bias) + residual is then one parallel
// pass over c while it is still warm in cache. Small m with B stored [n, k]
// (batch-1 decode) goes to the hand-written matvec_nt instead, which fuses
// the epilogue and reads B exactly once (see gemv.cpp, bench/gemv).
// Argument checks are cheap and run on every call: a wrong leading dimension
// from the emitter must fail loudly, not read out of bounds.
//
//===----------------------------------------------------------------------===//
#include "bmrt/kernels.h"
#include "host/gemv.h"

#include <cblas.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

namespace bmrt {
namespace {

// Below this many elements of c the epilogue pass runs on one thread.
constexpr int64_t kMinParallelElements = 1 << 14;

void checkGemmArgs(int64_t m, int64_t n, int64_t k, const void *a, int64_t lda,
                   const void *b, int64_t ldb, Trans transB, const void *c, int64_t ldc,
                   Epilogue act) {
  auto bad = [&](const std::string &what) {
    fail("gemm(m=" + std::to_string(m) + ", n=" + std::to_string(n) +
         ", k=" + std::to_string(k) + "): " + what);
  };
  if (m < 0 || n < 0 || k < 0)
    bad("negative dimension");
  if (transB != Trans::N && transB != Trans::T)
    bad("invalid transB " + std::to_string((int)transB));
  if ((int)act < (int)Epilogue::None || (int)act > (int)Epilogue::Tanh)
    bad("invalid epilogue " + std::to_string((int)act));
  const int64_t bRowLen = transB == Trans::T ? k : n;
  if (lda < k)
    bad("lda=" + std::to_string(lda) + " is less than k");
  if (ldb < bRowLen)
    bad("ldb=" + std::to_string(ldb) + " is less than " +
        (transB == Trans::T ? "k (B is [n, k])" : "n (B is [k, n])"));
  if (ldc < n)
    bad("ldc=" + std::to_string(ldc) + " is less than n");
  if (m > 0 && n > 0 && (!c || (k > 0 && (!a || !b))))
    bad("null a, b or c");
}

void blasGemm(int64_t m, int64_t n, int64_t k, const float *a, int64_t lda,
              const float *b, int64_t ldb, Trans transB, float beta, float *c,
              int64_t ldc) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, transB == Trans::T ? CblasTrans : CblasNoTrans,
              m, n, k, 1.0f, a, lda, b, ldb, beta, c, ldc);
}
void blasGemm(int64_t m, int64_t n, int64_t k, const double *a, int64_t lda,
              const double *b, int64_t ldb, Trans transB, double beta, double *c,
              int64_t ldc) {
  cblas_dgemm(CblasRowMajor, CblasNoTrans, transB == Trans::T ? CblasTrans : CblasNoTrans,
              m, n, k, 1.0, a, lda, b, ldb, beta, c, ldc);
}

// c[0, :] = a[0, :] . B + beta c[0, :] with B stored [k, n]: y = B^T x in
// BLAS terms.
void blasGemvN(int64_t n, int64_t k, const float *a, const float *b, int64_t ldb,
               float beta, float *c) {
  cblas_sgemv(CblasRowMajor, CblasTrans, k, n, 1.0f, b, ldb, a, 1, beta, c, 1);
}
void blasGemvN(int64_t n, int64_t k, const double *a, const double *b, int64_t ldb,
               double beta, double *c) {
  cblas_dgemv(CblasRowMajor, CblasTrans, k, n, 1.0, b, ldb, a, 1, beta, c, 1);
}

// c = a . op(b) + beta c, beta 0 or 1 (beta 0 ignores what c held).
template <class T>
void product(int64_t m, int64_t n, int64_t k, const T *a, int64_t lda, const T *b,
             int64_t ldb, Trans transB, T beta, T *c, int64_t ldc) {
  if (k == 0) {
    // An empty sum; BLAS would reject lda = 0 here.
    if (beta == T(0))
      for (int64_t i = 0; i < m; i++)
        std::fill(c + i * ldc, c + i * ldc + n, T(0));
  } else if (m == 1 && transB == Trans::N) {
    blasGemvN(n, k, a, b, ldb, beta, c);
  } else {
    blasGemm(m, n, k, a, lda, b, ldb, transB, beta, c, ldc);
  }
}

// c = act(src + bias) + residual over [m, n] (src has row stride ldSrc and
// is c itself except when residual aliases c, see gemm); the activation is a
// template argument so the inner loop has no switch.
template <class T, class Act>
void epiloguePass(const Context &ctx, int64_t m, int64_t n, const T *src, int64_t ldSrc,
                  T *c, int64_t ldc, const T *bias, const T *residual, Act act) {
  const int threads = std::max(1, ctx.numThreads);
#pragma omp parallel for schedule(static)                                                \
    num_threads(threads) if (threads > 1 && m * n >= kMinParallelElements)
  for (int64_t i = 0; i < m; i++) {
    const T *in = src + i * ldSrc;
    T *row = c + i * ldc;
    const T *res = residual ? residual + i * ldc : nullptr; // may alias row
    // Each j reads in[j], res[j] and writes row[j] only: vectorizing is safe
    // even when they are the same row.
#pragma omp simd
    for (int64_t j = 0; j < n; j++) {
      T v = in[j];
      if (bias)
        v += bias[j];
      v = act(v);
      if (res)
        v += res[j];
      row[j] = v;
    }
  }
}

// Whether [m, n] matrices at x and y with row stride ld share memory.
template <class T>
bool overlaps(const T *x, const T *y, int64_t m, int64_t n, int64_t ld) {
  const T *xEnd = x + (m - 1) * ld + n, *yEnd = y + (m - 1) * ld + n;
  return std::less<const T *>()(x, yEnd) && std::less<const T *>()(y, xEnd);
}

template <class T>
void applyEpilogue(const Context &ctx, int64_t m, int64_t n, const T *src, int64_t ldSrc,
                   T *c, int64_t ldc, const T *bias, Epilogue act, const T *residual) {
  switch (act) {
  case Epilogue::None:
    if (bias || residual)
      epiloguePass(ctx, m, n, src, ldSrc, c, ldc, bias, residual, [](T x) { return x; });
    return;
  case Epilogue::GeluTanh:
    return epiloguePass(ctx, m, n, src, ldSrc, c, ldc, bias, residual,
                        [](T x) { return gelu_tanh(x); });
  case Epilogue::GeluErf:
    return epiloguePass(ctx, m, n, src, ldSrc, c, ldc, bias, residual,
                        [](T x) { return gelu_erf(x); });
  case Epilogue::Relu:
    return epiloguePass(ctx, m, n, src, ldSrc, c, ldc, bias, residual,
                        [](T x) { return relu(x); });
  case Epilogue::Silu:
    return epiloguePass(ctx, m, n, src, ldSrc, c, ldc, bias, residual,
                        [](T x) { return silu(x); });
  case Epilogue::Tanh:
    return epiloguePass(ctx, m, n, src, ldSrc, c, ldc, bias, residual,
                        [](T x) { return tanh_fast(x); });
  }
}

} // namespace

template <class T>
void gemm(Context &ctx, int64_t m, int64_t n, int64_t k, const T *a, int64_t lda,
          const T *b, int64_t ldb, Trans transB, T *c, int64_t ldc, const T *bias,
          Epilogue act, const T *residual) {
  checkGemmArgs(m, n, k, a, lda, b, ldb, transB, c, ldc, act);
  if (m == 0 || n == 0)
    return;
  if (residual && residual != c && overlaps(residual, c, m, n, ldc))
    fail("gemm: residual overlaps c without being c (in-place means residual == c)");
  if (transB == Trans::T && m <= host::kMatvecMaxRows) {
    ProfileScope scope(ctx, KernelKind::Gemv);
    host::matvec_nt(ctx, m, n, k, a, lda, b, ldb, c, ldc, bias, act, residual);
    return;
  }
  ProfileScope scope(ctx, m == 1 ? KernelKind::Gemv : KernelKind::Gemm);
  if (residual != c) {
    product(m, n, k, a, lda, b, ldb, transB, T(0), c, ldc);
    applyEpilogue(ctx, m, n, c, ldc, c, ldc, bias, act, residual);
  } else if (act == Epilogue::None) {
    // In-place residual add with no activation: BLAS accumulates into c.
    product(m, n, k, a, lda, b, ldb, transB, T(1), c, ldc);
    applyEpilogue(ctx, m, n, c, ldc, c, ldc, bias, act, (const T *)nullptr);
  } else {
    // act(a.b + bias) + c needs the product apart from c (rare: fusion puts
    // the residual after a projection without activation).
    std::vector<T> scratch((size_t)(m * n)); // [m, n]
    product(m, n, k, a, lda, b, ldb, transB, T(0), scratch.data(), n);
    applyEpilogue(ctx, m, n, (const T *)scratch.data(), n, c, ldc, bias, act, residual);
  }
}

template void gemm<float>(Context &, int64_t, int64_t, int64_t, const float *, int64_t,
                          const float *, int64_t, Trans, float *, int64_t, const float *,
                          Epilogue, const float *);
template void gemm<double>(Context &, int64_t, int64_t, int64_t, const double *, int64_t,
                           const double *, int64_t, Trans, double *, int64_t,
                           const double *, Epilogue, const double *);

} // namespace bmrt
