//===- cuda/tune_main.cpp - The tune executable of --target=cuda ----------===//
//
// The cuda backend of the tune app (app/tune_run.h): the same run as the
// host executable (flags, backbone and delta checkpoints, tokenizer, prompt
// assembly, data order, calibration, metrics, --resume) with the roles on
// the GPU and the tuning kernels' device forms (tuning.cu). The GPU is opened
// once the command line is checked and before any file is read.
//
// Memory: the roles are the train app's (makeDeviceTrainMemory of rank 0 of
// 1: pinned host copies of params, optimizer state and grads moved by pull
// and push). A tune entry's inputs (ids, mask positions, labels, label
// words, the calibration's floats) go in through one pinned buffer on the
// copy stream, each ordered after the kernels that read the previous one
// and before the next kernels; its outputs (losses, scores, word
// probabilities) come back once checkDeviceErrors has waited for the
// entry's kernels and found no bad index.
//
//===----------------------------------------------------------------------===//
#include "app/tune_run.h"
#include "cuda/app_main.h"
#include "cuda/check.h"
#include "cuda/device.h"
#include "cuda/device_buffers.h"
#include "cuda/device_memory.h"
#include "cuda/nccl_comm.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>

namespace bmrt {
namespace {

int64_t refBytes(const TensorRef &t) {
  int64_t n = t.dtype == DType::F64 ? 8 : 4; // inputs are i32 or f32 (fp64: refused by bmbc)
  for (int d = 0; d < t.rank; ++d)
    n *= t.shape[d];
  return n;
}

// The bytes of the largest input of a tune entry: the pinned staging's size.
int64_t largestTuneInput(const ProgramInfo &program) {
  int64_t largest = 0;
  for (const TrainEntry *e : {&program.train->forwardBackward, &program.train->evaluate})
    for (int i = 0; i < e->numInputs; ++i)
      largest = std::max(largest, refBytes(e->inputs[i]));
  return largest;
}

class DeviceTuneMemory : public TuneMemory {
public:
  DeviceTuneMemory(cuda::Device &dev, const ProgramInfo &program)
      : dev_(dev), roles_(cuda::makeDeviceTrainMemory(dev, program, 0, 1)),
        staging_((size_t)largestTuneInput(program)) {}

  TrainMemory &roles() override { return *roles_; }

  void writeInput(const TensorRef &t, const void *data, size_t bytes) override {
    if (bytes > staging_.size() || (int64_t)bytes > refBytes(t))
      fail(std::string("tune input ") + t.name + ": " + std::to_string(bytes) +
           " bytes, more than the input holds");
    if (bytes == 0)
      return;
    cuda::synchronize(dev_.copy); // the last input's copy is done with the pinned buffer
    std::memcpy(staging_.data(), data, bytes);
    // The previous entry's kernels may still read this input.
    cuda::orderAfter(dev_, dev_.copy, dev_.compute);
    BMRT_CUDA_CHECK(cudaMemcpyAsync((char *)roles_->buffers().activations + t.offset,
                                    staging_.data(), bytes, cudaMemcpyHostToDevice, dev_.copy));
    cuda::orderAfter(dev_, dev_.compute, dev_.copy);
  }

  void readOutput(const TensorRef &t, void *data, size_t bytes) override {
    if (t.dtype != DType::F32)
      fail(std::string("tune output ") + t.name + " is not f32 (the cuda backend has no fp64 "
           "programs)");
    if ((int64_t)bytes > refBytes(t))
      fail(std::string("tune output ") + t.name + ": " + std::to_string(bytes) +
           " bytes asked, more than the output holds");
    cuda::checkDeviceErrors(dev_); // waits for the entry's kernels
    BMRT_CUDA_CHECK(cudaMemcpy(data, (const char *)roles_->buffers().activations + t.offset,
                               bytes, cudaMemcpyDeviceToHost));
  }

private:
  cuda::Device &dev_;
  std::unique_ptr<TrainMemory> roles_;
  cuda::PinnedBuffer staging_;
};

class CudaTuneBackend : public TuneBackend {
public:
  int open(Context &ctx, const TuneFlags &flags) override {
    dev_ = cuda::openAppDevice(ctx, flags.threads);
    return 1;
  }
  std::unique_ptr<Comm> openComm(const CommOptions &options) override {
    return cuda::openNcclComm(*dev_, options);
  }
  std::unique_ptr<TuneMemory> allocate(const ProgramInfo &program) override {
    return std::make_unique<DeviceTuneMemory>(*dev_, program);
  }
  void printHelpNote(FILE *out) const override {
    std::fprintf(out,
                 "\nThis executable was built for the cuda target: it runs on an NVIDIA GPU of\n"
                 "compute capability 8.0 or newer ($LOCAL_RANK picks one of several), in one\n"
                 "process. --threads is refused. Exit codes: 1 no usable GPU (the message says\n"
                 "why), not enough GPU memory, or another run-time error; 2 a bad command line.\n");
  }

private:
  std::unique_ptr<cuda::Device> dev_;
};

} // namespace

int tune_main(int argc, char **argv, const ProgramInfo &program) {
  CudaTuneBackend backend;
  return runTune(argc, argv, program, backend);
}

} // namespace bmrt
