//===- cuda/api.h - Binding the kernel API of emitted programs to the GPU -===//
//
// An emitted program calls bmrt::gemm<float>(ctx, ...) and the rest of
// bmrt/kernels*.h, training.h and lowp.h; built with --target=cuda it links
// api_kernels.cpp and api_training.cpp instead of the host kernels, which
// pass the calls to the device kernels (kernels_cuda.h) on ctx.device.
// A call with no device kernel yet fails with a message naming it: it is
// never a silent host fallback (the pointers are device pointers).
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_CUDA_API_H
#define BMRT_CUDA_API_H

#include "bmrt/context.h"
#include "cuda/device.h"

namespace bmrt::cuda {

/// The device of ctx; fails if the app did not open one.
Device &deviceOf(Context &ctx);

/// Fails: `kernel` has no device implementation in this build.
[[noreturn]] void notOnDevice(const char *kernel);

} // namespace bmrt::cuda

#endif // BMRT_CUDA_API_H
