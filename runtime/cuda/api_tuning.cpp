//===- cuda/api_tuning.cpp - bmrt/tuning.h on the GPU ---------------------===//
//
// The tuning kernels of emitted tune programs and the gate of per-iteration
// deltas (float; api.h says why) bound to their device forms
// (tuning_cuda.h) on ctx.device. A bad id, position,
// label or label word is reported at the app's next checkDeviceErrors, as
// api_kernels.cpp's token ids.
//
//===----------------------------------------------------------------------===//
#include "bmrt/iteration_gate.h"
#include "bmrt/tuning.h"
#include "cuda/api.h"
#include "cuda/tuning_cuda.h"

namespace bmrt {

using cuda::deviceOf;

template <>
void soft_embedding_forward<float>(Context &ctx, float *out, const int32_t *ids,
                                   const float *table, const float *soft, int64_t rows,
                                   int64_t num, int64_t numSoft, int64_t dim) {
  ProfileScope profile(ctx, KernelKind::Embedding);
  cuda::soft_embedding_forward(deviceOf(ctx), out, ids, table, soft, rows, num, numSoft, dim);
}

template <>
void soft_embedding_backward<float>(Context &ctx, float *dtable, float *dsoft,
                                    const int32_t *ids, const float *dout, int64_t rows,
                                    int64_t num, int64_t numSoft, int64_t dim) {
  ProfileScope profile(ctx, KernelKind::Embedding);
  cuda::soft_embedding_backward(deviceOf(ctx), dtable, dsoft, ids, dout, rows, num, numSoft,
                                dim);
}

template <>
void gather_rows_forward<float>(Context &ctx, float *out, const float *x, const int32_t *pos,
                                int64_t batch, int64_t seq, int64_t masks, int64_t dim) {
  ProfileScope profile(ctx, KernelKind::Copy);
  cuda::gather_rows_forward(deviceOf(ctx), out, x, pos, batch, seq, masks, dim);
}

template <>
void gather_rows_backward<float>(Context &ctx, float *dx, const float *dout, const int32_t *pos,
                                 int64_t batch, int64_t seq, int64_t masks, int64_t dim) {
  ProfileScope profile(ctx, KernelKind::Copy);
  cuda::gather_rows_backward(deviceOf(ctx), dx, dout, pos, batch, seq, masks, dim);
}

template <>
void verbalizer_loss_forward_backward<float>(Context &ctx, const VerbalizerShape &s,
                                             const WordReduce *reduce, float *losses,
                                             float *scores, float *wordProbs, float *dlogits,
                                             const float *logits, const int32_t *labels,
                                             const int32_t *labelWords,
                                             const float *calibration, int64_t ignoreIndex,
                                             double scale) {
  ProfileScope profile(ctx, KernelKind::Loss);
  cuda::verbalizer_loss_forward_backward(deviceOf(ctx), s, reduce, losses, scores, wordProbs,
                                         dlogits, logits, labels, labelWords, calibration,
                                         ignoreIndex, scale);
}

// Not profiled, as on the host (one store).
template <> void iteration_gate<float>(Context &ctx, float *out, bool open) {
  cuda::iteration_gate(deviceOf(ctx), out, open);
}

} // namespace bmrt
