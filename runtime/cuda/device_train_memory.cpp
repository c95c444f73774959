//===- cuda/device_train_memory.cpp - TrainMemory on the GPU --------------===//
//
// See device_memory.h. The host copies are zeroed at allocation (pinned
// memory is not), as the training contract wants the optimizer state and
// grads zero before the first step and the app pushes them as they are.
//
//===----------------------------------------------------------------------===//
#include "cuda/check.h"
#include "cuda/device_buffers.h"
#include "cuda/device_memory.h"

#include <cstring>
#include <vector>

namespace bmrt::cuda {
namespace {

// One role's pinned host copy, zeroed.
struct HostCopy {
  explicit HostCopy(int64_t bytes) : pinned((size_t)bytes) {
    if (bytes > 0)
      std::memset(pinned.data(), 0, (size_t)bytes);
  }
  PinnedBuffer pinned;
};

class DeviceTrainMemory : public TrainMemory {
public:
  DeviceTrainMemory(Device &dev, const ProgramInfo &program, int rank, int ranks)
      : dev_(dev), buffers_(dev, program, rank, ranks), params_(buffers_.bytes(0)),
        // offload = optimizer: the state is host memory already, no copy.
        optState_(buffers_.get().optStateOffloaded ? 0 : buffers_.bytes(4)),
        grads_(buffers_.bytes(3)),
        inputs_((size_t)(program.train->batch * program.train->seq) * sizeof(int32_t)) {
    host_.params = params_.pinned.data();
    host_.optState = buffers_.get().optStateOffloaded ? buffers_.get().optState
                                                      : optState_.pinned.data();
    host_.optStateOffloaded = buffers_.get().optStateOffloaded;
    host_.grads = grads_.pinned.data();
    host_.part = buffers_.get().part;
  }

  const Buffers &buffers() const override { return buffers_.get(); }
  const Buffers &host() const override { return host_; }
  int64_t bytes(int role) const override { return buffers_.bytes(role); }

  void pull(unsigned roles) override {
    for (const Role &r : rolesOf(roles))
      BMRT_CUDA_CHECK(cudaMemcpyAsync(r.host, r.device, r.bytes, cudaMemcpyDeviceToHost,
                                      dev_.compute)); // after the kernels that wrote them
    synchronize(dev_.compute);
  }

  void push(unsigned roles) override {
    orderAfter(dev_, dev_.copy, dev_.compute); // kernels still reading them finish first
    for (const Role &r : rolesOf(roles))
      BMRT_CUDA_CHECK(cudaMemcpyAsync(r.device, r.host, r.bytes, cudaMemcpyHostToDevice,
                                      dev_.copy));
    synchronize(dev_.copy); // the app may write the host copy again at once
    orderAfter(dev_, dev_.compute, dev_.copy);
  }

  void writeInput(const TensorRef &t, const int32_t *values, int64_t n) override {
    if (n * (int64_t)sizeof(int32_t) > (int64_t)inputs_.size())
      fail(std::string("train input ") + t.name + ": " + std::to_string(n) +
           " values, more than a batch's rows");
    synchronize(dev_.copy); // the last input's copy is done with the pinned buffer
    std::memcpy(inputs_.data(), values, (size_t)n * sizeof(int32_t));
    // The previous micro-batch's kernels may still read this input.
    orderAfter(dev_, dev_.copy, dev_.compute);
    BMRT_CUDA_CHECK(cudaMemcpyAsync((char *)buffers_.get().activations + t.offset,
                                    inputs_.data(), (size_t)n * sizeof(int32_t),
                                    cudaMemcpyHostToDevice, dev_.copy));
    orderAfter(dev_, dev_.compute, dev_.copy);
  }

  double sumLosses(const TensorRef &losses, int64_t rows) override {
    if (losses.dtype != DType::F32)
      fail(std::string("train output ") + losses.name + " is not f32 (the cuda backend has no "
           "fp64 programs)");
    checkDeviceErrors(dev_); // waits for the entry's kernels
    losses_.resize((size_t)rows);
    BMRT_CUDA_CHECK(cudaMemcpy(losses_.data(),
                               (const char *)buffers_.get().activations + losses.offset,
                               (size_t)rows * sizeof(float), cudaMemcpyDeviceToHost));
    return sumLossRows(losses_.data(), DType::F32, rows);
  }

  void finishStep() override { checkDeviceErrors(dev_); }

private:
  struct Role {
    void *host, *device;
    size_t bytes;
  };
  std::vector<Role> rolesOf(unsigned roles) const {
    const Buffers &d = buffers_.get();
    std::vector<Role> out;
    if ((roles & kParams) && buffers_.bytes(0) > 0)
      out.push_back({host_.params, d.params, (size_t)buffers_.bytes(0)});
    if ((roles & kOptState) && buffers_.bytes(4) > 0 && !d.optStateOffloaded)
      out.push_back({host_.optState, d.optState, (size_t)buffers_.bytes(4)});
    if ((roles & kGrads) && buffers_.bytes(3) > 0)
      out.push_back({host_.grads, d.grads, (size_t)buffers_.bytes(3)});
    return out;
  }

  Device &dev_;
  DeviceBuffers buffers_;
  HostCopy params_, optState_, grads_;
  PinnedBuffer inputs_;        // one input of one micro-batch
  std::vector<float> losses_;  // one micro-batch's losses, read back
  Buffers host_;
};

} // namespace

std::unique_ptr<TrainMemory> makeDeviceTrainMemory(Device &dev, const ProgramInfo &program,
                                                   int rank, int ranks) {
  return std::make_unique<DeviceTrainMemory>(dev, program, rank, ranks);
}

} // namespace bmrt::cuda
