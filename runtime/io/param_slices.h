//===- io/param_slices.h - A whole param, slice by slice ------------------===//
//
// A trainable stacked param's layers are not adjacent: the trainable group
// is layer-major (docs/distributed.md), so slice l starts layerStride bytes
// after slice l - 1. Files, initializers and hashes see a param as one
// contiguous tensor, layer after layer; these copies translate between that
// logical layout and the allocations (params, grads, optimizer state: the
// group has the same layout in each).
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_IO_PARAM_SLICES_H
#define BMRT_IO_PARAM_SLICES_H

#include "bmrt/program.h"

#include <cstdint>
#include <vector>

namespace bmrt::io {

/// Splits bytes [from, from + n) of param p's logical layout into the
/// pieces that lie within one slice each, and calls f(where the piece lies
/// from layer 0's start in the allocation, its logical offset, its bytes).
template <class F> void forEachSlicePiece(const ParamInfo &p, int64_t from, int64_t n, F f) {
  const int64_t slice = paramSliceBytes(p), stride = paramLayerStride(p);
  if (stride == slice || slice == 0) {
    if (n > 0)
      f(from, from, n);
    return;
  }
  for (int64_t x = from; x < from + n;) {
    const int64_t layer = x / slice, within = x % slice;
    const int64_t len = slice - within < from + n - x ? slice - within : from + n - x;
    f(layer * stride + within, x, len);
    x += len;
  }
}

/// Bytes [from, from + n) of param p's logical layout, whose layer 0 starts
/// at byte `at` of `base`, into `dst`.
void copyParamOut(const ParamInfo &p, const uint8_t *base, int64_t at, int64_t from, int64_t n,
                  uint8_t *dst);
/// `src` into bytes [from, from + n) of param p's logical layout.
void copyParamIn(const ParamInfo &p, uint8_t *base, int64_t at, int64_t from, int64_t n,
                 const uint8_t *src);

/// The whole param p (layer 0 at byte `at` of `base`), contiguous.
std::vector<uint8_t> wholeParamOut(const ParamInfo &p, const uint8_t *base, int64_t at);

/// One past the last byte of p's slices, from layer 0's start.
int64_t paramExtent(const ParamInfo &p);

} // namespace bmrt::io

#endif // BMRT_IO_PARAM_SLICES_H
