//===- cuda/launch.cuh - What the backend's kernel files share ------------===//
//
// The grid of an element-wise pass (256 threads a block, grid-stride loops,
// at most 65536 blocks), the grid-stride loop itself, and how a kernel
// reports a bad index (device.h's DeviceErrorSlot). nvcc only.
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_CUDA_LAUNCH_CUH
#define BMRT_CUDA_LAUNCH_CUH

#include "cuda/device.h"

#include <cstdint>

namespace bmrt::cuda {

constexpr int kThreads = 256;

inline unsigned blocksFor(int64_t n) {
  int64_t b = (n + kThreads - 1) / kThreads;
  return (unsigned)(b < 65536 ? b : 65536);
}

/// for (i = this thread's first; i < n; i += all threads)
#define BMRT_GRID_STRIDE(i, n)                                                                  \
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < (n);                    \
       i += (int64_t)gridDim.x * blockDim.x)

/// Records the first bad index of the run in `slot` (later ones are dropped).
__device__ inline void reportBadIndex(DeviceErrorSlot *slot, int kind, long long index,
                                      long long row, long long limit, long long extra) {
  if (atomicCAS(&slot->flag, 0, 1) == 0) {
    slot->kind = kind;
    slot->index = index;
    slot->row = row;
    slot->limit = limit;
    slot->extra = extra;
  }
}

} // namespace bmrt::cuda

#endif // BMRT_CUDA_LAUNCH_CUH
