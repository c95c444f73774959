//===- cuda/app_main.cpp - The refusals of --target=cuda executables ------===//
//
// What the infer and train mains of the cuda target share (opening the GPU),
// and what is not there yet: it stops
// here with exit 3 and says what is missing, before the GPU is opened (so
// the message is the same on a machine without one): tune executables
// (bmbc refuses tune jobs for the cuda target before this; the main exists
// for programs built by hand), and fp16 training.
//
//===----------------------------------------------------------------------===//
#include "cuda/app_main.h"
#include "app/flags.h"

#include <cstdio>
#include <cstring>

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

int refuseNotImplemented(int argc, char **argv, const ProgramInfo &program, const char *kind,
                         const std::string &what) {
  const char *argv0 = argc > 0 ? argv[0] : program.job;
  for (int i = 1; i < argc; i++)
    if (!std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h")) {
      std::printf("usage: %s [flags]\n\n"
                  "The %s executable of job '%s' (model '%s'), built for the cuda target.\n"
                  "The cuda backend cannot run it yet: %s.\n"
                  "Exit codes: 3 not implemented. bmbc --target=host builds a complete "
                  "executable.\n",
                  argv0, kind, program.job, program.model, what.c_str());
      return 0;
    }
  std::fprintf(stderr,
               "error: the cuda backend's %s executable is not implemented yet: %s "
               "(runtime/cuda/README.md); build the job with --target=host\n",
               kind, what.c_str());
  return kExitNotImplemented;
}

} // namespace cuda

int tune_main(int argc, char **argv, const ProgramInfo &program) {
  return cuda::refuseNotImplemented(argc, argv, program, "tune",
                                    "the tuning kernels (soft embedding, row gather, "
                                    "verbalizer loss) have no device form");
}

} // namespace bmrt
