//===- host/avx512.h - <immintrin.h> without GCC 12's false warnings ------===//
//
// The host kernels' one way to include the AVX-512 intrinsics. GCC 12's
// _mm512_reduce_*_ps and friends inline _mm512_extractf64x4_pd and others
// whose _mm256_undefined_pd() operand trips -W(maybe-)uninitialized (GCC bug
// 105593, fixed in GCC 13). The diagnostic state at the header's own lines is
// what counts, so the warnings are off while it is read and back on after.
//
//===----------------------------------------------------------------------===//

#ifndef BMRT_HOST_AVX512_H
#define BMRT_HOST_AVX512_H

#ifdef __AVX512F__
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#endif

#endif // BMRT_HOST_AVX512_H
