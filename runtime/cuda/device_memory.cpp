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
//    the step replayed as a CUDA graph: decode_graph.h); when the app said
//    it will sample the step's logits (expectSample), the draw is part of
//    the step, the step's one wait brings the token and the device's error
//    flag back, and sample() hands that token over (its errors raised
//    there, where the host raises them). --profile keeps the draw apart
//    (timed as Sampling).
//
//===----------------------------------------------------------------------===//
#include "cuda/device_memory.h"
#include "cuda/check.h"
#include "cuda/decode_graph.h"
#include "cuda/device_buffers.h"
#include "cuda/kernels_cuda.h"
#include "cuda/sampling_draw.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <optional>
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
    drawn_.reset();
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

  void expectSample(const Sampler &sampler, const TensorRef &logits, uint64_t step) override {
    expected_ = Expected{sampler.config, sampler.vocab, logits, step};
  }

  void call(Context &ctx, const EntryPoint &entry, int64_t start, int64_t rows) override {
    std::optional<Expected> expected = expected_;
    expected_.reset();
    drawn_.reset();
    if (std::strcmp(entry.name, "decode") != 0) {
      entry.fn(ctx, buffers_.get(), start, rows);
      checkDeviceErrors(dev_);
      return;
    }
    // The decode step, its position on the device (decode_graph.h), with
    // the draw of the next token when one is expected from its f32 logits.
    std::optional<StepDraw> draw;
    if (expected && !ctx.profile && expected->logits.dtype == DType::F32 &&
        isOutputOf(entry, expected->logits)) {
      draw.emplace();
      draw->params = drawParamsOf(expected->config, expected->vocab, expected->step);
      draw->mode = expected->config.mode;
      draw->logits =
          (const float *)((const char *)buffers_.get().activations + expected->logits.offset);
      draw->vocab = expected->vocab;
    }
    const std::optional<DrawResult> r =
        decode_.run(ctx, entry, buffers_.get(), start, rows, draw ? &*draw : nullptr);
    if (r) {
      drawn_ = Drawn{*r, expected->logits.offset, expected->step};
      if (!r->deviceError)
        return; // the step is done (run waited for it), no kernel reported
    }
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
    std::optional<Drawn> drawn = drawn_;
    drawn_.reset();
    if (drawn && drawn->logitsOffset == logits.offset && drawn->step == step)
      return tokenOf(drawn->result); // drawn within the decode step
    ProfileScope scope(ctx, KernelKind::Sampling);
    if (logits.dtype != DType::F32)
      fail(std::string("output ") + logits.name + " is " + describeTensor(logits) +
           "; the infer app samples from f32 logits only");
    const char *at = (const char *)buffers_.get().activations + logits.offset;
    return sample_token(dev_, sampler.config, (const float *)at, sampler.vocab, step);
  }

private:
  // What expectSample announced, and what the decode step drew for it.
  struct Expected {
    SamplingConfig config;
    int64_t vocab;
    TensorRef logits;
    uint64_t step;
  };
  struct Drawn {
    DrawResult result;
    int64_t logitsOffset;
    uint64_t step;
  };
  static bool isOutputOf(const EntryPoint &entry, const TensorRef &t) {
    for (int i = 0; i < entry.numOutputs; i++)
      if (entry.outputs[i].offset == t.offset)
        return true;
    return false;
  }

  Device &dev_;
  DeviceBuffers buffers_;
  PinnedBuffer params_; // the app's params: read from checkpoints, copied in
  PinnedBuffer inputs_; // one entry's token inputs, back to back
  DecodeGraphs decode_; // the decode entry's steps (CUDA graphs)
  std::optional<Expected> expected_;
  std::optional<Drawn> drawn_;
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
