//===- app/kept_params.cpp - The bytes of each param this rank holds ------===//
//
// See kept_params.h. Group element e lives at group byte e * elem in the
// whole layout (from TrainInfo::groupParamOffset) and, when partitioned, at
// (e - paramsFrom) * elem in the params allocation; the rank holds elements
// [paramsFrom, end). A trainable param's layer l is group bytes
// [gradOffset + l * stride, + slice), its logical bytes [l * slice, + slice).
//
//===----------------------------------------------------------------------===//
#include "app/kept_params.h"

#include "io/param_slices.h"

#include <algorithm>
#include <cstring>

namespace bmrt {

bool paramsPartitioned(const ProgramInfo &program, const Buffers &host) {
  const TrainInfo *train = program.train;
  return train && train->zeroStage == 3 && host.part.paramElems < host.part.total;
}

KeptParams::KeptParams(const ProgramInfo &program, const Buffers &host)
    : program_(program), host_(host), partitioned_(paramsPartitioned(program, host)) {}

void KeptParams::held(const ParamInfo &p, int64_t from, int64_t n,
                      std::vector<Piece> &out) const {
  out.clear();
  uint8_t *params = (uint8_t *)host_.params;
  if (!partitioned_ || p.gradOffset < 0) { // whole here
    io::forEachSlicePiece(p, from, n, [&](int64_t addr, int64_t logical, int64_t len) {
      out.push_back({logical, len, params + p.offset + addr});
    });
    return;
  }
  // The partition's bytes of the group, counted from the group's start.
  const int64_t elem = groupElemBytes(*program_.train);
  const int64_t lo = host_.part.paramsFrom * elem, hi = host_.part.end * elem;
  uint8_t *partition = params + program_.train->groupParamOffset;
  const int64_t slice = paramSliceBytes(p), stride = paramLayerStride(p);
  if (slice == 0)
    return;
  for (int64_t l = from / slice; l < paramLayers(p) && l * slice < from + n; ++l) {
    // Layer l's logical bytes within [from, from + n), then within the
    // partition; logical byte x of layer l is group byte at + x.
    const int64_t a = std::max(from, l * slice), b = std::min(from + n, (l + 1) * slice);
    const int64_t at = p.gradOffset + l * stride - l * slice;
    const int64_t x = std::max(a, lo - at), y = std::min(b, hi - at);
    if (x < y)
      out.push_back({x, y - x, partition + (at + x - lo)});
  }
}

void keepParam(const ProgramInfo &program, const Buffers &host, const ParamInfo &p,
               const uint8_t *whole) {
  std::vector<ParamTarget::Piece> pieces;
  KeptParams(program, host).held(p, 0, paramLayers(p) * paramSliceBytes(p), pieces);
  for (const ParamTarget::Piece &piece : pieces)
    std::memcpy(piece.at, whole + piece.from, (size_t)piece.n);
}

} // namespace bmrt
