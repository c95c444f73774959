//===- gemm_shim.cpp - C entry point to bmrt::gemm, for ctypes -----------===//
//
// gemm_reference_test.py calls bmrt::gemm through this function and checks
// the result with numpy/torch. It runs with profiling on and reports which
// kernel kind handled the call, so the test can also check that m == 1 took
// the matrix-vector path and larger m the BLAS path.
//
//===----------------------------------------------------------------------===//
#include "bmrt/kernels.h"
#include "bmrt/kernels_backward.h"

#include <cstdio>
#include <exception>

using namespace bmrt;

extern "C" {

// dtype: 0 = float, 1 = double. transB: 0 = N, 1 = T. act: bmrt::Epilogue.
// kindCalls (may be null) receives {gemm calls, gemv calls}.
// Returns 0, or 1 with the bmrt::Error message in err.
int bmrt_test_gemm(int dtype, int threads, int64_t m, int64_t n, int64_t k, const void *a,
                   int64_t lda, const void *b, int64_t ldb, int transB, void *c,
                   int64_t ldc, const void *bias, int act, const void *residual,
                   int64_t *kindCalls, char *err, int errLen) {
  Context ctx;
  ctx.numThreads = threads;
  ctx.profile = true;
  try {
    if (dtype == 0)
      gemm<float>(ctx, m, n, k, (const float *)a, lda, (const float *)b, ldb,
                  (Trans)transB, (float *)c, ldc, (const float *)bias, (Epilogue)act,
                  (const float *)residual);
    else if (dtype == 1)
      gemm<double>(ctx, m, n, k, (const double *)a, lda, (const double *)b, ldb,
                   (Trans)transB, (double *)c, ldc, (const double *)bias, (Epilogue)act,
                   (const double *)residual);
    else
      fail("gemm_shim: dtype must be 0 (float) or 1 (double)");
  } catch (const std::exception &e) {
    if (err && errLen > 0)
      std::snprintf(err, errLen, "%s", e.what());
    return 1;
  }
  if (kindCalls) {
    kindCalls[0] = ctx.calls[(int)KernelKind::Gemm];
    kindCalls[1] = ctx.calls[(int)KernelKind::Gemv];
  }
  return 0;
}

// bmrt::gemm_ex: transA/transB 0 = N, 1 = T; accumulate 0/1.
int bmrt_test_gemm_ex(int dtype, int threads, int transA, int transB, int64_t m, int64_t n,
                      int64_t k, const void *a, int64_t lda, const void *b, int64_t ldb,
                      void *c, int64_t ldc, int accumulate, char *err, int errLen) {
  Context ctx;
  ctx.numThreads = threads;
  try {
    if (dtype == 0)
      gemm_ex<float>(ctx, (Trans)transA, (Trans)transB, m, n, k, (const float *)a, lda,
                     (const float *)b, ldb, (float *)c, ldc, accumulate != 0);
    else if (dtype == 1)
      gemm_ex<double>(ctx, (Trans)transA, (Trans)transB, m, n, k, (const double *)a, lda,
                      (const double *)b, ldb, (double *)c, ldc, accumulate != 0);
    else
      fail("gemm_shim: dtype must be 0 (float) or 1 (double)");
  } catch (const std::exception &e) {
    if (err && errLen > 0)
      std::snprintf(err, errLen, "%s", e.what());
    return 1;
  }
  return 0;
}

} // extern "C"
