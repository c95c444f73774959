//===- host/simd_math.h - AVX-512 math shared by host kernels --*- C++ -*-===//
//
// Vector functions the float kernels with AVX-512 intrinsics share (the
// library is built -march=native; without AVX-512 this header declares
// nothing and the kernels take their portable loops).
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_HOST_SIMD_MATH_H
#define BMRT_HOST_SIMD_MATH_H

#include "host/avx512.h"

#ifdef __AVX512F__

namespace bmrt::host {

// exp(x) for x <= 0 (scores or logits minus their max), Cephes' polynomial
// (~1 ulp, the same as exp_fast of elementwise.h); below -87.3 (results
// under FLT_MIN, and -inf) the result is 0.
inline __m512 expNonPositive(__m512 x) {
  const __mmask16 keep = _mm512_cmp_ps_mask(x, _mm512_set1_ps(-87.3f), _CMP_GE_OQ);
  x = _mm512_max_ps(x, _mm512_set1_ps(-87.3f));
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
  __m512 p = _mm512_set1_ps(1.9875691500e-4f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
  p = _mm512_fmadd_ps(_mm512_mul_ps(p, r), r, _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
  return _mm512_maskz_scalef_ps(keep, p, n);
}

} // namespace bmrt::host

#endif // __AVX512F__
#endif // BMRT_HOST_SIMD_MATH_H
