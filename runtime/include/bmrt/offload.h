//===- bmrt/offload.h - The optimizer step with its state in host memory --===//
//
// `offload = optimizer` (docs/distributed.md, "Optimizer offload"; BMTrain's
// AdamOffloadOptimizer, DeepSpeed's ZeRO-Offload). A rank's AdamW state for
// its partition of the flat trainable group lives in host memory, in the
// optimizer-state allocation (Buffers::optState; pinned on a GPU), as four
// slots of Partition::optStride elements:
//
//   slot 0  exp_avg     \ the same slots as the non-offloaded state, so the
//   slot 1  exp_avg_sq  / checkpoint code reads and writes them unchanged
//   slot 2  master      the partition's params (the values AdamW updates)
//   slot 3  staging     the partition's gradients, copied out of the device
//
// The generated optimizer step, after the gradient norm:
//
//   OffloadRequest out = offload_grads_out<T>(...);   // D2H of every chunk, an event each
//   OffloadRequest in = offload_adamw_update<T>(..., out, ...);
//       // per chunk: wait its event, clip, AdamW on the host (adamw_update<T>,
//       // the non-offloaded element math), issue the H2D of the master chunk
//   offload_wait(ctx, in);                             // the params hold the update
//
// The update is adamw_update<T> itself, called on the same elements with the
// same arguments as the non-offloaded step (after the same in-place scaling
// by the clip coefficient), so an offloaded run is bit for bit the
// non-offloaded one.
//
// On the host backend "device" and "host" are the same RAM: the copies are
// memcpy's done at issue (their events are complete at once), the state is
// a separate allocation, and nothing is saved. The cuda backend's copies are
// asynchronous on the copy stream (runtime/cuda/offload.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_OFFLOAD_H
#define BMRT_OFFLOAD_H

#include "bmrt/program.h"

#include <algorithm>
#include <cstdint>
#include <string>

namespace bmrt {

/// Slots of the offloaded optimizer state (above), each Partition::optStride
/// elements of the group's type.
constexpr int kOffloadSlots = 4;
constexpr int kOffloadMasterSlot = 2;
constexpr int kOffloadStagingSlot = 3;

/// One trainable param's (one layer's, for a stacked param whose layers are
/// a unit apart) elements [at, at + n) of the flat group and its weight
/// decay. The generated step lists them in group order.
struct OffloadSegment {
  int64_t at, n;
  double weightDecay;
};

/// Calls fn(a, b, weightDecay) for each piece [a, b) of group elements
/// [lo, hi) (a chunk) that a segment covers, in group order. `s` is the
/// caller's cursor over `segments` (in group order), kept across the chunks
/// of one step: it moves past the segments that end before lo.
template <class Fn>
inline void forEachSegmentPiece(const OffloadSegment *segments, int numSegments, int &s,
                                int64_t lo, int64_t hi, Fn fn) {
  while (s < numSegments && segments[s].at + segments[s].n <= lo)
    ++s;
  for (int t = s; t < numSegments && segments[t].at < hi; ++t) {
    const int64_t a = std::max(lo, segments[t].at);
    const int64_t b = std::min(hi, segments[t].at + segments[t].n);
    if (a < b)
      fn(a, b, segments[t].weightDecay);
  }
}

/// Copies in flight, chunk by chunk, over the partition: chunk k is group
/// elements [begin + k * chunk, min(end, begin + (k + 1) * chunk)). A backend
/// keeps an event per chunk (the host: none, its copies are done at issue).
struct OffloadRequest {
  int64_t chunks = 0;
  int64_t chunk = 0;
  bool copyIn = false; // false: gradients device -> host; true: params host -> device
};

/// Issues the copy of the partition's gradients into the staging slot,
/// chunk by chunk, every copy before any wait. Fails unless the app
/// allocated the offloaded state (Buffers::optStateOffloaded).
template <class T>
OffloadRequest offload_grads_out(Context &ctx, const Buffers &buf, int64_t chunk);

/// For each chunk of `out`, in order: waits for its copy, scales its
/// gradients by gradScale when that is below 1 (the clip coefficient, as
/// scale_part would), runs adamw_update<T> on the master, exp_avg and
/// exp_avg_sq of every segment's part of it, and issues the copy of the
/// updated master chunk into the params. Returns the copies into the params.
template <class T>
OffloadRequest offload_adamw_update(Context &ctx, const Buffers &buf, const OffloadRequest &out,
                                    int64_t groupParamOffset, const OffloadSegment *segments,
                                    int numSegments, double lr, double beta1, double beta2,
                                    double eps, int64_t step, double gradScale);

/// Blocks until the copies of `in` (offload_adamw_update's) are done.
void offload_wait(Context &ctx, const OffloadRequest &in);

/// master := the partition's params. The app calls it whenever it wrote the
/// params (initialised, loaded, resumed): the master is what AdamW updates.
void offload_pull_master(Context &ctx, const Buffers &buf, const TrainInfo &train);

/// The offload functions' shared checks (both backends): the partition, the
/// offloaded state allocated, a positive chunk; fails naming `what`.
inline void checkOffloaded(const char *what, const Buffers &buf, int64_t chunk) {
  checkPartition(what, buf);
  if (!buf.optStateOffloaded || (!buf.optState && buf.part.end > buf.part.begin))
    fail(std::string(what) + ": this offload = optimizer program needs the offloaded "
                             "optimizer state (Buffers::optStateOffloaded; pinned host memory "
                             "on a GPU), which the app did not allocate");
  if (chunk < 1)
    fail(std::string(what) + ": chunk of " + std::to_string(chunk) + " elements (a bmbc bug)");
}

/// How many chunks of `chunk` elements cover the rank's partition.
inline int64_t offloadChunks(const Buffers &buf, int64_t chunk) {
  return (buf.part.end - buf.part.begin + chunk - 1) / chunk;
}

} // namespace bmrt

#endif // BMRT_OFFLOAD_H
