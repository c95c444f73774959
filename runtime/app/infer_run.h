//===- app/infer_run.h - The infer executable, on any backend -------------===//
//
// Everything an infer executable does around the compiled entry points
// (flags, checkpoint, deltas, tokenizer, prompts, generation, output,
// --profile) is one piece of code for every backend; a backend says only how
// to get ready (threads, or a GPU) and where the program's memory lives
// (EntryMemory). The host's infer_main (app/infer_main.cpp) and the cuda
// backend's (cuda/infer_main.cpp) are runInfer with their backend.
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_APP_INFER_RUN_H
#define BMRT_APP_INFER_RUN_H

#include "app/entry_memory.h"
#include "app/flags.h"
#include "bmrt/program.h"

#include <cstdio>
#include <memory>

namespace bmrt {

class InferBackend {
public:
  virtual ~InferBackend() = default;
  /// Makes `ctx` ready to run, once the flags are checked and before any
  /// file is read (host: the thread count; cuda: opens the GPU).
  virtual void open(Context &ctx, const InferFlags &flags) = 0;
  /// Fails if this backend cannot sample with `config` (before any work).
  virtual void checkSampling(const SamplingConfig &config) const = 0;
  /// The program's role allocations.
  virtual std::unique_ptr<EntryMemory> allocate(const ProgramInfo &program) = 0;
  /// --profile: the memory the run used (after the time per kernel kind).
  virtual void printMemoryProfile(FILE *out, const ProgramInfo &program) const = 0;
  /// --help: what is particular to this backend, after the flags.
  virtual void printHelpNote(FILE *out) const = 0;
};

/// An infer executable's main on `backend`. Exit codes: 0 success, 1 a
/// run-time error (bmrt::Error), 2 a bad command line (UsageError).
int runInfer(int argc, char **argv, const ProgramInfo &program, InferBackend &backend);

} // namespace bmrt

#endif // BMRT_APP_INFER_RUN_H
