//===- app/train_main.cpp - The host train executable's main --------------===//
//
// The host backend of the train app (app/train_run.h): our OpenMP loops and
// OpenBLAS share one thread count, the ranks talk over bmrt::openComm
// (mpirun's MPI, torchrun's TCP, or one process), and the roles are the
// process's allocations (HostTrainMemory).
//
//===----------------------------------------------------------------------===//
#include "app/host_threads.h"
#include "app/train_run.h"

namespace bmrt {
namespace {

class HostTrainBackend : public TrainBackend {
public:
  int open(Context &ctx, const TrainFlags &flags) override {
    return useHostThreads(ctx, flags.threads);
  }
  std::unique_ptr<Comm> openComm(const CommOptions &options) override {
    return bmrt::openComm(options);
  }
  std::unique_ptr<TrainMemory> allocate(const ProgramInfo &program, int rank,
                                        int ranks) override {
    return makeHostTrainMemory(program, rank, ranks);
  }
  void printHelpNote(FILE *) const override {} // printTrainHelp says it all
};

} // namespace

int train_main(int argc, char **argv, const ProgramInfo &program) {
  HostTrainBackend backend;
  return runTrain(argc, argv, program, backend);
}

} // namespace bmrt
