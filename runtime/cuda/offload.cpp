//===- cuda/offload.cpp - The offloaded AdamW step with a GPU -------------===//
//
// bmrt/offload.h on the cuda backend: the optimizer state (m, v, the fp32
// master of the rank's partition and the gradient staging) is pinned host
// memory (DeviceBuffers allocates it when TrainInfo::offloadOptimizer), so
// the GPU holds none of it. A step:
//
//   offload_grads_out     the copy stream waits for the compute stream (the
//                         backward wrote the gradients), then one
//                         cudaMemcpyAsync device -> pinned staging per chunk,
//                         each followed by its event; nothing waits yet.
//   offload_adamw_update  per chunk: cudaEventSynchronize on its copy-out
//                         event, the clip scaling and AdamW on the host
//                         (OpenMP + SIMD over the chunk, adamw_element: the
//                         host kernel's element math), then the chunk's
//                         master -> params cudaMemcpyAsync on the copy stream
//                         with its event. Chunk k + 1's update overlaps chunk
//                         k's copy back, and the copies out of later chunks
//                         overlap the updates of earlier ones.
//   offload_wait          the compute stream waits for the copy stream (an
//                         event, no host block): the ZeRO all-gather and the
//                         next forward see the updated params.
//
// NOT TESTED: this machine has no GPU. It compiles with -Werror in CI; no
// test has run it. The host backend's version (host/offload.cpp) is the
// one the bitwise tests exercise.
//
//===----------------------------------------------------------------------===//
#include "bmrt/adamw_element.h"
#include "bmrt/offload.h"
#include "bmrt/training.h"
#include "cuda/api.h"
#include "cuda/check.h"
#include "cuda/device.h"

#include <omp.h>

#include <algorithm>
#include <string>
#include <vector>

