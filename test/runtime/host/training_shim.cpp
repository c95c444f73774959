//===- training_shim.cpp - C entry points to the training kernels ---------===//
//
// training_reference_test.py calls the losses, optimizers, clipping and
// schedules (bmrt/training.h) through these functions and compares with
// torch / transformers. Each kernel entry takes `dtype` (0 = float,
// 1 = double) and untyped buffers, catches bmrt::Error and returns 0 on
// success or 1 with the message copied into `err`, so error paths can be
// checked from Python too.
//
//===----------------------------------------------------------------------===//
#include "bmrt/offload.h"
#include "bmrt/training.h"

#include <cstdio>
#include <exception>
#include <vector>

#include "shim_common.h"

using namespace bmrt;

namespace {

using shim::byDtype;
using shim::guarded;
using shim::makeContext;

} // namespace

extern "C" {

int training_fused_classifier(int dtype, void *losses, void *dlogits, const void *logits,
                              const int32_t *targets, int64_t rows, int64_t V,
                              int64_t ignoreIndex, double dlossScale, int threads,
                              char *err, int errLen) {
  return guarded(err, errLen, [&] {
    Context ctx = makeContext(threads);
    byDtype(dtype, [&](auto zero) {
      using T = decltype(zero);
      fused_classifier_forward_backward<T>(ctx, (T *)losses, (T *)dlogits,
                                           (const T *)logits, targets, rows, V,
                                           ignoreIndex, dlossScale);
    });
  });
}

int training_cross_entropy(int dtype, void *losses, void *dlogits, const void *logits,
                           const int32_t *targets, int64_t batch, int64_t classes,
                           int64_t ignoreIndex, double dlossScale, int threads, char *err,
                           int errLen) {
  return guarded(err, errLen, [&] {
    Context ctx = makeContext(threads);
    byDtype(dtype, [&](auto zero) {
      using T = decltype(zero);
      cross_entropy_forward_backward<T>(ctx, (T *)losses, (T *)dlogits, (const T *)logits,
                                        targets, batch, classes, ignoreIndex, dlossScale);
    });
  });
}

int64_t training_count_targets(const int32_t *targets, int64_t rows, int64_t ignoreIndex) {
  return count_targets(targets, rows, ignoreIndex);
}

int training_mse(int dtype, void *loss, void *dpred, const void *pred, const void *target,
                 int64_t n, double dlossScale, int threads, char *err, int errLen) {
  return guarded(err, errLen, [&] {
    Context ctx = makeContext(threads);
    byDtype(dtype, [&](auto zero) {
      using T = decltype(zero);
      mse_forward_backward<T>(ctx, (T *)loss, (T *)dpred, (const T *)pred,
                              (const T *)target, n, dlossScale);
    });
  });
}

int training_adamw(int dtype, void *params, const void *grads, void *m, void *v, int64_t n,
                   double lr, double beta1, double beta2, double eps, double weightDecay,
                   int64_t step, int threads, char *err, int errLen) {
  return guarded(err, errLen, [&] {
    Context ctx = makeContext(threads);
    byDtype(dtype, [&](auto zero) {
      using T = decltype(zero);
      adamw_update<T>(ctx, (T *)params, (const T *)grads, (T *)m, (T *)v, n, lr, beta1,
                      beta2, eps, weightDecay, step);
    });
  });
}

int training_sgd(int dtype, void *params, const void *grads, void *buf, int64_t n,
                 double lr, double momentum, double weightDecay, int64_t step, int threads,
                 char *err, int errLen) {
  return guarded(err, errLen, [&] {
    Context ctx = makeContext(threads);
    byDtype(dtype, [&](auto zero) {
      using T = decltype(zero);
      sgd_update<T>(ctx, (T *)params, (const T *)grads, (T *)buf, n, lr, momentum,
                    weightDecay, step);
    });
  });
}

int training_grad_norm_squared(int dtype, const void *grads, int64_t n, double *out,
                               int threads, char *err, int errLen) {
  return guarded(err, errLen, [&] {
    Context ctx = makeContext(threads);
    byDtype(dtype, [&](auto zero) {
      using T = decltype(zero);
      *out = grad_norm_squared<T>(ctx, (const T *)grads, n);
    });
  });
}

int training_scale_inplace(int dtype, void *x, int64_t n, double s, int threads, char *err,
                           int errLen) {
  return guarded(err, errLen, [&] {
    Context ctx = makeContext(threads);
    byDtype(dtype, [&](auto zero) {
      using T = decltype(zero);
      scale_inplace<T>(ctx, (T *)x, n, s);
    });
  });
}

// The offloaded step (bmrt/offload.h) over one rank's partition [begin, end)
// of a group of `total` elements: `params` and `grads` are the whole group,
// `state` the rank's kOffloadSlots slots of (end - begin) elements (m and v
// in slots 0 and 1 persist between calls; the master is pulled from the
// params first, as the app does after writing them). Segments: at[i], n[i],
// wd[i] in group order. withState = 0 calls the update without the
// offloaded state (its error path).
int training_offload_adamw(int dtype, void *params, void *grads, void *state, int64_t total,
                           int64_t begin, int64_t end, const int64_t *at, const int64_t *n,
                           const double *wd, int numSegments, int64_t chunk, double lr,
                           double beta1, double beta2, double eps, int64_t step,
                           double gradScale, int withState, int threads, char *err,
                           int errLen) {
  return guarded(err, errLen, [&] {
    Context ctx = makeContext(threads);
    Buffers buf;
    buf.params = params;
    buf.grads = grads;
    buf.optState = state;
    buf.optStateOffloaded = withState != 0;
    buf.part.begin = begin;
    buf.part.end = end;
    buf.part.size = buf.part.optStride = end - begin;
    buf.part.total = buf.part.gradElems = buf.part.paramElems = total;
    std::vector<OffloadSegment> segs;
    for (int i = 0; i < numSegments; ++i)
      segs.push_back({at[i], n[i], wd[i]});
    byDtype(dtype, [&](auto zero) {
      using T = decltype(zero);
      TrainInfo train{};
      train.groupElems = total;
      train.gradBytes = total * (int64_t)sizeof(T);
      offload_pull_master(ctx, buf, train);
      OffloadRequest out = offload_grads_out<T>(ctx, buf, chunk);
      OffloadRequest in = offload_adamw_update<T>(ctx, buf, out, 0, segs.data(), numSegments,
                                                  lr, beta1, beta2, eps, step, gradScale);
      offload_wait(ctx, in);
    });
  });
}

double training_clip_coefficient(double totalNorm, double maxNorm) {
  return clip_coefficient(totalNorm, maxNorm);
}

// kind: 0 constant, 1 linear, 2 cosine.
int training_lr_multiplier(int kind, int64_t step, int64_t warmup, int64_t total,
                           double numCycles, double minRate, double *out, char *err,
                           int errLen) {
  return guarded(err, errLen, [&] {
    *out = lr_multiplier((LrSchedule)kind, step, warmup, total, numCycles, minRate);
  });
}

} // extern "C"
