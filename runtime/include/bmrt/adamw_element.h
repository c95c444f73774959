//===- bmrt/adamw_element.h - AdamW's arithmetic on one element -*- C++ -*-===//
//
// The one definition of the AdamW update of an element, called by the host
// kernel (host/optimizers.cpp) and by the offloaded step's host loops (host
// and cuda backends, bmrt/offload.h), so an offloaded run computes the same
// bits as one that is not. `__host__ __device__` so a device kernel can call
// it too.
//
// torch's arithmetic, not just its formulas (host/optimizers.cpp says why):
// the scalars torch computes in Python are computed in double and rounded to
// T once (adamw_scalars); each tensor operation torch performs in T is one
// rounding in T here, in the same order.
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_ADAMW_ELEMENT_H
#define BMRT_ADAMW_ELEMENT_H

#include "bmrt/portable.h"

#include <cmath>

namespace bmrt {

template <class T> struct AdamWScalars {
  T decay, b1, oneMinusB1, b2, oneMinusB2, negStepSize, bc2Sqrt, eps;
  bool decays;
};

/// The per-call scalars of step `step` (1-based), rounded to T once each.
template <class T>
inline AdamWScalars<T> adamw_scalars(double lr, double beta1, double beta2, double eps,
                                     double weightDecay, int64_t step) {
  AdamWScalars<T> s;
  s.decay = T(1.0 - lr * weightDecay);
  s.b1 = T(beta1);
  s.oneMinusB1 = T(1.0 - beta1);
  s.b2 = T(beta2);
  s.oneMinusB2 = T(1.0 - beta2);
  const double biasCorrection1 = 1.0 - std::pow(beta1, double(step));
  const double biasCorrection2 = 1.0 - std::pow(beta2, double(step));
  s.negStepSize = T(-(lr / biasCorrection1));
  s.bc2Sqrt = T(std::sqrt(biasCorrection2));
  s.eps = T(eps);
  s.decays = weightDecay != 0.0;
  return s;
}

/// One element: p, m, v updated in place from the gradient g.
template <class T>
BMRT_HD void adamw_element(const AdamWScalars<T> &s, T &param, T g, T &m, T &v) {
  T p = param;
  if (s.decays)
    p = p * s.decay;
  const T mi = m * s.b1 + g * s.oneMinusB1;
  const T vi = v * s.b2 + (g * g) * s.oneMinusB2;
  const T denom = std::sqrt(vi) / s.bc2Sqrt + s.eps;
  param = p + s.negStepSize * (mi / denom);
  m = mi;
  v = vi;
}

} // namespace bmrt

#endif // BMRT_ADAMW_ELEMENT_H
