//===- backward_shim.cpp - C entry points to the backward kernels, ctypes -===//
//
// The Python reference test (backward_reference_test.py) calls the backward
// kernels (and the forwards it differentiates numerically) through these
// functions and compares with torch.autograd. Same conventions as
// kernels_shim.cpp: `dtype` 0 = float, 1 = double; untyped buffers; returns
// 0, or 1 with bmrt::Error's message in `err`.
//
//===----------------------------------------------------------------------===//
#include "bmrt/kernels_backward.h"

#include <cstdio>
#include <exception>
#include <vector>

#include "shim_common.h"

using namespace bmrt;

namespace {

using shim::byDtype;
using shim::guarded;
using shim::makeContext;

// bmb-autocast's reduced-precision attention (AttentionArgs::lowp) for the
// next bwd_attention_forward / _backward calls: 0 = off, 1 = bf16, 2 = fp16.
int attentionLowp = 0;

AttentionArgs attentionArgs(const int64_t *iargs, float scale, const int32_t *keyMask) {
  AttentionArgs a = shim::attentionArgs(iargs, scale, keyMask);
  a.lowp = attentionLowp != 0;
  a.lowPrecision = attentionLowp == 2 ? LowPrecision::FP16 : LowPrecision::BF16;
  return a;
}

} // namespace

