//===- cuda/api_kernels.cpp - bmrt/kernels*.h on the GPU ------------------===//
//
// The kernel API of emitted programs (float; api.h says why) for the CUDA
// backend: each call goes to its device kernel on ctx.device, or fails by
// name when there is none yet (the list is in runtime/cuda/README.md).
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

void notOnDevice(const char *kernel) {
  fail(std::string(kernel) +
       " is not implemented on the cuda backend yet (issue 7; runtime/cuda/README.md lists "
       "the device kernels): build the job with --target=host");
}

} // namespace cuda

using cuda::deviceOf;
using cuda::notOnDevice;

//===--- Forward kernels (kernels.h) ---------------------------------------===//

template <>
void gemm<float>(Context &ctx, int64_t m, int64_t n, int64_t k, const float *a, int64_t lda,
                 const float *b, int64_t ldb, Trans transB, float *c, int64_t ldc,
                 const float *bias, Epilogue act, const float *residual) {
  ProfileScope profile(ctx, KernelKind::Gemm);
  cuda::gemm(deviceOf(ctx), m, n, k, a, lda, b, ldb, transB, c, ldc, bias, act, residual);
}

template <>
void attention_forward<float>(Context &, const AttentionArgs &, float *, const float *,
                              const float *, const float *, float *, float *) {
  notOnDevice("attention_forward");
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
void rotary_forward<float>(Context &, float *, const float *, const int32_t *, int64_t, int64_t,
                           int64_t, int64_t, float) {
  notOnDevice("rotary_forward");
}

template <>
void embedding_forward<float>(Context &, float *, const int32_t *, const float *, int64_t,
                              int64_t, int64_t) {
  notOnDevice("embedding_forward");
}

void positions_forward(Context &ctx, int32_t *out, int64_t rows, int64_t start) {
  ProfileScope profile(ctx, KernelKind::Copy);
  cuda::positions_forward(deviceOf(ctx), out, rows, start);
}

template <>
void copy_strided<float>(Context &, float *, const float *, int64_t, int64_t, int64_t,
                         int64_t) {
  notOnDevice("copy_strided");
}

//===--- Backward kernels (kernels_backward.h) -----------------------------===//

template <>
void act_backward<float>(Context &, float *, const float *, const float *, int64_t, Epilogue) {
  notOnDevice("act_backward");
}

template <>
void gemm_ex<float>(Context &ctx, Trans transA, Trans transB, int64_t m, int64_t n, int64_t k,
                    const float *a, int64_t lda, const float *b, int64_t ldb, float *c,
                    int64_t ldc, bool accumulate) {
  ProfileScope profile(ctx, KernelKind::Gemm);
  cuda::gemm_ex(deviceOf(ctx), transA, transB, m, n, k, a, lda, b, ldb, c, ldc, accumulate);
}

template <> void sum_rows<float>(Context &, float *, const float *, int64_t, int64_t) {
  notOnDevice("sum_rows");
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
void layernorm_backward<float>(Context &, float *, float *, float *, const float *,
                               const float *, const float *, const float *, const float *,
                               int64_t, int64_t, float) {
  notOnDevice("layernorm_backward");
}

template <>
void rmsnorm_forward_save<float>(Context &ctx, float *out, float *rstd, const float *x,
                                 const float *w, int64_t rows, int64_t C, float eps) {
  ProfileScope profile(ctx, KernelKind::Norm);
  cuda::rmsnorm_forward(deviceOf(ctx), out, rstd, x, w, rows, C, eps);
}

template <>
void rmsnorm_backward<float>(Context &, float *, float *, const float *, const float *,
                             const float *, const float *, int64_t, int64_t, float) {
  notOnDevice("rmsnorm_backward");
}

template <>
void attention_backward<float>(Context &, const AttentionArgs &, float *, float *, float *,
                               const float *, const float *, const float *, const float *) {
  notOnDevice("attention_backward");
}

template <>
void softmax_backward<float>(Context &, float *, const float *, const float *, int64_t,
                             int64_t) {
  notOnDevice("softmax_backward");
}

template <>
void rotary_backward<float>(Context &, float *, const float *, const int32_t *, int64_t,
                            int64_t, int64_t, int64_t, float) {
  notOnDevice("rotary_backward");
}

template <>
void embedding_backward<float>(Context &, float *, const int32_t *, const float *, int64_t,
                               int64_t, int64_t) {
  notOnDevice("embedding_backward");
}

template <>
void copy_strided_backward<float>(Context &, float *, const float *, int64_t, int64_t, int64_t,
                                  int64_t) {
  notOnDevice("copy_strided_backward");
}

} // namespace bmrt
