//===- bmrt/cuda_skeletons.h - Where generated kernels run on a GPU -------===//
//
// The CUDA backend's launch_map (bmrt/skeletons.h includes this under nvcc
// with BMRT_CUDA_BACKEND): the generated functor runs in a grid-stride loop,
// 256 threads a block, consecutive threads on consecutive elements, on the
// device's compute stream (Context::device). The functor is passed by
// value: it holds only device pointers and scalars. A functor with quad(i)
// (bmbc prints it when every operand is f32 indexed by the element itself)
// whose pointers are all 16-byte aligned (aligned16()) runs four elements a
// thread with 16-byte loads and stores, the last n % 4 elements through
// operator() by the grid's first threads; any other functor, or unaligned
// pointers (an operand at an odd offset), one element a thread.
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_CUDA_SKELETONS_H
#define BMRT_CUDA_SKELETONS_H

#include "bmrt/context.h"

#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>
#include <utility>

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

// quads = n / 4 groups of four elements, then the n % 4 left over.
template <class Kernel> __global__ void map_kernel_quad(int64_t quads, int64_t n, Kernel kernel) {
  const int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  for (int64_t q = t; q < quads; q += (int64_t)gridDim.x * blockDim.x)
    kernel.quad(q * 4);
  if (t < n - quads * 4)
    kernel(quads * 4 + t);
}

/// Whether Kernel has quad(int64_t) (and with it aligned16()).
template <class Kernel, class = void> struct HasQuad : std::false_type {};
template <class Kernel>
struct HasQuad<Kernel, std::void_t<decltype(std::declval<const Kernel &>().quad(int64_t()))>>
    : std::true_type {};

template <class Kernel> void launch_map(Context &ctx, int64_t n, const Kernel &kernel) {
  ProfileScope scope(ctx, KernelKind::Generated);
  if (n <= 0)
    return;
  const int64_t threads = 256;
  if constexpr (HasQuad<Kernel>::value) {
    if (n >= 4 && kernel.aligned16()) {
      const int64_t quads = n / 4, blocks = (quads + threads - 1) / threads;
      map_kernel_quad<<<(unsigned)(blocks < 65536 ? blocks : 65536), (unsigned)threads, 0,
                        cuda::computeStream(ctx)>>>(quads, n, kernel);
      cuda::checkLaunch("launch_map (a generated kernel, 16-byte accesses)");
      return;
    }
  }
  const int64_t blocks = (n + threads - 1) / threads;
  map_kernel<<<(unsigned)(blocks < 65536 ? blocks : 65536), (unsigned)threads, 0,
               cuda::computeStream(ctx)>>>(n, kernel);
  cuda::checkLaunch("launch_map (a generated kernel)");
}
#endif

} // namespace bmrt

#endif // BMRT_CUDA_SKELETONS_H
