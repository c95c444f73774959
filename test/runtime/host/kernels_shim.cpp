//===- kernels_shim.cpp - C entry points to the host kernels, for ctypes --===//
//
// The Python reference tests (kernels_reference_test.py) call our kernels
// through these functions and compare with torch / transformers. Each takes
// `dtype` (0 = float, 1 = double) and untyped buffers, catches bmrt::Error
// and returns 0 on success or 1 with the message copied into `err`, so an
// error path can be checked from Python too.
//
//===----------------------------------------------------------------------===//
#include "bmrt/kernels.h"

#include <cstdio>
#include <exception>

#include "shim_common.h"

using namespace bmrt;

namespace {

using shim::byDtype;
using shim::guarded;
using shim::makeContext;

} // namespace

extern "C" {

// iargs: as shim::attentionArgs.
int kernels_attention(int dtype, const int64_t *iargs, float scale, const int32_t *keyMask,
                      void *out, const void *q, const void *k, const void *v, void *kCache,
                      void *vCache, int threads, char *err, int errLen) {
  return guarded(err, errLen, [&] {
    AttentionArgs a = shim::attentionArgs(iargs, scale, keyMask);
    Context ctx = makeContext(threads);
    byDtype(dtype, [&](auto zero) {
      using T = decltype(zero);
      attention_forward<T>(ctx, a, (T *)out, (const T *)q, (const T *)k, (const T *)v,
                           (T *)kCache, (T *)vCache);
    });
  });
}

int kernels_layernorm(int dtype, void *out, const void *x, const void *w, const void *b,
                      int64_t rows, int64_t C, float eps, int threads, char *err,
                      int errLen) {
  return guarded(err, errLen, [&] {
    Context ctx = makeContext(threads);
    byDtype(dtype, [&](auto zero) {
      using T = decltype(zero);
      layernorm_forward<T>(ctx, (T *)out, (const T *)x, (const T *)w, (const T *)b, rows,
                           C, eps);
    });
  });
}

int kernels_residual_layernorm(int dtype, void *sum, void *out, const void *a,
                               const void *r, const void *w, const void *b, int64_t rows,
                               int64_t C, float eps, int threads, char *err, int errLen) {
  return guarded(err, errLen, [&] {
    Context ctx = makeContext(threads);
    byDtype(dtype, [&](auto zero) {
      using T = decltype(zero);
      residual_layernorm_forward<T>(ctx, (T *)sum, (T *)out, (const T *)a, (const T *)r,
                                    (const T *)w, (const T *)b, rows, C, eps);
    });
  });
}

int kernels_rmsnorm(int dtype, void *out, const void *x, const void *w, int64_t rows,
                    int64_t C, float eps, int threads, char *err, int errLen) {
  return guarded(err, errLen, [&] {
    Context ctx = makeContext(threads);
    byDtype(dtype, [&](auto zero) {
      using T = decltype(zero);
      rmsnorm_forward<T>(ctx, (T *)out, (const T *)x, (const T *)w, rows, C, eps);
    });
  });
}

int kernels_residual_rmsnorm(int dtype, void *sum, void *out, const void *a, const void *r,
                             const void *w, int64_t rows, int64_t C, float eps, int threads,
                             char *err, int errLen) {
  return guarded(err, errLen, [&] {
    Context ctx = makeContext(threads);
    byDtype(dtype, [&](auto zero) {
      using T = decltype(zero);
      residual_rmsnorm_forward<T>(ctx, (T *)sum, (T *)out, (const T *)a, (const T *)r,
                                  (const T *)w, rows, C, eps);
    });
  });
}

int kernels_softmax(int dtype, void *out, const void *x, int64_t rows, int64_t C,
                    int threads, char *err, int errLen) {
  return guarded(err, errLen, [&] {
    Context ctx = makeContext(threads);
    byDtype(dtype, [&](auto zero) {
      using T = decltype(zero);
      softmax_forward<T>(ctx, (T *)out, (const T *)x, rows, C);
    });
  });
}

int kernels_rotary(int dtype, void *out, const void *x, const int32_t *pos, int64_t rows,
                   int64_t heads, int64_t headDim, int64_t rowStride, float base,
                   int threads, char *err, int errLen) {
  return guarded(err, errLen, [&] {
    Context ctx = makeContext(threads);
    byDtype(dtype, [&](auto zero) {
      using T = decltype(zero);
      rotary_forward<T>(ctx, (T *)out, (const T *)x, pos, rows, heads, headDim, rowStride,
                        base);
    });
  });
}

int kernels_embedding(int dtype, void *out, const int32_t *ids, const void *table,
                      int64_t rows, int64_t vocab, int64_t C, int threads, char *err,
                      int errLen) {
  return guarded(err, errLen, [&] {
    Context ctx = makeContext(threads);
    byDtype(dtype, [&](auto zero) {
      using T = decltype(zero);
      embedding_forward<T>(ctx, (T *)out, ids, (const T *)table, rows, vocab, C);
    });
  });
}

int kernels_positions(int32_t *out, int64_t rows, int64_t start, char *err, int errLen) {
  return guarded(err, errLen, [&] {
    Context ctx = makeContext(1);
    positions_forward(ctx, out, rows, start);
  });
}

int kernels_copy_strided(int dtype, void *out, const void *x, int64_t outer, int64_t inner,
                         int64_t xOuterStride, int64_t xOffset, int threads, char *err,
                         int errLen) {
  return guarded(err, errLen, [&] {
    Context ctx = makeContext(threads);
    byDtype(dtype, [&](auto zero) {
      using T = decltype(zero);
      copy_strided<T>(ctx, (T *)out, (const T *)x, outer, inner, xOuterStride, xOffset);
    });
  });
}

} // extern "C"