extern "C" {

int bwd_layernorm_forward_save(int dtype, void *out, void *mean, void *rstd, const void *x,
                               const void *w, const void *b, int64_t rows, int64_t C,
                               float eps, int threads, char *err, int errLen) {
  return guarded(err, errLen, [&] {
    Context ctx = makeContext(threads);
    byDtype(dtype, [&](auto zero) {
      using T = decltype(zero);
      layernorm_forward_save<T>(ctx, (T *)out, (T *)mean, (T *)rstd, (const T *)x,
                                (const T *)w, (const T *)b, rows, C, eps);
    });
  });
}

int bwd_layernorm_backward(int dtype, void *dx, void *dw, void *db, const void *dout,
                           const void *x, const void *w, const void *mean,
                           const void *rstd, int64_t rows, int64_t C, float eps,
                           int threads, char *err, int errLen) {
  return guarded(err, errLen, [&] {
    Context ctx = makeContext(threads);
    byDtype(dtype, [&](auto zero) {
      using T = decltype(zero);
      layernorm_backward<T>(ctx, (T *)dx, (T *)dw, (T *)db, (const T *)dout, (const T *)x,
                            (const T *)w, (const T *)mean, (const T *)rstd, rows, C, eps);
    });
  });
}

int bwd_rmsnorm_forward_save(int dtype, void *out, void *rstd, const void *x,
                             const void *w, int64_t rows, int64_t C, float eps,
                             int threads, char *err, int errLen) {
  return guarded(err, errLen, [&] {
    Context ctx = makeContext(threads);
    byDtype(dtype, [&](auto zero) {
      using T = decltype(zero);
      rmsnorm_forward_save<T>(ctx, (T *)out, (T *)rstd, (const T *)x, (const T *)w, rows,
                              C, eps);
    });
  });
}

int bwd_rmsnorm_backward(int dtype, void *dx, void *dw, const void *dout, const void *x,
                         const void *w, const void *rstd, int64_t rows, int64_t C,
                         float eps, int threads, char *err, int errLen) {
  return guarded(err, errLen, [&] {
    Context ctx = makeContext(threads);
    byDtype(dtype, [&](auto zero) {
      using T = decltype(zero);
      rmsnorm_backward<T>(ctx, (T *)dx, (T *)dw, (const T *)dout, (const T *)x,
                          (const T *)w, (const T *)rstd, rows, C, eps);
    });
  });
}

int bwd_act_backward(int dtype, void *dx, const void *x, const void *dout, int64_t n,
                     int act, int threads, char *err, int errLen) {
  return guarded(err, errLen, [&] {
    Context ctx = makeContext(threads);
    byDtype(dtype, [&](auto zero) {
      using T = decltype(zero);
      act_backward<T>(ctx, (T *)dx, (const T *)x, (const T *)dout, n, (Epilogue)act);
    });
  });
}

int bwd_set_attention_lowp(int p) {
  attentionLowp = p;
  return 0;
}

// The training-shape forward: k/v caches are scratch copies (start 0).
int bwd_attention_forward(int dtype, const int64_t *iargs, float scale,
                          const int32_t *keyMask, void *out, const void *q, const void *k,
                          const void *v, int threads, char *err, int errLen) {
  return guarded(err, errLen, [&] {
    AttentionArgs a = attentionArgs(iargs, scale, keyMask);
    Context ctx = makeContext(threads);
    byDtype(dtype, [&](auto zero) {
      using T = decltype(zero);
      std::vector<T> kc(a.batch * a.cacheCapacity * a.kvHeads * a.headDim);
      std::vector<T> vc(kc.size());
      attention_forward<T>(ctx, a, (T *)out, (const T *)q, (const T *)k, (const T *)v,
                           kc.data(), vc.data());
    });
  });
}

int bwd_attention_backward(int dtype, const int64_t *iargs, float scale,
                           const int32_t *keyMask, void *dq, void *dk, void *dv,
                           const void *dout, const void *q, const void *k, const void *v,
                           int threads, char *err, int errLen) {
  return guarded(err, errLen, [&] {
    AttentionArgs a = attentionArgs(iargs, scale, keyMask);
    Context ctx = makeContext(threads);
    byDtype(dtype, [&](auto zero) {
      using T = decltype(zero);
      attention_backward<T>(ctx, a, (T *)dq, (T *)dk, (T *)dv, (const T *)dout,
                            (const T *)q, (const T *)k, (const T *)v);
    });
  });
}

// Prefix tuning's attention (attention_prefix.cpp): separate q/k/v/out of
// [B, rows, width] (iargs as attentionArgs, cacheCapacity = rows, start 0),
// prefixes pk/pv [P, kv width]; gate may be null.
int bwd_attention_prefix_forward(int dtype, const int64_t *iargs, float scale,
                                 const int32_t *keyMask, int64_t P, const void *pk,
                                 const void *pv, const void *gate, void *out, const void *q,
                                 const void *k, const void *v, int threads, char *err,
                                 int errLen) {
  return guarded(err, errLen, [&] {
    AttentionArgs a = attentionArgs(iargs, scale, keyMask);
    a.cacheCapacity += P; // the caches hold the prefix rows too
    Context ctx = makeContext(threads);
    byDtype(dtype, [&](auto zero) {
      using T = decltype(zero);
      std::vector<T> kc(a.batch * a.cacheCapacity * a.kvHeads * a.headDim);
      std::vector<T> vc(kc.size());
      attention_prefix_forward<T>(ctx, a, P, (const T *)pk, (const T *)pv, (const T *)gate,
                                  (T *)out, (const T *)q, (const T *)k, (const T *)v,
                                  kc.data(), vc.data());
    });
  });
}

int bwd_attention_prefix_backward(int dtype, const int64_t *iargs, float scale,
                                  const int32_t *keyMask, int64_t P, const void *pk,
                                  const void *pv, const void *gate, void *dpk, void *dpv,
                                  void *dq, void *dk, void *dv, const void *dout,
                                  const void *q, const void *k, const void *v, int threads,
                                  char *err, int errLen) {
  return guarded(err, errLen, [&] {
    AttentionArgs a = attentionArgs(iargs, scale, keyMask);
    Context ctx = makeContext(threads);
    byDtype(dtype, [&](auto zero) {
      using T = decltype(zero);
      attention_prefix_backward<T>(ctx, a, P, (const T *)pk, (const T *)pv, (const T *)gate,
                                   (T *)dpk, (T *)dpv, (T *)dq, (T *)dk, (T *)dv,
                                   (const T *)dout, (const T *)q, (const T *)k, (const T *)v);
    });
  });
}

int bwd_softmax_backward(int dtype, void *dx, const void *out, const void *dout,
                         int64_t rows, int64_t C, int threads, char *err, int errLen) {
  return guarded(err, errLen, [&] {
    Context ctx = makeContext(threads);
    byDtype(dtype, [&](auto zero) {
      using T = decltype(zero);
      softmax_backward<T>(ctx, (T *)dx, (const T *)out, (const T *)dout, rows, C);
    });
  });
}

int bwd_rotary_backward(int dtype, void *dx, const void *dout, const int32_t *pos,
                        int64_t rows, int64_t heads, int64_t headDim, int64_t rowStride,
                        float base, int threads, char *err, int errLen) {
  return guarded(err, errLen, [&] {
    Context ctx = makeContext(threads);
    byDtype(dtype, [&](auto zero) {
      using T = decltype(zero);
      rotary_backward<T>(ctx, (T *)dx, (const T *)dout, pos, rows, heads, headDim,
                         rowStride, base);
    });
  });
}

int bwd_embedding_forward(int dtype, void *out, const int32_t *ids, const void *table,
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

int bwd_embedding_backward(int dtype, void *dtable, const int32_t *ids, const void *dout,
                           int64_t rows, int64_t vocab, int64_t C, int threads, char *err,
                           int errLen) {
  return guarded(err, errLen, [&] {
    Context ctx = makeContext(threads);
    byDtype(dtype, [&](auto zero) {
      using T = decltype(zero);
      embedding_backward<T>(ctx, (T *)dtable, ids, (const T *)dout, rows, vocab, C);
    });
  });
}

int bwd_copy_strided_backward(int dtype, void *dx, const void *dout, int64_t outer,
                              int64_t inner, int64_t xOuterStride, int64_t xOffset,
                              int threads, char *err, int errLen) {
  return guarded(err, errLen, [&] {
    Context ctx = makeContext(threads);
    byDtype(dtype, [&](auto zero) {
      using T = decltype(zero);
      copy_strided_backward<T>(ctx, (T *)dx, (const T *)dout, outer, inner, xOuterStride,
                               xOffset);
    });
  });
}

int bwd_sum_rows(int dtype, void *out, const void *x, int64_t rows, int64_t C, int threads,
                 char *err, int errLen) {
  return guarded(err, errLen, [&] {
    Context ctx = makeContext(threads);
    byDtype(dtype, [&](auto zero) {
      using T = decltype(zero);
      sum_rows<T>(ctx, (T *)out, (const T *)x, rows, C);
    });
  });
}

} // extern "C"
