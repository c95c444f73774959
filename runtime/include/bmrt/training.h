//===- bmrt/training.h - Losses, optimizers, clipping, LR schedules -------===//
//
// The training-side kernels (issue 4) the compiler schedules after the
// backward pass: the fused classifier (LM head logits -> softmax ->
// cross-entropy loss and dlogits in one pass per row, llm.c style: the
// probabilities are never stored), MSE, AdamW and SGD updates, the global
// gradient norm for clipping, and the learning-rate schedules.
//
// Conventions (as kernels.h): row-major, templated on the element type T
// (float now, double for gradient checks), numerics are arguments, never
// defaults; a user-caused problem (a target id out of range) calls
// bmrt::fail before anything is written. Hyperparameters are double, as
// torch's are Python floats: derived scalars (bias corrections, step size)
// are computed in double and applied in T, exactly as torch does.
//
// Each is checked against torch / transformers in
// test/runtime/host/training_reference_test.py.
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_TRAINING_H
#define BMRT_TRAINING_H

#include "bmrt/comm.h"
#include "bmrt/context.h"
#include "bmrt/program.h"

#include <cstdint>
#include <vector>

namespace bmrt {

//===--- Losses ----------------------------------------------------------===//

/// Fused softmax cross-entropy over rows of V logits.
///   losses[r]     = -log softmax(logits[r])[targets[r]]
///   dlogits[r, i] = (softmax(logits[r])[i] - (i == targets[r])) * dlossScale
/// Rows whose target == ignoreIndex get losses[r] = 0 and dlogits[r, :] = 0.
/// Every other target must lie in [0, V) (else bmrt::fail, nothing written).
///
/// dlogits may alias logits (overwritten in place, the usual case: the
/// logits buffer becomes the gradient) or be null (loss only, evaluation).
/// Numerically stable (max subtraction); for float the sum of exponentials
/// and the loss are accumulated in double.
///
/// dlossScale is the caller's choice of reduction: torch's
/// cross_entropy(reduction='mean', ignore_index=...) is
/// dlossScale = 1 / count_targets(...) (the number of non-ignored rows, over
/// the whole global batch when gradients are accumulated over micro-batches:
/// then 1 / (non-ignored rows of all micro-batches)); reduction='sum' is 1.
/// The mean loss is then sum(losses) * dlossScale; losses are never scaled.
///
/// Classification (a [batch, classes] logits head, e.g. sequence
/// classification) is the same kernel with rows = batch and V = classes;
/// cross_entropy_forward_backward below is that call under its own name.
template <class T>
void fused_classifier_forward_backward(Context &ctx, T *losses, T *dlogits,
                                       const T *logits, const int32_t *targets,
                                       int64_t rows, int64_t V, int64_t ignoreIndex,
                                       double dlossScale);

/// Classification cross-entropy: fused_classifier_forward_backward with
/// rows = batch and V = numClasses (same semantics, same aliasing rules).
template <class T>
inline void cross_entropy_forward_backward(Context &ctx, T *losses, T *dlogits,
                                           const T *logits, const int32_t *targets,
                                           int64_t batch, int64_t numClasses,
                                           int64_t ignoreIndex, double dlossScale) {
  fused_classifier_forward_backward<T>(ctx, losses, dlogits, logits, targets, batch,
                                       numClasses, ignoreIndex, dlossScale);
}

/// The number of rows whose target is not ignoreIndex (for dlossScale).
int64_t count_targets(const int32_t *targets, int64_t rows, int64_t ignoreIndex);

/// Mean squared error over n elements, as torch's mse_loss(reduction='mean'):
///   *loss    = sum((pred - target)^2) / n       (accumulated in double)
///   dpred[i] = 2 (pred[i] - target[i]) / n * dlossScale
/// dlossScale = 1 is autograd of the mean loss; pass 1 / microBatches when
/// accumulating. dpred may alias pred, or be null (loss only). n >= 1.
template <class T>
void mse_forward_backward(Context &ctx, T *loss, T *dpred, const T *pred, const T *target,
                          int64_t n, double dlossScale);

//===--- Optimizers ------------------------------------------------------===//
// One call updates one contiguous parameter buffer (a tensor, or a run of
// tensors sharing hyperparameters). `step` is 1-based: the number of updates
// including this one (torch's state['step'] after its increment).
// The optimizer state has the parameters' type (fp32 for float parameters).

/// torch.optim.AdamW (amsgrad=False, maximize=False), element-wise:
///   p *= 1 - lr*weightDecay                      (decoupled weight decay)
///   m  = beta1*m + (1-beta1)*g
///   v  = beta2*v + (1-beta2)*g*g
///   p -= lr/(1-beta1^step) * m / (sqrt(v)/sqrt(1-beta2^step) + eps)
/// m and v start as zeros (the caller zero-fills them before step 1).
/// No-decay parameters (biases, norm weights, by the usual grouping) are
/// updated by a separate call with weightDecay = 0.
template <class T>
void adamw_update(Context &ctx, T *params, const T *grads, T *m, T *v, int64_t n,
                  double lr, double beta1, double beta2, double eps, double weightDecay,
                  int64_t step);

/// torch.optim.SGD (dampening = 0, nesterov = false, maximize = false):
///   d = g + weightDecay*p                        (L2, coupled as torch's)
///   buf = step == 1 ? d : momentum*buf + d       (when momentum != 0)
///   p -= lr * (momentum != 0 ? buf : d)
/// momentumBuf may be null when momentum == 0; its contents before step 1
/// are ignored.
template <class T>
void sgd_update(Context &ctx, T *params, const T *grads, T *momentumBuf, int64_t n,
                double lr, double momentum, double weightDecay, int64_t step);

//===--- Gradient clipping -----------------------------------------------===//
// torch.nn.utils.clip_grad_norm_(params, maxNorm) with the 2-norm:
//   total = sqrt(sum over buffers of grad_norm_squared(...))
//   c = clip_coefficient(total, maxNorm); if (c < 1) scale_inplace(g, c)
// for every gradient buffer.

/// sum(g[i]^2), accumulated in double.
template <class T>
double grad_norm_squared(Context &ctx, const T *grads, int64_t n);

/// x[i] *= s.
template <class T>
void scale_inplace(Context &ctx, T *x, int64_t n, double s);

/// min(1, maxNorm / (totalNorm + 1e-6)), as clip_grad_norm_ (1 = no clipping).
double clip_coefficient(double totalNorm, double maxNorm);

/// Whether some x[i], i < n, is inf or NaN: fp16's dynamic loss scaler's
/// overflow check (app/loss_scale.cpp), answered on the host (a device
/// backend reduces on the GPU and synchronises once for the answer).
template <class T>
bool any_nonfinite(Context &ctx, const T *x, int64_t n);

//===--- The optimizer step of generated code, over a partition -----------===//
// Generated optimizer steps call these (docs/distributed.md): they work on
// the rank's part of the flat trainable group, Buffers::part (the whole group
// on one rank or under zero = 0), so the same emitted step serves any world
// size. `groupParamOffset` is TrainInfo::groupParamOffset; `at` and `n` are a
// param's first element in the group and its element count.

/// The global gradient 2-norm, deterministically: the group is cut into
/// chunks of `chunk` elements (TrainInfo::partitionAlign, so partitions hold
/// whole chunks); each chunk's sum of squares is accumulated in double, in
/// element order, and the chunks' sums are added in chunk order. A
/// partitioned step (part smaller than the group) computes its own chunks
/// and all-reduces the per-chunk sums through Context::comm first. The
/// result is therefore the same bits at any thread count, world size and
/// ZeRO stage.
template <class T>
double grad_norm_part(Context &ctx, const Buffers &buf, int64_t groupElems, int64_t chunk);

/// grad_norm_part's fixed shape, the same in every backend: the group's
/// `count` chunks, of which this rank sums [first, last) (none for an empty
/// partition). Checks the partition and the chunk size.
struct GradNormChunks {
  int64_t first = 0, last = 0, count = 0;
};
GradNormChunks gradNormChunks(const char *what, const Buffers &buf, int64_t groupElems,
                              int64_t chunk);

/// The norm from the per-chunk sums of squares (zeros at the chunks other
/// ranks hold): all-reduced over the ranks when partitioned, then added in
/// chunk order.
double gradNormOfChunkSums(Context &ctx, const Buffers &buf, std::vector<double> &sums);

/// grads[e] *= s for the partition's elements.
template <class T>
void scale_part(Context &ctx, const Buffers &buf, double s);

/// adamw_update of the partition's share of one param.
template <class T>
void adamw_update_part(Context &ctx, const Buffers &buf, int64_t groupParamOffset, int64_t at,
                       int64_t n, double lr, double beta1, double beta2, double eps,
                       double weightDecay, int64_t step);

/// sgd_update of the partition's share of one param.
template <class T>
void sgd_update_part(Context &ctx, const Buffers &buf, int64_t groupParamOffset, int64_t at,
                     int64_t n, double lr, double momentum, double weightDecay, int64_t step);

/// ZeRO-2 (docs/distributed.md): issues the reduce-scatter of one staged
/// unit, group elements [at, at + n) staged at element stagingAt of
/// Buffers::gradStaging, in per-rank pieces: rank r's piece is the unit's
/// intersection with r's partition (Comm::reduceScatterv).
template <class T>
CommHandle reduce_scatter_unit(Context &ctx, const Buffers &buf, int64_t stagingAt, int64_t at,
                               int64_t n);

/// reduce_scatter_unit's and add_unit_grads' argument checks, shared by the
/// backends (host/zero2_units.cpp): the partition, the staging allocated,
/// the unit's bounds.
void checkStagedUnit(const char *what, const Buffers &buf, int64_t stagingAt, int64_t at,
                     int64_t n);

/// The length of each rank's piece of group elements [at, at + n) (ZeRO-2's
/// reduce-scatter and ZeRO-3's gather of a unit; host/zero2_units.cpp).
/// Fails naming `what` when the partitions were cut for another world size.
std::vector<int64_t> unitCounts(const char *what, const Buffers &buf, int ranks, int64_t at,
                                int64_t n);

/// After that reduce-scatter's wait: the rank's piece of the summed unit is
/// added into its partition of the gradients (grads = grads + piece, in T),
/// and the unit's staging is zeroed for the next unit.
template <class T>
void add_unit_grads(Context &ctx, const Buffers &buf, int64_t stagingAt, int64_t at, int64_t n);

/// ZeRO-3: issues the gather of one unit's params, group elements [at, at +
/// n), into element stagingAt of Buffers::paramStaging: the rank copies its
/// piece (the unit's intersection with its partition, from the params at
/// groupParamOffset) into place, then every rank's piece is all-gathered
/// there (Comm::allGatherv). The entries read the unit once it is waited.
/// gather_unit, wait_unit and prefetch_unit are shared by the backends
/// (host/zero3_units.cpp); each backend copies the piece (copy_unit_piece).
template <class T>
CommHandle gather_unit(Context &ctx, const Buffers &buf, int64_t groupParamOffset,
                       int64_t stagingAt, int64_t at, int64_t n);

/// ZeRO-3's layers alternate between two slots of the param staging: layer
/// l's unit (group elements [at, at + n)) goes to element stagingAt + (l %
/// 2) * slotStride. wait_unit waits for the gather of layer l that
/// prefetch_unit issued in the previous iteration, or gathers it now (the
/// loop's first iteration); prefetch_unit issues the next layer's gather
/// into its slot and leaves it on the communicator (Comm::hold), doing
/// nothing for a layer outside [0, layers).
template <class T>
void wait_unit(Context &ctx, const Buffers &buf, int64_t groupParamOffset, int64_t stagingAt,
               int64_t slotStride, int64_t at, int64_t n, int64_t layer);
template <class T>
void prefetch_unit(Context &ctx, const Buffers &buf, int64_t groupParamOffset,
                   int64_t stagingAt, int64_t slotStride, int64_t at, int64_t n, int64_t layer,
                   int64_t layers);

/// gather_unit's copy of the rank's piece, `bytes` from its partition of the
/// params into the staging: a memcpy on the host; on a GPU, a copy on the
/// compute stream, which the all-gather that follows is ordered after.
void copy_unit_piece(Context &ctx, void *staged, const void *params, int64_t bytes);

//===--- Learning-rate schedules -----------------------------------------===//
// The multiplier of the base learning rate at (0-based) step s, i.e. the
// lr_lambda Hugging Face's schedulers apply: lr(s) = baseLr * multiplier(s).
// s counts optimizer updates already done (the first update uses s = 0).

/// transformers.get_constant_schedule_with_warmup (warmup 0: constant 1):
/// s / warmup during warmup, then 1.
double lr_constant(int64_t step, int64_t warmupSteps);

/// transformers.get_linear_schedule_with_warmup: linear warmup from 0 to 1,
/// then linear decay to 0 at totalSteps (0 after).
double lr_linear(int64_t step, int64_t warmupSteps, int64_t totalSteps);

/// transformers.get_cosine_schedule_with_warmup: linear warmup, then
/// max(0, 0.5 (1 + cos(2 pi numCycles progress))); numCycles = 0.5 is
/// Hugging Face's default (half a cosine, from 1 down to 0).
double lr_cosine(int64_t step, int64_t warmupSteps, int64_t totalSteps, double numCycles);

enum class LrSchedule : int { Constant, Linear, Cosine };

/// One of the three above by kind (numCycles is used by Cosine only). A
/// floor for the decaying schedules (a job's `min_lr`): after the warmup,
/// minRate + (1 - minRate) * multiplier, so Linear decays to minRate and
/// Cosine ends there (transformers' get_polynomial_decay_schedule_with_warmup
/// with power 1 and get_cosine_with_min_lr_schedule_with_warmup);
/// minRate = min_lr / base lr, in [0, 1].
double lr_multiplier(LrSchedule kind, int64_t step, int64_t warmupSteps,
                     int64_t totalSteps, double numCycles, double minRate = 0);

} // namespace bmrt

#endif // BMRT_TRAINING_H
