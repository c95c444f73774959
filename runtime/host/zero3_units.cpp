//===- host/zero3_units.cpp - ZeRO-3's gather of one unit's params --------===//
//
// training.h's gather_unit, wait_unit and prefetch_unit: which piece of a
// unit each rank owns (unitCounts, as ZeRO-2's reduce-scatter cuts it), the
// Comm::allGatherv of the staging, and the look-ahead's held request on the
// communicator. Only the copy of the rank's own piece from its partition into
// the staging touches memory, through copy_unit_piece (a memcpy on the host,
// host/partition.cpp; a copy on the compute stream on a GPU,
// cuda/api_training.cpp), so the host and the cuda backend link this same
// code.
//
//===----------------------------------------------------------------------===//
#include "bmrt/comm.h"
#include "bmrt/training.h"

#include <string>
#include <vector>

namespace bmrt {

template <class T>
CommHandle gather_unit(Context &ctx, const Buffers &buf, int64_t groupParamOffset,
                       int64_t stagingAt, int64_t at, int64_t n) {
  checkPartition("gather_unit", buf);
  if (!buf.paramStaging)
    fail("gather_unit: this zero = 3 program needs Buffers::paramStaging (the params of one "
         "unit at a time), which the app did not allocate");
  if (stagingAt < 0 || at < 0 || n < 0)
    fail("gather_unit: unit [" + std::to_string(at) + ", " + std::to_string(at + n) +
         ") staged at " + std::to_string(stagingAt) + " (a bmbc bug)");
  Comm &comm = commOf(ctx);
  const std::vector<int64_t> counts = unitCounts("gather_unit", buf, comm.size(), at, n);
  // The rank's own piece, from its partition into its place in the unit.
  T *staged = (T *)buf.paramStaging + stagingAt;
  int64_t lo, hi;
  if (clipToPartition(buf, at, n, lo, hi)) {
    const T *params = (const T *)((const char *)buf.params + groupParamOffset);
    copy_unit_piece(ctx, staged + (lo - at), params + (lo - buf.part.paramsFrom),
                    (hi - lo) * (int64_t)sizeof(T));
  }
  return comm.allGatherv(staged, counts.data(), sizeof(T) == 8 ? DType::F64 : DType::F32);
}

// The two slots of a repeat's layers: layer l's unit at stagingAt + (l % 2)
// * slotStride elements of the param staging. A held gather is keyed by the
// unit's slot-0 place (one per repeat) and tagged with its layer.
template <class T>
void wait_unit(Context &ctx, const Buffers &buf, int64_t groupParamOffset, int64_t stagingAt,
               int64_t slotStride, int64_t at, int64_t n, int64_t layer) {
  if (layer < 0 || slotStride <= 0)
    fail("wait_unit: layer " + std::to_string(layer) + " of slot stride " +
         std::to_string(slotStride) + " (a bmbc bug)");
  CommHandle h;
  if (!commOf(ctx).take(stagingAt, layer, h))
    h = gather_unit<T>(ctx, buf, groupParamOffset, stagingAt + (layer % 2) * slotStride, at, n);
  commWait(ctx, h);
}

template <class T>
void prefetch_unit(Context &ctx, const Buffers &buf, int64_t groupParamOffset,
                   int64_t stagingAt, int64_t slotStride, int64_t at, int64_t n, int64_t layer,
                   int64_t layers) {
  if (layer < 0 || layer >= layers)
    return; // past the loop's first or last layer
  if (slotStride <= 0)
    fail("prefetch_unit: slot stride " + std::to_string(slotStride) + " (a bmbc bug)");
  commOf(ctx).hold(stagingAt, layer,
                   gather_unit<T>(ctx, buf, groupParamOffset,
                                  stagingAt + (layer % 2) * slotStride, at, n));
}

#define BMRT_INSTANTIATE(T)                                                                  \
  template CommHandle gather_unit<T>(Context &, const Buffers &, int64_t, int64_t, int64_t, \
                                     int64_t);                                              \
  template void wait_unit<T>(Context &, const Buffers &, int64_t, int64_t, int64_t, int64_t, \
                             int64_t, int64_t);                                             \
  template void prefetch_unit<T>(Context &, const Buffers &, int64_t, int64_t, int64_t,     \
                                 int64_t, int64_t, int64_t, int64_t);
BMRT_INSTANTIATE(float)
BMRT_INSTANTIATE(double)
#undef BMRT_INSTANTIATE

} // namespace bmrt
