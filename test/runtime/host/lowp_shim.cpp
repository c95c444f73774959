//===- lowp_shim.cpp - C entry points to bmrt/lowp.h, for ctypes ----------===//
//
// lowp_reference_test.py checks the bf16/fp16 conversions bit for bit
// against torch's and the reduced-input GEMMs against torch matmuls of
// bf16/fp16-rounded operands in fp64.
//
//===----------------------------------------------------------------------===//
#include "bmrt/lowp.h"

#include <cstdio>
#include <exception>

using namespace bmrt;

namespace {
template <class F>
int guarded(char *err, int errLen, F f) {
  try {
    f();
  } catch (const std::exception &e) {
    std::snprintf(err, (size_t)errLen, "%s", e.what());
    return 1;
  }
  return 0;
}
} // namespace

extern "C" {

// kind 0: fp32 -> bf16 bits; 1: bf16 bits -> fp32; 2: fp32 -> fp16 bits; 3: fp16 bits -> fp32.
int bmrt_test_convert(int kind, int threads, void *out, const void *in, int64_t n, char *err,
                      int errLen) {
  return guarded(err, errLen, [&] {
    Context ctx;
    ctx.numThreads = threads;
    switch (kind) {
    case 0: return convert(ctx, (bf16 *)out, (const float *)in, n);
    case 1: return convert(ctx, (float *)out, (const bf16 *)in, n);
    case 2: return convert(ctx, (fp16 *)out, (const float *)in, n);
    case 3: return convert(ctx, (float *)out, (const fp16 *)in, n);
    default: fail("lowp_shim: kind must be 0..3");
    }
  });
}

// precision: LowPrecision (0 bf16, 1 fp16); trans*: 0 = N, 1 = T.
int bmrt_test_gemm_lowp(int precision, int threads, int64_t m, int64_t n, int64_t k,
                        const float *a, int64_t lda, const float *b, int64_t ldb, int transB,
                        float *c, int64_t ldc, const float *bias, int act, char *err,
                        int errLen) {
  return guarded(err, errLen, [&] {
    Context ctx;
    ctx.numThreads = threads;
    gemm_lowp(ctx, (LowPrecision)precision, m, n, k, a, lda, b, ldb, (Trans)transB, c, ldc,
              bias, (Epilogue)act, nullptr);
  });
}

int bmrt_test_gemm_ex_lowp(int precision, int threads, int transA, int transB, int64_t m,
                           int64_t n, int64_t k, const float *a, int64_t lda, const float *b,
                           int64_t ldb, float *c, int64_t ldc, int accumulate, char *err,
                           int errLen) {
  return guarded(err, errLen, [&] {
    Context ctx;
    ctx.numThreads = threads;
    gemm_ex_lowp(ctx, (LowPrecision)precision, (Trans)transA, (Trans)transB, m, n, k, a, lda,
                 b, ldb, c, ldc, accumulate != 0);
  });
}

} // extern "C"
