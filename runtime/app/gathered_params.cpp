//===- app/gathered_params.cpp - Params for a save, gathered one at a time ===//
//
// See gathered_params.h. Layer l of a trainable param is group elements
// [(gradOffset + l * stride) / elem, + slice / elem): contiguous, so its
// pieces on the ranks are unitCounts' (the cut ZeRO-3's gather of a unit
// uses, host/partition.cpp), and the layer's place in the logical layout,
// l * slice, is the allGatherv's buffer.
//
//===----------------------------------------------------------------------===//
#include "app/gathered_params.h"

#include "app/kept_params.h"
#include "bmrt/training.h"

#include <cstring>

namespace bmrt {

GatheredParams::GatheredParams(const ProgramInfo &program, const Buffers &host, Comm &comm)
    : program_(program), host_(host), comm_(comm),
      partitioned_(paramsPartitioned(program, host)), local_(host.params) {}

const uint8_t *GatheredParams::slice(const ParamInfo &p, int64_t layer,
                                     std::vector<uint8_t> &scratch) {
  if (!partitioned_ || p.gradOffset < 0) // whole here: nothing to gather
    return writes() ? local_.slice(p, layer, scratch) : nullptr;
  const TrainInfo &train = *program_.train;
  const int64_t elem = groupElemBytes(train);
  const int64_t slice = paramSliceBytes(p), stride = paramLayerStride(p);
  const int64_t first = layer >= 0 ? layer : 0, layers = layer >= 0 ? 1 : paramLayers(p);
  const DType dtype = groupDType(program_);
  const char *partition = (const char *)host_.params + train.groupParamOffset;
  // The writer keeps every layer of the slice; the others only pass their
  // pieces on, through one layer's buffer.
  scratch.resize((size_t)((writes() ? layers : 1) * slice));
  for (int64_t l = 0; l < layers; ++l) {
    const int64_t at = (p.gradOffset + (first + l) * stride) / elem, n = slice / elem;
    const std::vector<int64_t> counts =
        unitCounts("saving a checkpoint", host_, comm_.size(), at, n);
    uint8_t *dst = scratch.data() + (writes() ? l * slice : 0);
    int64_t lo, hi;
    if (clipToPartition(host_, at, n, lo, hi))
      std::memcpy(dst + (lo - at) * elem, partition + (lo - host_.part.paramsFrom) * elem,
                  (size_t)((hi - lo) * elem));
    if (counts[0] == n) // all on rank 0, the writer: every rank skips the gather alike
      continue;
    comm_.wait(comm_.allGatherv(dst, counts.data(), dtype));
  }
  return writes() ? scratch.data() : nullptr;
}

} // namespace bmrt
