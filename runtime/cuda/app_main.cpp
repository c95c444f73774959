//===- cuda/app_main.cpp - The mains of --target=cuda executables ---------===//
//
// What a program built with `bmbc --target=cuda` runs today: it opens the
// GPU (openDevice: no driver, an old driver, no GPU, an old GPU are each a
// clear error, exit 1), checks the compiler's memory plan against the free
// GPU memory and makes the role allocations (too little memory says how
// much is needed and free, exit 1), then stops with exit 3: loading a
// checkpoint to the GPU and driving the entry points (the device app) are
// not written yet. So CI, on machines without a GPU, runs every CUDA
// executable to its no-GPU error; on a GPU the plan's allocations are
// exercised.
//
//===----------------------------------------------------------------------===//
#include "bmrt/program.h"
#include "cuda/device.h"
#include "cuda/device_buffers.h"

#include <cstdio>
#include <cstring>
#include <string>

namespace bmrt {
namespace {

constexpr int kExitNotImplemented = 3;

void printHelp(const char *argv0, const ProgramInfo &program, const char *kind) {
  std::printf("usage: %s [flags]\n\n"
              "The %s executable of job '%s' (model '%s'), built for the cuda target.\n"
              "This build of the cuda backend opens the GPU and makes the program's\n"
              "allocations (params, state, activations%s), then stops: the device app\n"
              "(checkpoints on the GPU, the step and decode loops) is not implemented yet.\n"
              "Exit codes: 1 no usable GPU (the message says why) or not enough GPU\n"
              "memory, 3 not implemented. bmbc --target=host builds a complete executable.\n",
              argv0, kind, program.job, program.model,
              program.train ? ", grads, optimizer state" : "");
}

int runOnDevice(int argc, char **argv, const ProgramInfo &program, const char *kind) {
  const char *argv0 = argc > 0 ? argv[0] : program.job;
  for (int i = 1; i < argc; i++)
    if (!std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h")) {
      printHelp(argv0, program, kind);
      return 0;
    }
  try {
    std::unique_ptr<cuda::Device> dev = cuda::openDevice();
    std::fprintf(stderr, "cuda: GPU %d: %s (compute capability %d.%d, %.0f MiB)\n", dev->index,
                 dev->name.c_str(), dev->major, dev->minor, dev->totalBytes / 1048576.0);
    cuda::DeviceBuffers buffers(*dev, program);
    std::fprintf(stderr, "cuda: allocated the program's %.1f MiB on the GPU\n",
                 buffers.totalBytes() / 1048576.0);
    std::fprintf(stderr,
                 "error: the cuda backend's %s executable is not implemented yet: loading "
                 "checkpoints to the GPU and running the entry points are the next part of "
                 "issue 7 (runtime/cuda/README.md); build the job with --target=host\n",
                 kind);
    return kExitNotImplemented;
  } catch (const Error &e) {
    std::fflush(stdout);
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}

} // namespace

int infer_main(int argc, char **argv, const ProgramInfo &program) {
  return runOnDevice(argc, argv, program, "infer");
}

int train_main(int argc, char **argv, const ProgramInfo &program) {
  return runOnDevice(argc, argv, program, "train");
}

int tune_main(int argc, char **argv, const ProgramInfo &program) {
  return runOnDevice(argc, argv, program, "tune");
}

} // namespace bmrt
