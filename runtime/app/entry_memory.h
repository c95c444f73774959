//===- app/entry_memory.h - Where a program's tensors live ----------------===//
//
// The seam between the infer app's logic (flags, checkpoints, the generate
// loop, sampling, output) and the memory it runs on. The host app's memory is
// the process's (HostEntryMemory: the mmap'ed role allocations); the cuda
// backend's is the GPU's (cuda/device_memory.h: device allocations, pinned
// staging, the copy stream). Everything the app does to a tensor goes
// through these few calls, so both backends run the same app code.
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_APP_ENTRY_MEMORY_H
#define BMRT_APP_ENTRY_MEMORY_H

#include "app/tensors.h"
#include "bmrt/program.h"
#include "bmrt/sampling.h"

#include <cstdint>
#include <memory>

namespace bmrt {

class EntryMemory {
public:
  virtual ~EntryMemory() = default;

  /// The role allocations the entry points are called with.
  virtual const Buffers &buffers() const = 0;

  /// Host memory holding the params as the app reads and writes them
  /// (checkpoint load and save, delta switches, LoRA merges): the params
  /// allocation itself on the host, a staging copy on a device.
  virtual void *hostParams() = 0;
  /// hostParams() was written: a device copies it into its params.
  virtual void paramsChanged() = 0;

  /// Fills the inputs of `entry` for `rows` valid rows of `ids`
  /// (writeEntryInputs' rules).
  virtual void writeInputs(const EntryPoint &entry, const int32_t *ids, int64_t rows) = 0;
  /// Runs `entry`; returns once its results are readable (a device waits
  /// for its kernels and reports a bad index they recorded).
  virtual void call(Context &ctx, const EntryPoint &entry, int64_t start, int64_t rows) = 0;
  /// The valid rows of output `t`, in host memory.
  virtual ValidRows readOutput(const TensorRef &t, int64_t rows) = 0;
  /// The next token from the logits output `logits` (bmrt::sampleToken's
  /// contract: `step` is the token's index in its generation).
  virtual int32_t sample(Context &ctx, Sampler &sampler, const TensorRef &logits,
                         uint64_t step) = 0;
  /// Said before a call whose `logits` output sample() will be asked for
  /// with these arguments next, so a device can draw the token as part of
  /// the call (the cuda backend's decode step: one graph launch and one wait
  /// per token). The host has nothing to gain: it ignores it.
  virtual void expectSample(const Sampler &sampler, const TensorRef &logits, uint64_t step) {
    (void)sampler, (void)logits, (void)step;
  }
};

/// The host backend: the program's mmap'ed role allocations (ProgramBuffers).
std::unique_ptr<EntryMemory> makeHostEntryMemory(const ProgramInfo &program);

} // namespace bmrt

#endif // BMRT_APP_ENTRY_MEMORY_H
