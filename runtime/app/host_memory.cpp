//===- app/host_memory.cpp - The host backend of EntryMemory --------------===//
//
// Tensors live in the process's own role allocations (ProgramBuffers), so
// every call is the plain thing: inputs written in place, entries called
// directly, outputs and logits read where they are.
//
//===----------------------------------------------------------------------===//
#include "app/buffers.h"
#include "app/entry_memory.h"

namespace bmrt {
namespace {

class HostEntryMemory : public EntryMemory {
public:
  explicit HostEntryMemory(const ProgramInfo &program) : buffers_(program) {}

  const Buffers &buffers() const override { return buffers_.get(); }
  void *hostParams() override { return buffers_.get().params; }
  void paramsChanged() override {} // the entries read these very params

  void writeInputs(const EntryPoint &entry, const int32_t *ids, int64_t rows) override {
    writeEntryInputs(entry, buffers_.get().activations, ids, rows);
  }
  void call(Context &ctx, const EntryPoint &entry, int64_t start, int64_t rows) override {
    entry.fn(ctx, buffers_.get(), start, rows);
  }
  ValidRows readOutput(const TensorRef &t, int64_t rows) override {
    return gatherValidRows(t, buffers_.get().activations, rows);
  }
  int32_t sample(Context &ctx, Sampler &sampler, const TensorRef &logits,
                 uint64_t step) override {
    const char *base = (const char *)buffers_.get().activations;
    return sampleToken(ctx, sampler, (const float *)(base + logits.offset), step);
  }

private:
  ProgramBuffers buffers_;
};

} // namespace

std::unique_ptr<EntryMemory> makeHostEntryMemory(const ProgramInfo &program) {
  return std::make_unique<HostEntryMemory>(program);
}

} // namespace bmrt
