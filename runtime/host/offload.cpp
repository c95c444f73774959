//===- host/offload.cpp - The offloaded AdamW step on the host backend ----===//
//
// See bmrt/offload.h. On the host the "device" allocations (params, grads)
// and the offloaded state are the same kind of memory, so each copy is a
// memcpy done when it is issued, and its "event" is complete at once. What
// still runs for real: the separate state allocation, the chunked copies
// out and back, and the host update over each chunk - adamw_update<T>, the
// very function the non-offloaded step calls (OpenMP + SIMD over the
// elements, the rank's threads), so the results are the same bits.
//
//===----------------------------------------------------------------------===//
#include "bmrt/offload.h"
#include "bmrt/training.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace bmrt {

template <class T> static T *slot(const Buffers &buf, int k) {
  return (T *)buf.optState + (int64_t)k * buf.part.optStride;
}

template <class T>
OffloadRequest offload_grads_out(Context &ctx, const Buffers &buf, int64_t chunk) {
  ProfileScope profile(ctx, KernelKind::Optimizer);
  checkOffloaded("offload_grads_out", buf, chunk);
  const Partition &p = buf.part;
  OffloadRequest r;
  r.chunk = chunk;
  r.chunks = offloadChunks(buf, chunk);
  T *staging = slot<T>(buf, kOffloadStagingSlot);
  const T *grads = (const T *)buf.grads + (p.begin - p.gradsFrom);
  for (int64_t k = 0; k < r.chunks; ++k) {
    const int64_t lo = k * chunk, hi = std::min(lo + chunk, p.end - p.begin);
    std::memcpy(staging + lo, grads + lo, (size_t)(hi - lo) * sizeof(T));
  }
  return r;
}

template <class T>
OffloadRequest offload_adamw_update(Context &ctx, const Buffers &buf, const OffloadRequest &out,
                                    int64_t groupParamOffset, const OffloadSegment *segments,
                                    int numSegments, double lr, double beta1, double beta2,
                                    double eps, int64_t step, double gradScale) {
  checkOffloaded("offload_adamw_update", buf, out.chunk);
  if (out.copyIn || out.chunks != offloadChunks(buf, out.chunk))
    fail("offload_adamw_update: the request is not this partition's gradient copy "
         "(offload_grads_out's; a bmbc bug)");
  const Partition &p = buf.part;
  T *m = slot<T>(buf, 0), *v = slot<T>(buf, 1);
  T *master = slot<T>(buf, kOffloadMasterSlot), *staging = slot<T>(buf, kOffloadStagingSlot);
  // The partition's first param element (zero = 3: the params allocation's
  // group span starts at paramsFrom, not at element 0).
  T *params = (T *)((char *)buf.params + groupParamOffset) + (p.begin - p.paramsFrom);
  int s = 0; // the first segment that may meet the chunk (segments are in group order)
  for (int64_t k = 0; k < out.chunks; ++k) {
    // The chunk's copy was done when it was issued (host backend): no wait.
    const int64_t lo = p.begin + k * out.chunk, hi = std::min(lo + out.chunk, p.end);
    // clip_grads' in-place scaling (scale_part), on this chunk.
    if (gradScale < 1.0)
      scale_inplace<T>(ctx, staging + (lo - p.begin), hi - lo, gradScale);
    forEachSegmentPiece(segments, numSegments, s, lo, hi,
                        [&](int64_t a, int64_t b, double weightDecay) {
                          const int64_t e = a - p.begin;
                          adamw_update<T>(ctx, master + e, staging + e, m + e, v + e, b - a,
                                          lr, beta1, beta2, eps, weightDecay, step);
                        });
    // The updated chunk back into the params (its "H2D" copy).
    std::memcpy(params + (lo - p.begin), master + (lo - p.begin), (size_t)(hi - lo) * sizeof(T));
  }
  OffloadRequest in = out;
  in.copyIn = true;
  return in;
}

void offload_wait(Context &, const OffloadRequest &in) {
  if (!in.copyIn)
    fail("offload_wait: waits for offload_adamw_update's copies into the params (a bmbc bug)");
  // Host backend: the copies were done when they were issued.
}

void offload_pull_master(Context &ctx, const Buffers &buf, const TrainInfo &train) {
  ProfileScope profile(ctx, KernelKind::Optimizer);
  checkOffloaded("offload_pull_master", buf, 1);
  const int64_t elem = groupElemBytes(train);
  const Partition &p = buf.part;
  if (p.end == p.begin)
    return; // an empty partition (more ranks than the group needs)
  std::memcpy((char *)buf.optState + kOffloadMasterSlot * p.optStride * elem,
              (char *)buf.params + train.groupParamOffset + (p.begin - p.paramsFrom) * elem,
              (size_t)((p.end - p.begin) * elem));
}

#define BMRT_INSTANTIATE(T)                                                                   \
  template OffloadRequest offload_grads_out<T>(Context &, const Buffers &, int64_t);          \
  template OffloadRequest offload_adamw_update<T>(Context &, const Buffers &,                 \
                                                  const OffloadRequest &, int64_t,            \
                                                  const OffloadSegment *, int, double, double, \
                                                  double, double, int64_t, double);
BMRT_INSTANTIATE(float)
BMRT_INSTANTIATE(double)
#undef BMRT_INSTANTIATE

} // namespace bmrt
