//===- host/attention_lowp.h - Rounding attention's matmul inputs ---------===//
//
// bmb-autocast marks attention under precision = bf16 / fp16
// (AttentionArgs::lowp): the kernels round the inputs of their matmuls to
// the reduced type into fp32 scratch and run their fp32 products on the
// copies, so each product is exact and the sums are fp32 - the numerics of
// a bf16 tensor-core matmul with fp32 accumulation, as gemm_lowp's.
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_HOST_ATTENTION_LOWP_H
#define BMRT_HOST_ATTENTION_LOWP_H

#include "bmrt/kernels.h"
#include "bmrt/lowp.h"

#include <string>
#include <type_traits>

namespace bmrt::host {

/// The mark is for fp32 kernels (bmb-autocast marks f32 attention only).
template <class T> void checkAttentionLowp(const char *kernel, const AttentionArgs &a) {
  if (a.lowp && !std::is_same<T, float>::value)
    fail(std::string(kernel) + ": reduced-precision matmul inputs (lowp) need float "
                               "tensors");
}

/// dst[r * n + i] = src[r * ld + i] rounded to p, r < rows, i < n.
template <class T>
void roundRows(LowPrecision p, const T *src, int64_t ld, T *dst, int64_t rows, int64_t n) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t i = 0; i < n; ++i)
      dst[r * n + i] = T(round_to(p, float(src[r * ld + i])));
}

} // namespace bmrt::host

#endif // BMRT_HOST_ATTENTION_LOWP_H
