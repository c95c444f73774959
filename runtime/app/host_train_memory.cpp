//===- app/host_train_memory.cpp - The host backend of TrainMemory --------===//
//
// The roles are the process's allocations (ProgramBuffers): the app and the
// entries share them, so moving between the two is nothing, and an entry has
// finished when it returns.
//
//===----------------------------------------------------------------------===//
#include "app/buffers.h"
#include "app/train_memory.h"

#include <cstring>

namespace bmrt {
namespace {

class HostTrainMemory : public TrainMemory {
public:
  HostTrainMemory(const ProgramInfo &program, int rank, int ranks)
      : buffers_(program, rank, ranks) {}

  const Buffers &buffers() const override { return buffers_.get(); }
  const Buffers &host() const override { return buffers_.get(); }
  int64_t bytes(int role) const override { return buffers_.bytes(role); }
  void pull(unsigned) override {}
  void push(unsigned) override {}

  void writeInput(const TensorRef &t, const int32_t *values, int64_t n) override {
    std::memcpy((char *)buffers_.get().activations + t.offset, values,
                (size_t)n * sizeof(int32_t));
  }
  double sumLosses(const TensorRef &losses, int64_t rows) override {
    return sumLossRows((const char *)buffers_.get().activations + losses.offset, losses.dtype,
                       rows);
  }
  void finishStep() override {}

private:
  ProgramBuffers buffers_;
};

} // namespace

std::unique_ptr<TrainMemory> makeHostTrainMemory(const ProgramInfo &program, int rank,
                                                 int ranks) {
  return std::make_unique<HostTrainMemory>(program, rank, ranks);
}

} // namespace bmrt
