//===- cuda/block_reduce.cuh - Row sums and maxima of one thread block ----===//
//
// The reductions of the row kernels (one block of kThreads per row): CUB's
// BlockReduce, with the result broadcast to every thread through shared
// memory. Each call synchronises the block before returning, so the
// caller may reuse the storage for the next reduction at once. Included
// only by the row-kernel files (CUB is heavy to compile).
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_CUDA_BLOCK_REDUCE_CUH
#define BMRT_CUDA_BLOCK_REDUCE_CUH

#include "cuda/launch.cuh"

#include <cub/block/block_reduce.cuh>

namespace bmrt::cuda {

template <class T> struct RowReduce {
  using Reduce = cub::BlockReduce<T, kThreads>;
  struct Storage {
    typename Reduce::TempStorage tmp;
    T result;
  };

  struct Max {
    __device__ T operator()(T a, T b) const { return a > b ? a : b; }
  };

  /// The block's sum of v, on every thread.
  static __device__ T sum(T v, Storage &s) {
    T total = Reduce(s.tmp).Sum(v);
    if (threadIdx.x == 0)
      s.result = total;
    __syncthreads();
    total = s.result;
    __syncthreads();
    return total;
  }

  /// The block's maximum of v, on every thread.
  static __device__ T max(T v, Storage &s) {
    T m = Reduce(s.tmp).Reduce(v, Max());
    if (threadIdx.x == 0)
      s.result = m;
    __syncthreads();
    m = s.result;
    __syncthreads();
    return m;
  }
};

} // namespace bmrt::cuda

#endif // BMRT_CUDA_BLOCK_REDUCE_CUH
