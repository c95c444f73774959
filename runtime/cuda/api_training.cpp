//===- cuda/api_training.cpp - bmrt/training.h and lowp.h on the GPU ------===//
//
// The training calls of emitted programs for the CUDA backend (api.h):
// losses, optimizers, gradient norms, partitions and the mixed-precision
// GEMMs, all on the device.
//
//===----------------------------------------------------------------------===//
#include "bmrt/comm.h"
#include "bmrt/lowp.h"
#include "bmrt/training.h"
#include "cuda/api.h"
#include "cuda/check.h"
#include "cuda/kernels_cuda.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace bmrt {

using cuda::deviceOf;

template <>
void fused_classifier_forward_backward<float>(Context &ctx, float *losses, float *dlogits,
                                              const float *logits, const int32_t *targets,
                                              int64_t rows, int64_t V, int64_t ignoreIndex,
                                              double dlossScale) {
  ProfileScope profile(ctx, KernelKind::Loss);
  cuda::fused_classifier_forward_backward(deviceOf(ctx), losses, dlogits, logits, targets, rows,
                                          V, ignoreIndex, dlossScale);
}

template <>
void mse_forward_backward<float>(Context &ctx, float *loss, float *dpred, const float *pred,
                                 const float *target, int64_t n, double dlossScale) {
  ProfileScope profile(ctx, KernelKind::Loss);
  cuda::mse_forward_backward(deviceOf(ctx), loss, dpred, pred, target, n, dlossScale);
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
void sgd_update<float>(Context &ctx, float *params, const float *grads, float *momentumBuf,
                       int64_t n, double lr, double momentum, double weightDecay, int64_t step) {
  ProfileScope profile(ctx, KernelKind::Optimizer);
  cuda::sgd_update(deviceOf(ctx), params, grads, momentumBuf, n, lr, momentum, weightDecay,
                   step);
}

template <> double grad_norm_squared<float>(Context &ctx, const float *grads, int64_t n) {
  ProfileScope profile(ctx, KernelKind::Optimizer);
  return cuda::grad_norm_squared(deviceOf(ctx), grads, n);
}

template <> void scale_inplace<float>(Context &ctx, float *x, int64_t n, double s) {
  ProfileScope profile(ctx, KernelKind::Optimizer);
  cuda::scale_inplace(deviceOf(ctx), x, n, s);
}

// fp16's loss scaler (app/loss_scale.cpp) asks this of the gradients.
template <> bool any_nonfinite<float>(Context &ctx, const float *x, int64_t n) {
  ProfileScope profile(ctx, KernelKind::Optimizer);
  return cuda::any_nonfinite(deviceOf(ctx), x, n);
}

// Host arithmetic on two scalars, the same expression as the host backend's
// (host/optimizers.cpp, which the CUDA link does not include: that file
// also holds the host optimizer kernels).
double clip_coefficient(double totalNorm, double maxNorm) {
  const double c = maxNorm / (totalNorm + 1e-6);
  return c < 1.0 ? c : 1.0;
}

//===--- This rank's part of the trainable group (host/partition.cpp's
// arithmetic on device buffers) --------------------------------------------===//
// zero = 2's grads allocation holds the partition only: group element e at
// grads[e - part.gradsFrom] (gradsFrom = 0 otherwise).

// The squares are summed per chunk of `chunk` elements (one device sum each,
// in chunk order), so the total does not depend on how the group is split
// over ranks: the partials are all-reduced (zeros from the other ranks add
// exactly) and added in chunk order, as the host backend does.
template <>
double grad_norm_part<float>(Context &ctx, const Buffers &buf, int64_t groupElems,
                             int64_t chunk) {
  ProfileScope profile(ctx, KernelKind::Optimizer);
  const GradNormChunks c = gradNormChunks("grad_norm_part", buf, groupElems, chunk);
  std::vector<double> partial((size_t)c.count, 0.0);
  // The rank's chunks start at its partition's first element (gradNormChunks
  // checks it is a chunk boundary), at grads[begin - gradsFrom].
  if (c.last > c.first)
    cuda::chunk_squares(deviceOf(ctx), partial.data() + c.first,
                        (const float *)buf.grads + (c.first * chunk - buf.part.gradsFrom),
                        buf.part.end - c.first * chunk, chunk);
  return gradNormOfChunkSums(ctx, buf, partial);
}

template <> void scale_part<float>(Context &ctx, const Buffers &buf, double s) {
  checkPartition("scale_part", buf);
  scale_inplace<float>(ctx, (float *)buf.grads + (buf.part.begin - buf.part.gradsFrom),
                       buf.part.end - buf.part.begin, s);
}

template <>
void adamw_update_part<float>(Context &ctx, const Buffers &buf, int64_t groupParamOffset,
                              int64_t at, int64_t n, double lr, double beta1, double beta2,
                              double eps, double weightDecay, int64_t step) {
  checkPartition("adamw_update_part", buf);
  int64_t lo, hi;
  if (!clipToPartition(buf, at, n, lo, hi))
    return;
  // zero = 3's params hold the partition only: element e at e - paramsFrom.
  float *params = (float *)((char *)buf.params + groupParamOffset);
  float *m = (float *)buf.optState + (lo - buf.part.begin);
  const float *g = (const float *)buf.grads + (lo - buf.part.gradsFrom);
  adamw_update<float>(ctx, params + (lo - buf.part.paramsFrom), g, m,
                      m + buf.part.optStride, hi - lo, lr, beta1, beta2, eps, weightDecay, step);
}

template <>
void sgd_update_part<float>(Context &ctx, const Buffers &buf, int64_t groupParamOffset,
                            int64_t at, int64_t n, double lr, double momentum,
                            double weightDecay, int64_t step) {
  checkPartition("sgd_update_part", buf);
  int64_t lo, hi;
  if (!clipToPartition(buf, at, n, lo, hi))
    return;
  float *params = (float *)((char *)buf.params + groupParamOffset);
  float *momentumBuf = momentum != 0.0 ? (float *)buf.optState + (lo - buf.part.begin) : nullptr;
  const float *g = (const float *)buf.grads + (lo - buf.part.gradsFrom);
  sgd_update<float>(ctx, params + (lo - buf.part.paramsFrom), g, momentumBuf, hi - lo, lr,
                    momentum, weightDecay, step);
}

// ZeRO-2: reduce_scatter_unit is the backends' shared code
// (host/zero2_units.cpp, on the Comm: NCCL's reduceScatterv here).
template <>
void add_unit_grads<float>(Context &ctx, const Buffers &buf, int64_t stagingAt, int64_t at,
                           int64_t n) {
  ProfileScope profile(ctx, KernelKind::Optimizer);
  checkStagedUnit("add_unit_grads", buf, stagingAt, at, n);
  float *staged = (float *)buf.gradStaging + stagingAt;
  int64_t lo, hi;
  if (clipToPartition(buf, at, n, lo, hi))
    cuda::add_inplace(deviceOf(ctx), (float *)buf.grads + (lo - buf.part.gradsFrom),
                      staged + (lo - at), hi - lo);
  cuda::fill_zero(deviceOf(ctx), staged, n); // for the next unit
}

// ZeRO-3: gather_unit, wait_unit and prefetch_unit are the backends' shared
// code (host/zero3_units.cpp, NCCL's allGatherv here); the rank's piece goes
// into the staging on the compute stream, after the optimizer step that
// wrote the partition and the kernels that last read the slot, and the
// all-gather on the comm stream is ordered after it (nccl_comm.cpp).
void copy_unit_piece(Context &ctx, void *staged, const void *params, int64_t bytes) {
  ProfileScope profile(ctx, KernelKind::Copy);
  BMRT_CUDA_CHECK(cudaMemcpyAsync(staged, params, (size_t)bytes, cudaMemcpyDeviceToDevice,
                                  deviceOf(ctx).compute));
}

//===--- Mixed precision (lowp.h) ------------------------------------------===//

void convert(Context &ctx, bf16 *out, const float *in, int64_t n) {
  cuda::convert(deviceOf(ctx), LowPrecision::BF16, (uint16_t *)out, in, n);
}
void convert(Context &ctx, float *out, const bf16 *in, int64_t n) {
  cuda::convert(deviceOf(ctx), LowPrecision::BF16, out, (const uint16_t *)in, n);
}
void convert(Context &ctx, fp16 *out, const float *in, int64_t n) {
  cuda::convert(deviceOf(ctx), LowPrecision::FP16, (uint16_t *)out, in, n);
}
void convert(Context &ctx, float *out, const fp16 *in, int64_t n) {
  cuda::convert(deviceOf(ctx), LowPrecision::FP16, out, (const uint16_t *)in, n);
}

void gemm_lowp(Context &ctx, LowPrecision p, int64_t m, int64_t n, int64_t k, const float *a,
               int64_t lda, const float *b, int64_t ldb, Trans transB, float *c, int64_t ldc,
               const float *bias, Epilogue act, const float *residual) {
  ProfileScope profile(ctx, KernelKind::Gemm);
  cuda::gemm_lowp(deviceOf(ctx), p, m, n, k, a, lda, b, ldb, false, transB, c, ldc, bias, act,
                  residual);
}

void gemm_ex_lowp(Context &ctx, LowPrecision p, Trans transA, Trans transB, int64_t m,
                  int64_t n, int64_t k, const float *a, int64_t lda, const float *b,
                  int64_t ldb, float *c, int64_t ldc, bool accumulate) {
  ProfileScope profile(ctx, KernelKind::Gemm);
  cuda::gemm_ex_lowp(deviceOf(ctx), p, transA, transB, m, n, k, a, lda, b, ldb, false, c, ldc,
                     accumulate);
}

void gemm_lowp_w(Context &ctx, LowPrecision p, int64_t m, int64_t n, int64_t k, const float *a,
                 int64_t lda, const uint16_t *b, int64_t ldb, Trans transB, float *c,
                 int64_t ldc, const float *bias, Epilogue act, const float *residual) {
  ProfileScope profile(ctx, KernelKind::Gemm);
  cuda::gemm_lowp(deviceOf(ctx), p, m, n, k, a, lda, b, ldb, true, transB, c, ldc, bias, act,
                  residual);
}

void gemm_ex_lowp_w(Context &ctx, LowPrecision p, Trans transA, Trans transB, int64_t m,
                    int64_t n, int64_t k, const float *a, int64_t lda, const uint16_t *b,
                    int64_t ldb, float *c, int64_t ldc, bool accumulate) {
  ProfileScope profile(ctx, KernelKind::Gemm);
  cuda::gemm_ex_lowp(deviceOf(ctx), p, transA, transB, m, n, k, a, lda, b, ldb, true, c, ldc,
                     accumulate);
}

// The program's reduced-precision copy of the trainable group (host
// lowp.cpp's contract; DeviceBuffers allocates Buffers::lowParams for it).
void refresh_low_params(Context &ctx, const Buffers &buf, const TrainInfo &train) {
  LowPrecision p;
  if (!lowPrecisionOf(train, p) || train.zeroStage == 3)
    return; // zero = 3: round_unit fills it, unit by unit, after each gather
  if (!buf.lowParams)
    fail("refresh_low_params: a " + std::string(train.precision) +
         " program needs Buffers::lowParams (the app did not allocate it)");
  const float *master = (const float *)((const char *)buf.params + train.groupParamOffset);
  ProfileScope profile(ctx, KernelKind::Optimizer);
  cuda::convert(deviceOf(ctx), p, (uint16_t *)buf.lowParams, master, train.groupElems);
}

// ZeRO-3 with bf16/fp16: a gathered unit's staging rounded into the 2-byte
// copy the GEMMs read (host lowp.cpp's contract), on the compute stream
// after the wait_unit that ordered it behind the gather.
void round_unit(Context &ctx, LowPrecision p, const Buffers &buf, int64_t at, int64_t n) {
  checkRoundUnit(p, buf, at, n);
  ProfileScope profile(ctx, KernelKind::Copy);
  cuda::convert(deviceOf(ctx), p, (uint16_t *)buf.lowParams + at,
                (const float *)buf.paramStaging + at, n);
}

} // namespace bmrt
