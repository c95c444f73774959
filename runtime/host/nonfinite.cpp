//===- host/nonfinite.cpp - Whether a buffer holds an inf or a NaN --------===//
//
// training.h's any_nonfinite on host memory: the overflow check of fp16's
// dynamic loss scaler (app/loss_scale.cpp), which the cuda backend answers
// with a device reduction instead (cuda/nonfinite.cu).
//
//===----------------------------------------------------------------------===//
#include "bmrt/training.h"
#include "host/host_common.h"

#include <cmath>
#include <string>

namespace bmrt {

template <class T> bool any_nonfinite(Context &ctx, const T *x, int64_t n) {
  if (n < 0)
    fail("any_nonfinite: negative element count " + std::to_string(n));
  int bad = 0;
#pragma omp parallel for num_threads(host::threadCount(ctx)) reduction(| : bad) \
    schedule(static) if (n >= (1 << 16))
  for (int64_t i = 0; i < n; ++i)
    bad |= !std::isfinite(x[i]);
  return bad != 0;
}

template bool any_nonfinite<float>(Context &, const float *, int64_t);
template bool any_nonfinite<double>(Context &, const double *, int64_t);

} // namespace bmrt
