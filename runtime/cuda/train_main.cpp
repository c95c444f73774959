//===- cuda/train_main.cpp - The train executable of --target=cuda --------===//
//
// The cuda backend of the train app (app/train_run.h): the same loop as the
// host executable (flags, data, steps, evaluation, checkpoints, resume,
// signals) with the roles on the GPU (cuda/device_memory.h) and the ranks
// on NCCL (cuda/nccl_comm.h: bootstrapped by openComm, so mpirun and
// torchrun start it as they start host runs). The GPU is opened once the
// command line is checked and before any file is read.
//
// fp16 programs' dynamic loss scaling is the host app's (app/loss_scale.cpp)
// on the device's gradients: its overflow check, zeroing and unscaling go
// through the kernel API (cuda/nonfinite.cu, fill_zero, scale_inplace).
//
//===----------------------------------------------------------------------===//
#include "app/train_run.h"
#include "cuda/app_main.h"
#include "cuda/device.h"
#include "cuda/device_memory.h"
#include "cuda/nccl_comm.h"

#include <cstdio>

namespace bmrt {
namespace {

class CudaTrainBackend : public TrainBackend {
public:
  int open(Context &ctx, const TrainFlags &flags) override {
    // Said before the GPU is opened (makeNcclComm refuses it too).
    if (flags.deterministic)
      throw UsageError("--deterministic is not available on the cuda backend: NCCL does not "
                       "sum in rank order");
    dev_ = cuda::openAppDevice(ctx, flags.threads);
    return 1;
  }
  std::unique_ptr<Comm> openComm(const CommOptions &options) override {
    return cuda::openNcclComm(*dev_, options);
  }
  std::unique_ptr<TrainMemory> allocate(const ProgramInfo &program, int rank,
                                        int ranks) override {
    return cuda::makeDeviceTrainMemory(*dev_, program, rank, ranks);
  }
  void printHelpNote(FILE *out) const override {
    std::fprintf(out,
                 "\nThis executable was built for the cuda target: it runs on an NVIDIA GPU of\n"
                 "compute capability 8.0 or newer, one per rank ($LOCAL_RANK), the ranks over\n"
                 "NCCL. --threads and --deterministic are refused. Exit codes: 1 no usable GPU\n"
                 "(the message says why), not enough GPU memory, or another run-time error;\n"
                 "2 a bad command line.\n");
  }

private:
  std::unique_ptr<cuda::Device> dev_;
};

} // namespace

int train_main(int argc, char **argv, const ProgramInfo &program) {
  CudaTrainBackend backend;
  return runTrain(argc, argv, program, backend);
}

} // namespace bmrt
