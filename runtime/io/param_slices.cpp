//===- io/param_slices.cpp - A whole param, slice by slice ----------------===//
#include "param_slices.h"

#include "safetensors.h"

#include <algorithm>
#include <cstring>

namespace bmrt {

int64_t paramLayers(const ParamInfo &p) { return p.stacked && p.rank > 0 ? p.shape[0] : 1; }

int64_t paramSliceBytes(const ParamInfo &p) {
  int64_t n = (int64_t)io::paramDTypeSize(p.dtype);
  for (int k = p.stacked ? 1 : 0; k < p.rank; ++k)
    n *= p.shape[k];
  return n;
}

int64_t paramLayerStride(const ParamInfo &p) {
  return p.layerStride > 0 ? p.layerStride : paramSliceBytes(p);
}

} // namespace bmrt

namespace bmrt::io {

void copyParamOut(const ParamInfo &p, const uint8_t *base, int64_t at, int64_t from, int64_t n,
                  uint8_t *dst) {
  forEachSlicePiece(p, from, n, [&](int64_t addr, int64_t logical, int64_t len) {
    memcpy(dst + (logical - from), base + at + addr, (size_t)len);
  });
}

void copyParamIn(const ParamInfo &p, uint8_t *base, int64_t at, int64_t from, int64_t n,
                 const uint8_t *src) {
  forEachSlicePiece(p, from, n, [&](int64_t addr, int64_t logical, int64_t len) {
    memcpy(base + at + addr, src + (logical - from), (size_t)len);
  });
}

std::vector<uint8_t> wholeParamOut(const ParamInfo &p, const uint8_t *base, int64_t at) {
  std::vector<uint8_t> out((size_t)(paramSliceBytes(p) * paramLayers(p)));
  copyParamOut(p, base, at, 0, (int64_t)out.size(), out.data());
  return out;
}

int64_t paramExtent(const ParamInfo &p) {
  const int64_t layers = paramLayers(p);
  return layers ? (layers - 1) * paramLayerStride(p) + paramSliceBytes(p) : 0;
}

} // namespace bmrt::io
