//===- host/optimizers.cpp - AdamW, SGD, gradient norm, LR schedules ------===//
//
// Why it is shaped like this (training.h has the contract):
//  - The updates reproduce torch's arithmetic, not just its formulas: the
//    scalars torch computes in Python (1 - lr*wd, the bias corrections, the
//    step size) are computed here in double and rounded to T once, and each
//    tensor operation torch performs in T (mul_, add_, addcmul_, sqrt, /,
//    add_(eps), addcdiv_) is one rounding in T here too, in the same order.
//    So a float run stays within a few ulps of torch.optim.AdamW / SGD over
//    many steps instead of drifting apart.
//  - One pass over each buffer, OpenMP over elements; small buffers (biases)
//    stay serial because waking the thread team costs more than the work.
//  - The gradient norm accumulates in double (a float sum over 10^8 squares
//    loses the small ones).
//
//===----------------------------------------------------------------------===//
#include "bmrt/adamw_element.h"
#include "bmrt/training.h"
#include "host/host_common.h"

#include <cmath>
#include <string>

namespace bmrt {
namespace {

using host::threadCount;

// Below this many elements an element-wise pass runs on one thread.
constexpr int64_t kParallelElements = 1 << 15;

void checkBuffers(const char *what, int64_t n, bool ok) {
  if (n < 0)
    fail(std::string(what) + ": negative element count " + std::to_string(n));
  if (n > 0 && !ok)
    fail(std::string(what) + ": null buffer");
}

void checkStep(const char *what, int64_t step) {
  if (step < 1)
    fail(std::string(what) + ": step is 1-based (got " + std::to_string(step) + ")");
}

} // namespace

template <class T>
void adamw_update(Context &ctx, T *params, const T *grads, T *m, T *v, int64_t n,
                  double lr, double beta1, double beta2, double eps, double weightDecay,
                  int64_t step) {
  ProfileScope profile(ctx, KernelKind::Optimizer);
  checkBuffers("adamw_update", n, params && grads && m && v);
  checkStep("adamw_update", step);
  // The scalars torch computes in Python (double), rounded to T once each;
  // the element math is bmrt/adamw_element.h's (shared with the offloaded
  // step, bmrt/offload.h).
  const AdamWScalars<T> s = adamw_scalars<T>(lr, beta1, beta2, eps, weightDecay, step);
#pragma omp parallel for simd num_threads(threadCount(ctx)) schedule(static) \
    if (n >= kParallelElements)
  for (int64_t i = 0; i < n; ++i)
    adamw_element<T>(s, params[i], grads[i], m[i], v[i]);
}

template <class T>
void sgd_update(Context &ctx, T *params, const T *grads, T *momentumBuf, int64_t n,
                double lr, double momentum, double weightDecay, int64_t step) {
  ProfileScope profile(ctx, KernelKind::Optimizer);
  checkBuffers("sgd_update", n, params && grads && (momentum == 0.0 || momentumBuf));
  checkStep("sgd_update", step);
  const T wd = T(weightDecay), mu = T(momentum), negLr = T(-lr);
  const bool decays = weightDecay != 0.0;
  const bool first = step == 1;
  if (momentum == 0.0) {
#pragma omp parallel for simd num_threads(threadCount(ctx)) schedule(static) \
    if (n >= kParallelElements)
    for (int64_t i = 0; i < n; ++i) {
      const T d = decays ? grads[i] + params[i] * wd : grads[i];
      params[i] = params[i] + d * negLr;
    }
    return;
  }
#pragma omp parallel for simd num_threads(threadCount(ctx)) schedule(static) \
    if (n >= kParallelElements)
  for (int64_t i = 0; i < n; ++i) {
    const T d = decays ? grads[i] + params[i] * wd : grads[i];
    const T buf = first ? d : momentumBuf[i] * mu + d; // dampening 0
    momentumBuf[i] = buf;
    params[i] = params[i] + buf * negLr;
  }
}

template <class T>
double grad_norm_squared(Context &ctx, const T *grads, int64_t n) {
  checkBuffers("grad_norm_squared", n, grads != nullptr);
  double sum = 0;
#pragma omp parallel for simd num_threads(threadCount(ctx)) schedule(static) \
    reduction(+ : sum) if (n >= kParallelElements)
  for (int64_t i = 0; i < n; ++i) {
    const double g = double(grads[i]);
    sum += g * g;
  }
  return sum;
}

template <class T>
void scale_inplace(Context &ctx, T *x, int64_t n, double s) {
  checkBuffers("scale_inplace", n, x != nullptr);
  const T sT = T(s);
#pragma omp parallel for simd num_threads(threadCount(ctx)) schedule(static) \
    if (n >= kParallelElements)
  for (int64_t i = 0; i < n; ++i)
    x[i] *= sT;
}

double clip_coefficient(double totalNorm, double maxNorm) {
  const double c = maxNorm / (totalNorm + 1e-6);
  return c < 1.0 ? c : 1.0;
}

// The schedules (lr_constant ... lr_multiplier; not kernels): training_tables.cpp.

#define BMRT_INSTANTIATE(T)                                                              \
  template void adamw_update<T>(Context &, T *, const T *, T *, T *, int64_t, double,    \
                                double, double, double, double, int64_t);                \
  template void sgd_update<T>(Context &, T *, const T *, T *, int64_t, double, double,   \
                              double, int64_t);                                          \
  template double grad_norm_squared<T>(Context &, const T *, int64_t);                   \
  template void scale_inplace<T>(Context &, T *, int64_t, double);
BMRT_INSTANTIATE(float)
BMRT_INSTANTIATE(double)
#undef BMRT_INSTANTIATE

} // namespace bmrt
