//===- app/kept_params.cpp - One whole param into the rank's params -------===//
//
// See kept_params.h. Group element e lives at group byte e * elem in the
// whole layout (from TrainInfo::groupParamOffset) and, when partitioned, at
// (e - paramsFrom) * elem in the params allocation; the rank keeps elements
// [paramsFrom, end), as WholeParams::keepPartition does.
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

void keepParam(const ProgramInfo &program, const Buffers &host, const ParamInfo &p,
               const uint8_t *whole) {
  const int64_t layers = paramLayers(p), slice = paramSliceBytes(p);
  if (!paramsPartitioned(program, host) || p.gradOffset < 0) {
    io::copyParamIn(p, (uint8_t *)host.params, p.offset, 0, layers * slice, whole);
    return;
  }
  // The partition's bytes of the group, counted from the group's start.
  const int64_t elem = groupElemBytes(*program.train);
  const int64_t lo = host.part.paramsFrom * elem, hi = host.part.end * elem;
  uint8_t *partition = (uint8_t *)host.params + program.train->groupParamOffset;
  const int64_t stride = paramLayerStride(p);
  for (int64_t l = 0; l < layers; ++l) {
    const int64_t at = p.gradOffset + l * stride; // layer l's slice in the group
    const int64_t from = std::max(at, lo), to = std::min(at + slice, hi);
    if (from < to)
      std::memcpy(partition + (from - lo), whole + l * slice + (from - at), (size_t)(to - from));
  }
}

} // namespace bmrt
