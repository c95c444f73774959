//===- app/tune_run.h - The tune executable, on any backend ---------------===//
//
// The tune run (flags, backbone, prompts, data, steps, calibration,
// evaluation, delta-only checkpoints) is one piece of code for every
// backend; a backend says how to get ready (threads, or a GPU), which
// communicator counts the processes (one is all a tune run takes), and where
// the roles live (TuneMemory). The host's tune_main (app/tune_main.cpp) and
// the cuda backend's (cuda/tune_main.cpp) are runTune with their backend.
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_APP_TUNE_RUN_H
#define BMRT_APP_TUNE_RUN_H

#include "app/tune_flags.h"
#include "app/tune_memory.h"
#include "bmrt/comm.h"
#include "bmrt/program.h"

#include <cstdio>
#include <memory>

namespace bmrt {

class TuneBackend {
public:
  virtual ~TuneBackend() = default;
  /// Makes `ctx` ready to run once the flags are checked, before any file
  /// is read; returns the CPU threads the banner reports.
  virtual int open(Context &ctx, const TuneFlags &flags) = 0;
  /// The communicator of the run's processes (more than one is refused).
  virtual std::unique_ptr<Comm> openComm(const CommOptions &options) = 0;
  /// The roles of `program` (one process).
  virtual std::unique_ptr<TuneMemory> allocate(const ProgramInfo &program) = 0;
  /// --help: what is particular to this backend, after the flags (nothing
  /// on the host).
  virtual void printHelpNote(FILE *out) const = 0;
};

/// A tune executable's main on `backend`. Exit codes: 0 done, 1 a run-time
/// error, 2 a bad command line.
int runTune(int argc, char **argv, const ProgramInfo &program, TuneBackend &backend);

} // namespace bmrt

#endif // BMRT_APP_TUNE_RUN_H
