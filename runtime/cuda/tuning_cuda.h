//===- cuda/tuning_cuda.h - The tuning kernels on the GPU -----------------===//
//
// The device forms of bmrt/tuning.h (tuning.cu) and of a per-iteration
// delta's gate (bmrt/iteration_gate.h, iteration_gate.cu), on device
// pointers, queued
// on the compute stream. Same contracts as the host kernels
// (host/tuning.cpp); a bad id, mask position, label or label word cannot
// throw inside a kernel: it is recorded in the device's error slot and
// checkDeviceErrors reports it with the host kernel's message (device.h).
// api_tuning.cpp binds the bmrt:: API of emitted tune programs to these.
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_CUDA_TUNING_CUDA_H
#define BMRT_CUDA_TUNING_CUDA_H

#include "bmrt/tuning.h"
#include "cuda/device.h"

#include <cstdint>

namespace bmrt::cuda {

/// out[r] = ids[r] < num ? table[ids[r]] : soft[ids[r] - num]; an id outside
/// [0, num + numSoft) leaves its row at zero and is reported.
void soft_embedding_forward(Device &dev, float *out, const int32_t *ids, const float *table,
                            const float *soft, int64_t rows, int64_t num, int64_t numSoft,
                            int64_t dim);

/// dtable[ids[r]] += dout[r] (ids < num; skipped when dtable is null), dsoft
/// likewise for soft ids: one thread per column adds the rows in order, as
/// the host (bitwise its sums, no atomics).
void soft_embedding_backward(Device &dev, float *dtable, float *dsoft, const int32_t *ids,
                             const float *dout, int64_t rows, int64_t num, int64_t numSoft,
                             int64_t dim);

/// out[b*M + m] = x[b, pos[b, m]]; a position outside [0, seq) leaves the
/// row at zero and is reported.
void gather_rows_forward(Device &dev, float *out, const float *x, const int32_t *pos,
                         int64_t batch, int64_t seq, int64_t masks, int64_t dim);

/// dx[b, pos[b, m]] += dout[b*M + m]: one thread per (example, column) adds
/// the masks in order (repeated positions sum as on the host).
void gather_rows_backward(Device &dev, float *dx, const float *dout, const int32_t *pos,
                          int64_t batch, int64_t seq, int64_t masks, int64_t dim);

/// bmrt::verbalizer_loss_forward_backward: one block per example, the
/// verbalizer's arithmetic in double by bmrt/verbalizer_element.h (the host
/// kernel's), its gradient rows cleared by the whole block. Intermediates
/// in the device's scratch buffer.
void verbalizer_loss_forward_backward(Device &dev, const VerbalizerShape &s,
                                      const WordReduce *reduce, float *losses, float *scores,
                                      float *wordProbs, float *dlogits, const float *logits,
                                      const int32_t *labels, const int32_t *labelWords,
                                      const float *calibration, int64_t ignoreIndex,
                                      double scale);

/// out[0] = open ? 1 : 0 by a one-thread kernel (iteration_gate.cu): a
/// per-iteration delta's gate (bmrt/iteration_gate.h).
void iteration_gate(Device &dev, float *out, bool open);

} // namespace bmrt::cuda

#endif // BMRT_CUDA_TUNING_CUDA_H
