//===- cuda/api_training.cpp - bmrt/training.h and lowp.h on the GPU ------===//
//
// The training calls of emitted programs for the CUDA backend (api.h):
// AdamW runs on the device; the rest fails by name until its device kernel
// exists (runtime/cuda/README.md).
//
//===----------------------------------------------------------------------===//
#include "bmrt/lowp.h"
#include "bmrt/training.h"
#include "cuda/api.h"
#include "cuda/kernels_cuda.h"

namespace bmrt {

using cuda::deviceOf;
using cuda::notOnDevice;

template <>
void fused_classifier_forward_backward<float>(Context &, float *, float *, const float *,
                                              const int32_t *, int64_t, int64_t, int64_t,
                                              double) {
  notOnDevice("fused_classifier_forward_backward");
}

template <>
void mse_forward_backward<float>(Context &, float *, float *, const float *, const float *,
                                 int64_t, double) {
  notOnDevice("mse_forward_backward");
}

template <>
void adamw_update<float>(Context &ctx, float *params, const float *grads, float *m, float *v,
                         int64_t n, double lr, double beta1, double beta2, double eps,
                         double weightDecay, int64_t step) {
  ProfileScope profile(ctx, KernelKind::Optimizer);
  cuda::adamw_update(deviceOf(ctx), params, grads, m, v, n, lr, beta1, beta2, eps, weightDecay,
                     step);
}

template <>
void sgd_update<float>(Context &, float *, const float *, float *, int64_t, double, double,
                       double, int64_t) {
  notOnDevice("sgd_update");
}

template <> double grad_norm_squared<float>(Context &, const float *, int64_t) {
  notOnDevice("grad_norm_squared");
}

template <> void scale_inplace<float>(Context &, float *, int64_t, double) {
  notOnDevice("scale_inplace");
}

// Host arithmetic on two scalars, the same expression as the host backend's
// (host/optimizers.cpp, which the CUDA link does not include: that file
// also holds the host optimizer kernels).
double clip_coefficient(double totalNorm, double maxNorm) {
  const double c = maxNorm / (totalNorm + 1e-6);
  return c < 1.0 ? c : 1.0;
}

template <> double grad_norm_part<float>(Context &, const Buffers &, int64_t, int64_t) {
  notOnDevice("grad_norm_part");
}

template <> void scale_part<float>(Context &, const Buffers &, double) {
  notOnDevice("scale_part");
}

template <>
void adamw_update_part<float>(Context &, const Buffers &, int64_t, int64_t, int64_t, double,
                              double, double, double, double, int64_t) {
  notOnDevice("adamw_update_part");
}

template <>
void sgd_update_part<float>(Context &, const Buffers &, int64_t, int64_t, int64_t, double,
                            double, double, int64_t) {
  notOnDevice("sgd_update_part");
}

//===--- Mixed precision (lowp.h) ------------------------------------------===//

void convert(Context &, bf16 *, const float *, int64_t) { notOnDevice("convert (to bf16)"); }
void convert(Context &, float *, const bf16 *, int64_t) { notOnDevice("convert (from bf16)"); }
void convert(Context &, fp16 *, const float *, int64_t) { notOnDevice("convert (to fp16)"); }
void convert(Context &, float *, const fp16 *, int64_t) { notOnDevice("convert (from fp16)"); }

void gemm_lowp(Context &, LowPrecision, int64_t, int64_t, int64_t, const float *, int64_t,
               const float *, int64_t, Trans, float *, int64_t, const float *, Epilogue,
               const float *) {
  notOnDevice("gemm_lowp");
}

void gemm_ex_lowp(Context &, LowPrecision, Trans, Trans, int64_t, int64_t, int64_t,
                  const float *, int64_t, const float *, int64_t, float *, int64_t, bool) {
  notOnDevice("gemm_ex_lowp");
}

void gemm_lowp_w(Context &, LowPrecision, int64_t, int64_t, int64_t, const float *, int64_t,
                 const uint16_t *, int64_t, Trans, float *, int64_t, const float *, Epilogue,
                 const float *) {
  notOnDevice("gemm_lowp_w");
}

void gemm_ex_lowp_w(Context &, LowPrecision, Trans, Trans, int64_t, int64_t, int64_t,
                    const float *, int64_t, const uint16_t *, int64_t, float *, int64_t, bool) {
  notOnDevice("gemm_ex_lowp_w");
}

void refresh_low_params(Context &, const Buffers &, const TrainInfo &) {
  notOnDevice("refresh_low_params");
}

} // namespace bmrt
