//===- cuda/app_main.h - What the --target=cuda mains share ---------------===//
#ifndef BMRT_CUDA_APP_MAIN_H
#define BMRT_CUDA_APP_MAIN_H

#include "bmrt/program.h"
#include "cuda/device.h"

#include <memory>

namespace bmrt::cuda {

/// The GPU of an infer, train or tune executable, once its command line is
/// checked: `threadsFlag` > 0 (--threads) is a UsageError (the kernels run on
/// the GPU); then openDevice, a line naming the GPU on stderr, and
/// ctx.device set.
std::unique_ptr<Device> openAppDevice(Context &ctx, int threadsFlag);

} // namespace bmrt::cuda

#endif // BMRT_CUDA_APP_MAIN_H
