//===- bmrt/cuda_skeletons.h - Where generated kernels run on a GPU -------===//
//
// The CUDA backend's launch_map (bmrt/skeletons.h includes this under nvcc
// with BMRT_CUDA_BACKEND): the generated functor runs in a grid-stride loop,
// 256 threads a block, consecutive threads on consecutive elements, on the
// device's compute stream (Context::device). The functor is passed by
// value: it holds only device pointers and scalars. Each element is one
// scalar access per operand; 128-bit vectorized access needs the functor to
// compute four elements and is not done yet.
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_CUDA_SKELETONS_H
#define BMRT_CUDA_SKELETONS_H

#include "bmrt/context.h"

#include <cuda_runtime.h>

#include <cstdint>

namespace bmrt {
namespace cuda {
/// The compute stream of ctx's device; fails if the app opened none.
cudaStream_t computeStream(Context &ctx);
/// Fails, naming `kernel`, if the last launch failed (cudaGetLastError).
void checkLaunch(const char *kernel);
} // namespace cuda

#ifdef __CUDACC__ // the declarations above are also what the backend's C++ files define
template <class Kernel> __global__ void map_kernel(int64_t n, Kernel kernel) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x)
    kernel(i);
}

template <class Kernel> void launch_map(Context &ctx, int64_t n, const Kernel &kernel) {
  ProfileScope scope(ctx, KernelKind::Generated);
  if (n <= 0)
    return;
  const int64_t threads = 256, blocks = (n + threads - 1) / threads;
  map_kernel<<<(unsigned)(blocks < 65536 ? blocks : 65536), (unsigned)threads, 0,
               cuda::computeStream(ctx)>>>(n, kernel);
  cuda::checkLaunch("launch_map (a generated kernel)");
}
#endif

} // namespace bmrt

#endif // BMRT_CUDA_SKELETONS_H
