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
#include <cstdint>
#include <math.h> // the float overloads of tanh/erf/exp in the global namespace

namespace bmrt {

// exp and tanh that the compiler vectorizes. libm's expf/tanhf are calls the
// loops around them cannot vectorize (glibc's vector variants need
// -ffast-math), and GPT-2's GELU epilogue over a 128 x 3072 prefill tile then
// cost more than the GEMM before it. float: Cody-Waite range reduction
// x = n ln2 + r, |r| <= ln2/2, and the degree-6 minimax polynomial for e^r of
// the Cephes library's expf (coefficients are published constants), scaled by
// 2^n through the exponent bits: about 1 ulp. double keeps libm (it serves the
// gradient checks).
BMRT_HD float exp_fast(float x) {
  x = x < -87.0f ? -87.0f : (x > 88.0f ? 88.0f : x);
  float n = rintf(x * 1.44269504088896341f);
  float r = fmaf(n, -0.693359375f, x);
  r = fmaf(n, 2.12194440e-4f, r);
  float p = 1.9875691500e-4f;
  p = fmaf(p, r, 1.3981999507e-3f);
  p = fmaf(p, r, 8.3334519073e-3f);
  p = fmaf(p, r, 4.1665795894e-2f);
  p = fmaf(p, r, 1.6666665459e-1f);
  p = fmaf(p, r, 5.0000001201e-1f);
  float y = fmaf(p, r * r, r) + 1.0f;
  union {
    int32_t i;
    float f;
  } scale;
  scale.i = ((int32_t)n + 127) << 23;
  return y * scale.f;
}
BMRT_HD double exp_fast(double x) { return exp(x); }

// tanh(u) = 1 - 2 / (e^{2u} + 1): exact at 0 and saturating to +-1.
BMRT_HD float tanh_fast(float u) { return 1.0f - 2.0f / (exp_fast(2.0f * u) + 1.0f); }
BMRT_HD double tanh_fast(double u) { return tanh(u); }

// GPT-2's tanh approximation: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
template <class T> BMRT_HD T gelu_tanh(T x) {
  const T c = T(0.7978845608028654);
  return T(0.5) * x * (T(1) + tanh_fast(c * (x + T(0.044715) * x * x * x)));
}
// BERT's exact GELU: 0.5 x (1 + erf(x / sqrt(2))).
template <class T> BMRT_HD T gelu_erf(T x) {
  return T(0.5) * x * (T(1) + erf(x * T(0.7071067811865476)));
}
template <class T> BMRT_HD T relu(T x) { return x > T(0) ? x : T(0); }
template <class T> BMRT_HD T silu(T x) { return x / (T(1) + exp_fast(-x)); }

} // namespace bmrt

#endif // BMRT_ELEMENTWISE_H
