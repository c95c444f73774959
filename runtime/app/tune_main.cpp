//===- app/tune_main.cpp - The host's tune executable ---------------------===//
//
// The host backend of the tune app (app/tune_run.h): OpenMP and OpenBLAS
// threads (--threads, else every core), libbmrt's communicator, and the
// process's own role allocations, which the entries and the app share (so
// writing an input or reading an output is a copy within the process).
//
//===----------------------------------------------------------------------===//
#include "app/host_threads.h"
#include "app/tune_run.h"

#include <cstring>

namespace bmrt {

namespace {

class HostTuneMemory : public TuneMemory {
public:
  explicit HostTuneMemory(const ProgramInfo &program) : roles_(makeHostTrainMemory(program, 0, 1)) {}
  TrainMemory &roles() override { return *roles_; }
  void writeInput(const TensorRef &t, const void *data, size_t bytes) override {
    std::memcpy((char *)roles_->buffers().activations + t.offset, data, bytes);
  }
  void readOutput(const TensorRef &t, void *data, size_t bytes) override {
    std::memcpy(data, (const char *)roles_->buffers().activations + t.offset, bytes);
  }

private:
  std::unique_ptr<TrainMemory> roles_;
};

class HostTuneBackend : public TuneBackend {
public:
  int open(Context &ctx, const TuneFlags &flags) override {
    return useHostThreads(ctx, flags.threads);
  }
  std::unique_ptr<Comm> openComm(const CommOptions &options) override {
    return bmrt::openComm(options);
  }
  std::unique_ptr<TuneMemory> allocate(const ProgramInfo &program) override {
    return makeHostTuneMemory(program);
  }
  void printHelpNote(FILE *) const override {}
};

} // namespace

std::unique_ptr<TuneMemory> makeHostTuneMemory(const ProgramInfo &program) {
  return std::make_unique<HostTuneMemory>(program);
}

int tune_main(int argc, char **argv, const ProgramInfo &program) {
  HostTuneBackend backend;
  return runTune(argc, argv, program, backend);
}

} // namespace bmrt
