//===- cuda/probe_main.cpp - bmb-cuda-probe: is there a usable GPU? -------===//
//
// Opens the GPU the way every CUDA executable does (openDevice) and prints
// what it found: "GPU 0: NAME (compute capability X.Y, N MiB)" and exit 0,
// or the reason there is none ("error: no usable CUDA GPU: ...") and exit 1.
// lit's `cuda-gpu` feature and the GPU tests' skip decision run it.
//
//===----------------------------------------------------------------------===//
#include "bmrt/context.h"
#include "cuda/device.h"

#include <cstdio>

int main() {
  try {
    std::unique_ptr<bmrt::cuda::Device> dev = bmrt::cuda::openDevice();
    std::printf("GPU %d: %s (compute capability %d.%d, %.0f MiB)\n", dev->index,
                dev->name.c_str(), dev->major, dev->minor, dev->totalBytes / 1048576.0);
    return 0;
  } catch (const bmrt::Error &e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
