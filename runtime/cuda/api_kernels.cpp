//===- cuda/api_kernels.cpp - bmrt/kernels*.h on the GPU ------------------===//
//
// The kernel API of emitted programs (float; api.h says why) for the CUDA
// backend: each call goes to its device kernel on ctx.device.
// A bad token id is reported at the app's next checkDeviceErrors
// (kernels_cuda.h), not here: checking would synchronise every call.
//
//===----------------------------------------------------------------------===//
#include "bmrt/kernels.h"
#include "bmrt/kernels_backward.h"
#include "cuda/api.h"
#include "cuda/kernels_cuda.h"

#include <string>

namespace bmrt {
namespace cuda {

Device &deviceOf(Context &ctx) {
  if (!ctx.device)
    fail("a cuda kernel was called without a device (Context::device is null: the app "
         "did not open the GPU)");
  return *ctx.device;
}

// bmb-autocast's reduced-input attention (AttentionArgs::lowp) has host
// kernels only; bmbc leaves attention fp32 for --target=cuda, so a marked
// call here would otherwise be computed in fp32 without a word.
void refuseLowpAttention(const char *kernel, const AttentionArgs &a) {
  if (a.lowp)
    fail(std::string(kernel) + ": reduced-precision attention (AttentionArgs::lowp) is not "
                               "implemented on the cuda backend (bmbc keeps attention fp32 "
                               "for --target=cuda)");
}

} // namespace cuda

using cuda::deviceOf;
using cuda::refuseLowpAttention;

//===--- Forward kernels (kernels.h) ---------------------------------------===//

template <>
void gemm<float>(Context &ctx, int64_t m, int64_t n, int64_t k, const float *a, int64_t lda,
                 const float *b, int64_t ldb, Trans transB, float *c, int64_t ldc,
                 const float *bias, Epilogue act, const float *residual) {
  ProfileScope profile(ctx, KernelKind::Gemm);
  cuda::gemm(deviceOf(ctx), m, n, k, a, lda, b, ldb, transB, c, ldc, bias, act, residual);
}

template <>
void attention_forward<float>(Context &ctx, const AttentionArgs &args, float *out, const float *q,
                              const float *k, const float *v, float *kCache, float *vCache) {
  ProfileScope profile(ctx, KernelKind::Attention);
  refuseLowpAttention("attention_forward", args);
  cuda::attention_forward(deviceOf(ctx), args, out, q, k, v, kCache, vCache);
}

template <>
void attention_prefix_forward<float>(Context &ctx, const AttentionArgs &args, int64_t prefixRows,
                                     const float *pk, const float *pv, const float *gate,
                                     float *out, const float *q, const float *k, const float *v,
                                     float *kCache, float *vCache) {
  ProfileScope profile(ctx, KernelKind::Attention);
  cuda::attention_prefix_forward(deviceOf(ctx), args, prefixRows, pk, pv, gate, out, q, k, v,
                                 kCache, vCache);
}

template <>
void layernorm_forward<float>(Context &ctx, float *out, const float *x, const float *w,
                              const float *b, int64_t rows, int64_t C, float eps) {
  ProfileScope profile(ctx, KernelKind::Norm);
  cuda::layernorm_forward(deviceOf(ctx), out, nullptr, nullptr, x, w, b, rows, C, eps);
}

template <>
void residual_layernorm_forward<float>(Context &ctx, float *sum, float *out, const float *a,
                                       const float *r, const float *w, const float *b,
                                       int64_t rows, int64_t C, float eps) {
  ProfileScope profile(ctx, KernelKind::Norm);
  cuda::residual_layernorm_forward(deviceOf(ctx), sum, out, a, r, w, b, rows, C, eps);
}

template <>
void rmsnorm_forward<float>(Context &ctx, float *out, const float *x, const float *w,
                            int64_t rows, int64_t C, float eps) {
  ProfileScope profile(ctx, KernelKind::Norm);
  cuda::rmsnorm_forward(deviceOf(ctx), out, nullptr, x, w, rows, C, eps);
}

template <>
void residual_rmsnorm_forward<float>(Context &ctx, float *sum, float *out, const float *a,
                                     const float *r, const float *w, int64_t rows, int64_t C,
                                     float eps) {
  ProfileScope profile(ctx, KernelKind::Norm);
  cuda::residual_rmsnorm_forward(deviceOf(ctx), sum, out, a, r, w, rows, C, eps);
}

template <>
void softmax_forward<float>(Context &ctx, float *out, const float *x, int64_t rows, int64_t C) {
  ProfileScope profile(ctx, KernelKind::Softmax);
  cuda::softmax_forward(deviceOf(ctx), out, x, rows, C);
}

template <>
void rotary_forward<float>(Context &ctx, float *out, const float *x, const int32_t *pos,
                           int64_t rows, int64_t heads, int64_t headDim, int64_t rowStride,
                           float base) {
  ProfileScope profile(ctx, KernelKind::Rotary);
  cuda::rotary_forward(deviceOf(ctx), out, x, pos, rows, heads, headDim, rowStride, base);
}

template <>
void embedding_forward<float>(Context &ctx, float *out, const int32_t *ids, const float *table,
                              int64_t rows, int64_t vocab, int64_t C) {
  ProfileScope profile(ctx, KernelKind::Embedding);
  cuda::embedding_forward(deviceOf(ctx), out, ids, table, rows, vocab, C);
}

void positions_forward(Context &ctx, int32_t *out, int64_t rows, int64_t start) {
  ProfileScope profile(ctx, KernelKind::Copy);
  cuda::positions_forward(deviceOf(ctx), out, rows, start);
}

template <>
void copy_strided<float>(Context &ctx, float *out, const float *x, int64_t outer, int64_t inner,
                         int64_t xOuterStride, int64_t xOffset) {
  ProfileScope profile(ctx, KernelKind::Copy);
  cuda::copy_strided(deviceOf(ctx), out, x, outer, inner, xOuterStride, xOffset);
}

//===--- Backward kernels (kernels_backward.h) -----------------------------===//

template <>
void act_backward<float>(Context &ctx, float *dx, const float *x, const float *dout, int64_t n,
                         Epilogue act) {
  ProfileScope profile(ctx, KernelKind::Generated);
  cuda::act_backward(deviceOf(ctx), dx, x, dout, n, act);
}

template <>
void gemm_ex<float>(Context &ctx, Trans transA, Trans transB, int64_t m, int64_t n, int64_t k,
                    const float *a, int64_t lda, const float *b, int64_t ldb, float *c,
                    int64_t ldc, bool accumulate) {
  ProfileScope profile(ctx, KernelKind::Gemm);
  cuda::gemm_ex(deviceOf(ctx), transA, transB, m, n, k, a, lda, b, ldb, c, ldc, accumulate);
}

template <>
void sum_rows<float>(Context &ctx, float *out, const float *x, int64_t rows, int64_t C) {
  ProfileScope profile(ctx, KernelKind::Gemm);
  cuda::sum_rows(deviceOf(ctx), out, x, rows, C);
}

template <> void fill_zero<float>(Context &ctx, float *x, int64_t n) {
  ProfileScope profile(ctx, KernelKind::Copy);
  cuda::fill_zero(deviceOf(ctx), x, n);
}

template <>
void layernorm_forward_save<float>(Context &ctx, float *out, float *mean, float *rstd,
                                   const float *x, const float *w, const float *b, int64_t rows,
                                   int64_t C, float eps) {
  ProfileScope profile(ctx, KernelKind::Norm);
  cuda::layernorm_forward(deviceOf(ctx), out, mean, rstd, x, w, b, rows, C, eps);
}

template <>
void layernorm_backward<float>(Context &ctx, float *dx, float *dw, float *db, const float *dout,
                               const float *x, const float *w, const float *mean,
                               const float *rstd, int64_t rows, int64_t C, float eps) {
  ProfileScope profile(ctx, KernelKind::Norm);
  cuda::layernorm_backward(deviceOf(ctx), dx, dw, db, dout, x, w, mean, rstd, rows, C, eps);
}

template <>
void rmsnorm_forward_save<float>(Context &ctx, float *out, float *rstd, const float *x,
                                 const float *w, int64_t rows, int64_t C, float eps) {
  ProfileScope profile(ctx, KernelKind::Norm);
  cuda::rmsnorm_forward(deviceOf(ctx), out, rstd, x, w, rows, C, eps);
}

template <>
void rmsnorm_backward<float>(Context &ctx, float *dx, float *dw, const float *dout,
                             const float *x, const float *w, const float *rstd, int64_t rows,
                             int64_t C, float eps) {
  ProfileScope profile(ctx, KernelKind::Norm);
  cuda::rmsnorm_backward(deviceOf(ctx), dx, dw, dout, x, w, rstd, rows, C, eps);
}

template <>
void attention_backward<float>(Context &ctx, const AttentionArgs &args, float *dq, float *dk,
                               float *dv, const float *dout, const float *q, const float *k,
                               const float *v) {
  ProfileScope profile(ctx, KernelKind::Attention);
  refuseLowpAttention("attention_backward", args);
  cuda::attention_backward(deviceOf(ctx), args, dq, dk, dv, dout, q, k, v);
}

template <>
void attention_prefix_backward<float>(Context &ctx, const AttentionArgs &args,
                                      int64_t prefixRows, const float *pk, const float *pv,
                                      const float *gate, float *dpk, float *dpv, float *dq,
                                      float *dk, float *dv, const float *dout, const float *q,
                                      const float *k, const float *v) {
  ProfileScope profile(ctx, KernelKind::Attention);
  cuda::attention_prefix_backward(deviceOf(ctx), args, prefixRows, pk, pv, gate, dpk, dpv, dq,
                                  dk, dv, dout, q, k, v);
}

template <>
void softmax_backward<float>(Context &ctx, float *dx, const float *out, const float *dout,
                             int64_t rows, int64_t C) {
  ProfileScope profile(ctx, KernelKind::Softmax);
  cuda::softmax_backward(deviceOf(ctx), dx, out, dout, rows, C);
}

template <>
void rotary_backward<float>(Context &ctx, float *dx, const float *dout, const int32_t *pos,
                            int64_t rows, int64_t heads, int64_t headDim, int64_t rowStride,
                            float base) {
  ProfileScope profile(ctx, KernelKind::Rotary);
  cuda::rotary_backward(deviceOf(ctx), dx, dout, pos, rows, heads, headDim, rowStride, base);
}

template <>
void embedding_backward<float>(Context &ctx, float *dtable, const int32_t *ids,
                               const float *dout, int64_t rows, int64_t vocab, int64_t C) {
  ProfileScope profile(ctx, KernelKind::Embedding);
  cuda::embedding_backward(deviceOf(ctx), dtable, ids, dout, rows, vocab, C);
}

template <>
void copy_strided_backward<float>(Context &ctx, float *dx, const float *dout, int64_t outer,
                                  int64_t inner, int64_t xOuterStride, int64_t xOffset) {
  ProfileScope profile(ctx, KernelKind::Copy);
  cuda::copy_strided_backward(deviceOf(ctx), dx, dout, outer, inner, xOuterStride, xOffset);
}

} // namespace bmrt
