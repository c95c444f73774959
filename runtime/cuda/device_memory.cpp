//===- cuda/device_memory.cpp - EntryMemory on the GPU --------------------===//
//
// See device_memory.h. Ordering, since kernels and copies are asynchronous:
//  - inputs: the pinned buffer is refilled only after the copy stream has
//    finished with it (synchronize(copy)); the compute stream waits for the
//    copies (orderAfter) before the entry's kernels;
//  - params: the pinned copy goes to the device on the copy stream, which the
//    host waits for (a load or a delta switch is rare; the app may write the
//    pinned copy again right after), and the compute stream is ordered after
//    it;
//  - call: returns after checkDeviceErrors, which waits for the compute
//    stream and reports a bad index a kernel recorded, so the app's timing
//    of an entry is the GPU's time, and outputs are ready to read. The
//    decode entry runs through DecodeGraphs (its position in device memory,
//    the step replayed as a CUDA graph: decode_graph.h).
//
//===----------------------------------------------------------------------===//
#include "cuda/device_memory.h"
#include "cuda/check.h"
#include "cuda/decode_graph.h"
#include "cuda/device_buffers.h"
#include "cuda/kernels_cuda.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace bmrt::cuda {
namespace {

class DeviceEntryMemory : public EntryMemory {
public:
  DeviceEntryMemory(Device &dev, const ProgramInfo &program)
      : dev_(dev), buffers_(dev, program), params_((size_t)program.paramBytes),
        inputs_((size_t)largestEntryInputs(program) * sizeof(int32_t)),
        decode_(dev, decodeGraphsWanted(std::getenv("BMB_CUDA_GRAPHS"))) {}

  const Buffers &buffers() const override { return buffers_.get(); }
  void *hostParams() override { return params_.data(); }

  void paramsChanged() override {
    if (params_.size() == 0)
      return;
    BMRT_CUDA_CHECK(cudaMemcpyAsync(buffers_.get().params, params_.data(), params_.size(),
                                    cudaMemcpyHostToDevice, dev_.copy));
    synchronize(dev_.copy);
    orderAfter(dev_, dev_.compute, dev_.copy);
  }

  void writeInputs(const EntryPoint &entry, const int32_t *ids, int64_t rows) override {
    synchronize(dev_.copy); // the previous call's copies are done with the pinned buffer
    orderAfter(dev_, dev_.copy, dev_.compute); // and its kernels with the device inputs
    int32_t *pinned = (int32_t *)inputs_.data();
    char *activations = (char *)buffers_.get().activations;
    for (int i = 0; i < entry.numInputs; i++) {
      const int64_t n = entryInputElements(entry, i);
      fillEntryInput(entry, i, pinned, ids, rows);
      BMRT_CUDA_CHECK(cudaMemcpyAsync(activations + entry.inputs[i].offset, pinned,
                                      (size_t)n * sizeof(int32_t), cudaMemcpyHostToDevice,
                                      dev_.copy));
      pinned += n;
    }
    orderAfter(dev_, dev_.compute, dev_.copy);
  }

  void call(Context &ctx, const EntryPoint &entry, int64_t start, int64_t rows) override {
    if (!std::strcmp(entry.name, "decode")) // its position on the device: decode_graph.h
      decode_.run(ctx, entry, buffers_.get(), start, rows);
    else
      entry.fn(ctx, buffers_.get(), start, rows);
    checkDeviceErrors(dev_);
  }

  ValidRows readOutput(const TensorRef &t, int64_t rows) override {
    std::vector<unsigned char> whole((size_t)(tensorElements(t) * dtypeBytes(t.dtype)));
    const char *at = (const char *)buffers_.get().activations + t.offset;
    BMRT_CUDA_CHECK(cudaMemcpyAsync(whole.data(), at, whole.size(), cudaMemcpyDeviceToHost,
                                    dev_.compute));
    synchronize(dev_.compute);
    return gatherValidRowsOf(t, whole.data(), rows);
  }

  int32_t sample(Context &ctx, Sampler &sampler, const TensorRef &logits,
                 uint64_t step) override {
    ProfileScope scope(ctx, KernelKind::Sampling);
    if (logits.dtype != DType::F32)
      fail(std::string("output ") + logits.name + " is " + describeTensor(logits) +
           "; the infer app samples from f32 logits only");
    const char *at = (const char *)buffers_.get().activations + logits.offset;
    return sample_token(dev_, sampler.config, (const float *)at, sampler.vocab, step);
  }

private:
  Device &dev_;
  DeviceBuffers buffers_;
  PinnedBuffer params_; // the app's params: read from checkpoints, copied in
  PinnedBuffer inputs_; // one entry's token inputs, back to back
  DecodeGraphs decode_; // the decode entry's steps (CUDA graphs)
};

} // namespace

int64_t largestEntryInputs(const ProgramInfo &program) {
  int64_t largest = 0;
  for (int e = 0; e < program.numEntries; e++) {
    int64_t n = 0;
    for (int i = 0; i < program.entries[e].numInputs; i++)
      n += entryInputElements(program.entries[e], i);
    largest = std::max(largest, n);
  }
  return largest;
}

std::unique_ptr<EntryMemory> makeDeviceEntryMemory(Device &dev, const ProgramInfo &program) {
  return std::make_unique<DeviceEntryMemory>(dev, program);
}

} // namespace bmrt::cuda
