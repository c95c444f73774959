//===- cuda/infer_main.cpp - The infer executable of --target=cuda --------===//
//
// The cuda backend of the infer app (app/infer_run.h): the same run as the
// host executable (flags, checkpoint, deltas, tokenizer, generation, output)
// with the program's memory on the GPU (cuda/device_memory.h). The GPU is
// opened once the command line is checked and before any file is read, so
// a machine without one is told so first (exit 1; docs/building.md).
//
//===----------------------------------------------------------------------===//
#include "app/infer_run.h"
#include "cuda/app_main.h"
#include "app/info.h"
#include "cuda/device.h"
#include "cuda/device_memory.h"

#include <cstdio>

namespace bmrt {
namespace {

class CudaInferBackend : public InferBackend {
public:
  void open(Context &ctx, const InferFlags &flags) override {
    dev_ = cuda::openAppDevice(ctx, flags.threads);
  }
  // Every mode: greedy and temperature in one block, top_k and top_p after
  // a device sort (cuda/sampling.cu, sampling_sorted.cu).
  void checkSampling(const SamplingConfig &) const override {}
  std::unique_ptr<EntryMemory> allocate(const ProgramInfo &program) override {
    return cuda::makeDeviceEntryMemory(*dev_, program);
  }
  void printHelpNote(FILE *out) const override {
    std::fprintf(out,
                 "\nThis executable was built for the cuda target: it runs on an NVIDIA GPU of\n"
                 "compute capability 8.0 or newer ($LOCAL_RANK picks one of several). --threads\n"
                 "is refused. Decode steps replay a CUDA graph ($BMB_CUDA_GRAPHS=0: launch by\n"
                 "launch).\n"
                 "Exit codes: 1 no usable GPU (the message says why), not enough GPU memory,\n"
                 "or another run-time error; 2 a bad command line.\n");
  }
  void printMemoryProfile(FILE *out, const ProgramInfo &p) const override {
    const double mib = 1 << 20;
    std::fprintf(out,
                 "GPU %d memory: params %.1f MiB + state %.1f MiB + activations %.1f MiB + "
                 "cuBLASLt workspace %.1f MiB; host: peak RSS %.1f MiB (pinned params copy "
                 "%.1f MiB)\n",
                 dev_->index, p.paramBytes / mib, p.stateBytes / mib, p.activationBytes / mib,
                 dev_->workspaceBytes / mib, peakRssKiB() / 1024.0, p.paramBytes / mib);
  }

private:
  std::unique_ptr<cuda::Device> dev_;
};

} // namespace

int infer_main(int argc, char **argv, const ProgramInfo &program) {
  CudaInferBackend backend;
  return runInfer(argc, argv, program, backend);
}

} // namespace bmrt