namespace bmrt {
namespace {

using cuda::Device;
using cuda::deviceOf;

// One event per chunk and direction, created once and reused every step
// (one device per process, one offloaded step in flight at a time).
struct ChunkEvents {
  std::vector<cudaEvent_t> out, in;
  void reserve(int64_t chunks) {
    while ((int64_t)out.size() < chunks) {
      cudaEvent_t a = nullptr, b = nullptr;
      BMRT_CUDA_CHECK(cudaEventCreateWithFlags(&a, cudaEventDisableTiming));
      BMRT_CUDA_CHECK(cudaEventCreateWithFlags(&b, cudaEventDisableTiming));
      out.push_back(a);
      in.push_back(b);
    }
  }
};

ChunkEvents &eventsOf() {
  static ChunkEvents events; // released with the process (the driver frees them)
  return events;
}

float *slot(const Buffers &buf, int k) {
  return (float *)buf.optState + (int64_t)k * buf.part.optStride;
}

// The host's threads for the update: OMP_NUM_THREADS, else the cores
// OpenMP sees (the cuda app refuses --threads).
int hostThreads() { return std::max(1, omp_get_max_threads()); }

} // namespace

template <>
OffloadRequest offload_grads_out<float>(Context &ctx, const Buffers &buf, int64_t chunk) {
  ProfileScope profile(ctx, KernelKind::Optimizer);
  checkOffloaded("offload_grads_out", buf, chunk);
  Device &dev = deviceOf(ctx);
  const Partition &p = buf.part;
  OffloadRequest r;
  r.chunk = chunk;
  r.chunks = offloadChunks(buf, chunk);
  ChunkEvents &events = eventsOf();
  events.reserve(r.chunks);
  cuda::orderAfter(dev, dev.copy, dev.compute); // the backward wrote the gradients
  float *staging = slot(buf, kOffloadStagingSlot);
  const float *grads = (const float *)buf.grads + (p.begin - p.gradsFrom);
  for (int64_t k = 0; k < r.chunks; ++k) {
    const int64_t lo = k * chunk, hi = std::min(lo + chunk, p.end - p.begin);
    BMRT_CUDA_CHECK(cudaMemcpyAsync(staging + lo, grads + lo, (size_t)(hi - lo) * sizeof(float),
                                    cudaMemcpyDeviceToHost, dev.copy));
    BMRT_CUDA_CHECK(cudaEventRecord(events.out[(size_t)k], dev.copy));
  }
  return r;
}

template <>
OffloadRequest offload_adamw_update<float>(Context &ctx, const Buffers &buf,
                                           const OffloadRequest &out, int64_t groupParamOffset,
                                           const OffloadSegment *segments, int numSegments,
                                           double lr, double beta1, double beta2, double eps,
                                           int64_t step, double gradScale) {
  ProfileScope profile(ctx, KernelKind::Optimizer);
  checkOffloaded("offload_adamw_update", buf, out.chunk);
  if (out.copyIn || out.chunks != offloadChunks(buf, out.chunk))
    fail("offload_adamw_update: the request is not this partition's gradient copy "
         "(offload_grads_out's; a bmbc bug)");
  if (step < 1)
    fail("offload_adamw_update: step is 1-based (got " + std::to_string(step) + ")");
  Device &dev = deviceOf(ctx);
  const Partition &p = buf.part;
  ChunkEvents &events = eventsOf();
  float *m = slot(buf, 0), *v = slot(buf, 1);
  float *master = slot(buf, kOffloadMasterSlot), *staging = slot(buf, kOffloadStagingSlot);
  // device; zero = 3's group span starts at paramsFrom
  float *params = (float *)((char *)buf.params + groupParamOffset) + (p.begin - p.paramsFrom);
  const float scale = (float)gradScale; // scale_inplace's rounding of the clip coefficient
  const int threads = hostThreads();
  int s = 0; // the first segment that may meet the chunk (segments are in group order)
  for (int64_t k = 0; k < out.chunks; ++k) {
    const int64_t lo = p.begin + k * out.chunk, hi = std::min(lo + out.chunk, p.end);
    BMRT_CUDA_CHECK(cudaEventSynchronize(events.out[(size_t)k])); // its gradients are here
    const int64_t first = lo - p.begin, count = hi - lo;
    if (gradScale < 1.0) {
      float *g = staging + first;
#pragma omp parallel for simd num_threads(threads) schedule(static)
      for (int64_t i = 0; i < count; ++i)
        g[i] *= scale;
    }
    forEachSegmentPiece(segments, numSegments, s, lo, hi,
                        [&](int64_t a, int64_t b, double weightDecay) {
                          const AdamWScalars<float> sc =
                              adamw_scalars<float>(lr, beta1, beta2, eps, weightDecay, step);
                          const int64_t e = a - p.begin;
                          float *mp = master + e, *me = m + e, *ve = v + e;
                          const float *ge = staging + e;
#pragma omp parallel for simd num_threads(threads) schedule(static)
                          for (int64_t i = 0; i < b - a; ++i)
                            adamw_element<float>(sc, mp[i], ge[i], me[i], ve[i]);
                        });
    // The updated chunk back into the params, behind the earlier chunks.
    BMRT_CUDA_CHECK(cudaMemcpyAsync(params + first, master + first,
                                    (size_t)count * sizeof(float), cudaMemcpyHostToDevice,
                                    dev.copy));
    BMRT_CUDA_CHECK(cudaEventRecord(events.in[(size_t)k], dev.copy));
  }
  OffloadRequest in = out;
  in.copyIn = true;
  return in;
}

void offload_wait(Context &ctx, const OffloadRequest &in) {
  if (!in.copyIn)
    fail("offload_wait: waits for offload_adamw_update's copies into the params (a bmbc bug)");
  Device &dev = deviceOf(ctx);
  // The copies back are in copy-stream order, the last event covers them
  // all; the compute stream (and the collectives ordered after it) wait for
  // it on the device, the host does not block.
  if (in.chunks > 0)
    BMRT_CUDA_CHECK(cudaStreamWaitEvent(dev.compute, eventsOf().in[(size_t)(in.chunks - 1)], 0));
}

void offload_pull_master(Context &ctx, const Buffers &buf, const TrainInfo &train) {
  ProfileScope profile(ctx, KernelKind::Optimizer);
  checkOffloaded("offload_pull_master", buf, 1);
  Device &dev = deviceOf(ctx);
  const int64_t elem = groupElemBytes(train);
  const Partition &p = buf.part;
  if (p.end == p.begin)
    return; // an empty partition (more ranks than the group needs)
  cuda::synchronize(dev.compute); // the params were pushed or written by kernels
  BMRT_CUDA_CHECK(cudaMemcpy((char *)buf.optState + kOffloadMasterSlot * p.optStride * elem,
                             (const char *)buf.params + train.groupParamOffset + (p.begin - p.paramsFrom) * elem,
                             (size_t)((p.end - p.begin) * elem), cudaMemcpyDeviceToHost));
}

} // namespace bmrt
