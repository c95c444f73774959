//===- bmrt/skeletons.h - Where generated kernels run ---------------------===//
//
// bmbc prints each generated element-wise kernel as a functor with a
// `__host__ __device__ void operator()(int64_t i)` computing element i; the
// skeleton decides how the elements are spread over the machine. On the host
// that is an OpenMP loop over both cores (small kernels stay on one thread:
// forking costs more than they do). A program built with --target=cuda
// (nvcc with BMRT_CUDA_BACKEND defined) gets the CUDA backend's skeleton
// instead (bmrt/cuda_skeletons.h): a grid-stride kernel with the same
// signature, so the emitted source has no backend #if.
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_SKELETONS_H
#define BMRT_SKELETONS_H

#include "bmrt/context.h"

#include <cstdint>

#if defined(__CUDACC__) && defined(BMRT_CUDA_BACKEND)
#include "bmrt/cuda_skeletons.h"
#else

namespace bmrt {

template <class Kernel> void launch_map(Context &ctx, int64_t n, const Kernel &kernel) {
  ProfileScope scope(ctx, KernelKind::Generated);
#pragma omp parallel for schedule(static) if (n >= 16384)
  for (int64_t i = 0; i < n; ++i)
    kernel(i);
}

} // namespace bmrt

#endif
#endif // BMRT_SKELETONS_H
