//===- app/infer_main.cpp - The host infer executable's main --------------===//
//
// The host backend of the infer app (app/infer_run.h): our OpenMP loops and
// OpenBLAS share one thread count, the program's memory is the process's
// (HostEntryMemory), and --profile reports the peak RSS against the plan.
//
//===----------------------------------------------------------------------===//
#include "app/host_threads.h"
#include "app/infer_run.h"
#include "app/info.h"

#include <cstdio>

namespace bmrt {
namespace {

class HostInferBackend : public InferBackend {
public:
  void open(Context &ctx, const InferFlags &flags) override {
    useHostThreads(ctx, flags.threads);
  }
  void checkSampling(const SamplingConfig &) const override {} // every mode
  std::unique_ptr<EntryMemory> allocate(const ProgramInfo &program) override {
    return makeHostEntryMemory(program);
  }
  void printHelpNote(FILE *) const override {} // printInferHelp says it all
  void printMemoryProfile(FILE *out, const ProgramInfo &p) const override {
    const double mib = 1 << 20;
    std::fprintf(out,
                 "peak RSS: %.1f MiB (planned: params %.1f MiB + state %.1f MiB + activations "
                 "%.1f MiB = %.1f MiB)\n",
                 peakRssKiB() / 1024.0, p.paramBytes / mib, p.stateBytes / mib,
                 p.activationBytes / mib,
                 (p.paramBytes + p.stateBytes + p.activationBytes) / mib);
  }
};

} // namespace

int infer_main(int argc, char **argv, const ProgramInfo &program) {
  HostInferBackend backend;
  return runInfer(argc, argv, program, backend);
}

} // namespace bmrt
