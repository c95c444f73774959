//===- app/train_run.h - The train executable, on any backend -------------===//
//
// The train loop (flags, ranks, parameters, data, steps, evaluation,
// checkpoints, resume, signals) is one piece of code for every backend; a
// backend says how to get ready (threads, or a GPU), which communicator the
// ranks use, and where the roles live (TrainMemory). The host's train_main
// (app/train_main.cpp) and the cuda backend's (cuda/train_main.cpp) are
// runTrain with their backend.
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_APP_TRAIN_RUN_H
#define BMRT_APP_TRAIN_RUN_H

#include "app/train_flags.h"
#include "app/train_memory.h"
#include "bmrt/comm.h"
#include "bmrt/program.h"

#include <cstdio>
#include <memory>

namespace bmrt {

class TrainBackend {
public:
  virtual ~TrainBackend() = default;
  /// Makes `ctx` ready to run once the flags are checked, before any file
  /// is read; returns the CPU threads the banner reports.
  virtual int open(Context &ctx, const TrainFlags &flags) = 0;
  /// The communicator of this run's ranks.
  virtual std::unique_ptr<Comm> openComm(const CommOptions &options) = 0;
  /// The roles of rank `rank` of `ranks`.
  virtual std::unique_ptr<TrainMemory> allocate(const ProgramInfo &program, int rank,
                                                int ranks) = 0;
  /// --help: what is particular to this backend, after the flags.
  virtual void printHelpNote(FILE *out) const = 0;
};

/// A train executable's main on `backend`. Exit codes: 0 done, 1 a
/// run-time error, 2 a bad command line, 128 + signal when stopped.
int runTrain(int argc, char **argv, const ProgramInfo &program, TrainBackend &backend);

} // namespace bmrt

#endif // BMRT_APP_TRAIN_RUN_H
