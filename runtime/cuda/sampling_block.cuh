//===- cuda/sampling_block.cuh - What the one-block sampling kernels share ===//
//
// sampling.cu (greedy, temperature) and sampling_sorted.cu (top_k, top_p)
// each pick the next token in one block of threads. Both split the
// vocabulary over the threads the same way and start with the host's
// checkLogits (the lowest id whose logit is NaN or +inf), so those are here
// once. Device code only; included by .cu files.
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_CUDA_SAMPLING_BLOCK_CUH
#define BMRT_CUDA_SAMPLING_BLOCK_CUH

#include <cub/block/block_reduce.cuh>

#include <cstdint>
#include <limits>

namespace bmrt::cuda::sampling_block {

/// "No such id": larger than every id, so the minimum over threads finds
/// the lowest id any thread found.
constexpr long long kNone = std::numeric_limits<long long>::max();

struct MinLL {
  __device__ long long operator()(long long a, long long b) const { return a < b ? a : b; }
};
struct MaxLL {
  __device__ long long operator()(long long a, long long b) const { return a > b ? a : b; }
};

/// Thread threadIdx.x's ids [lo, hi) of a row of V: contiguous runs, so a
/// first-match scan per thread, then a minimum over the block, finds the
/// lowest matching id.
template <int kThreads> __device__ inline void threadRange(int64_t V, int64_t &lo, int64_t &hi) {
  const int64_t per = (V + kThreads - 1) / kThreads;
  lo = threadIdx.x * per < V ? threadIdx.x * per : V;
  hi = lo + per < V ? lo + per : V;
}

/// The host's checkLogits: the lowest id in [0, V) whose logit is NaN or
/// +inf, kNone if none; every thread of the block returns it. `tmp` is the
/// block's reduce storage and `shared` a __shared__ slot, both free again
/// on return.
template <int kThreads>
__device__ long long firstBadLogit(const float *logits, int64_t lo, int64_t hi,
                                   typename cub::BlockReduce<long long, kThreads>::TempStorage &tmp,
                                   long long &shared) {
  long long bad = kNone;
  for (int64_t i = lo; i < hi && bad == kNone; ++i)
    if (isnan(logits[i]) || logits[i] == INFINITY)
      bad = i;
  bad = cub::BlockReduce<long long, kThreads>(tmp).Reduce(bad, MinLL());
  if (threadIdx.x == 0)
    shared = bad;
  __syncthreads();
  bad = shared;
  __syncthreads();
  return bad;
}

} // namespace bmrt::cuda::sampling_block

#endif // BMRT_CUDA_SAMPLING_BLOCK_CUH
