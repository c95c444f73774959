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
#include "bmrt/training.h"

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
