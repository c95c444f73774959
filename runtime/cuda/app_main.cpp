//===- cuda/app_main.cpp - What the --target=cuda mains share -------------===//
//
// What the infer, train and tune mains of the cuda target share: opening
// the GPU once the command line is checked.
//
//===----------------------------------------------------------------------===//
#include "cuda/app_main.h"
#include "app/flags.h"

#include <cstdio>

namespace bmrt {
namespace cuda {

std::unique_ptr<Device> openAppDevice(Context &ctx, int threadsFlag) {
  if (threadsFlag > 0)
    throw UsageError("--threads sets the CPU threads of a --target=host executable; this one "
                     "runs on the GPU");
  std::unique_ptr<Device> dev = openDevice();
  std::fprintf(stderr, "cuda: GPU %d: %s (compute capability %d.%d, %.0f MiB)\n", dev->index,
               dev->name.c_str(), dev->major, dev->minor, dev->totalBytes / 1048576.0);
  ctx.device = dev.get();
  return dev;
}

} // namespace cuda

} // namespace bmrt
