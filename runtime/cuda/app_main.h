//===- cuda/app_main.h - What --target=cuda executables refuse ------------===//
#ifndef BMRT_CUDA_APP_MAIN_H
#define BMRT_CUDA_APP_MAIN_H

#include "bmrt/program.h"
#include "cuda/device.h"

#include <memory>
#include <string>

namespace bmrt::cuda {

/// The exit code of a program part the cuda backend does not have yet.
constexpr int kExitNotImplemented = 3;

/// The GPU of an infer or train executable, once its command line is
/// checked: `threadsFlag` > 0 (--threads) is a UsageError (the kernels run on
/// the GPU); then openDevice, a line naming the GPU on stderr, and
/// ctx.device set.
std::unique_ptr<Device> openAppDevice(Context &ctx, int threadsFlag);

/// The main of a `kind` executable ("train", "tune") the cuda backend cannot
/// run yet: --help describes it; otherwise it says "error: the cuda
/// backend's <kind> executable is not implemented yet: <what>" and exits 3,
/// before touching the GPU.
int refuseNotImplemented(int argc, char **argv, const ProgramInfo &program, const char *kind,
                         const std::string &what);

} // namespace bmrt::cuda

#endif // BMRT_CUDA_APP_MAIN_H
