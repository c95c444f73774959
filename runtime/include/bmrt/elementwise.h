//===- bmrt/elementwise.h - Scalar element functions shared by all kernels -===//
//
// The math of the activations, written once as __host__ __device__ functions:
// the GEMM epilogues of both backends and the generated kernels call these,
// so the host tests check the same expressions the GPU runs.
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_ELEMENTWISE_H
#define BMRT_ELEMENTWISE_H

#include "bmrt/portable.h"

#include <cmath>
#include <math.h> // the float overloads of tanh/erf/exp in the global namespace

namespace bmrt {

// GPT-2's tanh approximation: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
template <class T> BMRT_HD T gelu_tanh(T x) {
  const T c = T(0.7978845608028654);
  return T(0.5) * x * (T(1) + tanh(c * (x + T(0.044715) * x * x * x)));
}
// BERT's exact GELU: 0.5 x (1 + erf(x / sqrt(2))).
template <class T> BMRT_HD T gelu_erf(T x) {
  return T(0.5) * x * (T(1) + erf(x * T(0.7071067811865476)));
}
template <class T> BMRT_HD T relu(T x) { return x > T(0) ? x : T(0); }
template <class T> BMRT_HD T silu(T x) { return x / (T(1) + exp(-x)); }

} // namespace bmrt

#endif // BMRT_ELEMENTWISE_H
