//===- cuda/api.h - Binding the kernel API of emitted programs to the GPU -===//
//
// An emitted program calls bmrt::gemm<float>(ctx, ...) and the rest of
// bmrt/kernels*.h, training.h and lowp.h; built with --target=cuda it links
// api_kernels.cpp and api_training.cpp instead of the host kernels, which
// pass the calls to the device kernels (kernels_cuda.h) on ctx.device.
// Every float kernel of the API has its device form; fp64 programs are
// refused by bmbc for the cuda target (there is never a silent host
// fallback: the pointers are device pointers).
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_CUDA_API_H
#define BMRT_CUDA_API_H

#include "bmrt/context.h"
#include "cuda/device.h"

namespace bmrt::cuda {

/// The device of ctx; fails if the app did not open one.
Device &deviceOf(Context &ctx);

} // namespace bmrt::cuda

#endif // BMRT_CUDA_API_H
