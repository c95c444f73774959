//===- app/train_progress.h - What a training run tells its user ----------===//
//
// stderr: a start-up banner (memory plan, shapes, threads, data), then on a
// terminal one line redrawn in place (step/total, loss, tokens/s, ETA, a
// bar), otherwise a plain line every --print-every steps (logs stay
// readable). --log FILE: one JSON object per line, for tools.
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_APP_TRAIN_PROGRESS_H
#define BMRT_APP_TRAIN_PROGRESS_H

#include "bmrt/program.h"

#include <cstdint>
#include <array>
#include <cstdio>
#include <string>

namespace bmrt {

struct BannerInfo {
  int threads = 1;
  int64_t accum = 1;
  std::string data;                 // description of the data
  uint64_t trainTokens = 0, evalTokens = 0;
  int64_t startStep = 0, totalSteps = 0;
  double lr = 0;
  std::string start;                // "fresh parameters (seed 0)", "resumed from ..."
  // The ranks (docs/distributed.md) and what this rank allocated.
  int rank = 0, ranks = 1;
  std::string comm = "single";
  bool deterministic = false;
  bool overlapGrads = false;        // gradient all-reduces go out during the backward
  bool reduceScatterAhead = false;  // zero = 2 and 3: each layer's reduce-scatter in flight
                                    // through the next layer's backward
  Partition part;
  std::array<int64_t, 3> bufferBytes = {0, 0, 0}; // params, grads, optimizer state
  double lossScale = 0;             // fp16: the loss scale the run starts with
  int64_t lowParamBytes = 0;        // bf16/fp16: the GEMMs' weight copy
  int64_t stagingBytes = 0;         // zero = 2 and 3: the gradient staging
  int64_t paramStagingBytes = 0;    // zero = 3: the param staging
  bool offloadOnDevice = false;     // offload = optimizer: a GPU's memory is what it saves
};

void printTrainBanner(FILE *out, const ProgramInfo &program, const BannerInfo &info);

/// Seconds on the steady clock: elapsed times and tokens/s.
double now();
/// One number through a printf format, for progress messages.
std::string fmt(const char *format, double v);

/// The schedule's floor as a share of this run's base learning rate
/// (lr_multiplier's minRate); a --lr below the job's min_lr is a usage error.
double minLrRate(const TrainInfo &train, double baseLr);

/// One step's numbers, for the progress line and the log.
struct StepMetrics {
  int64_t step = 0;
  double loss = 0, lr = 0, gradNorm = 0;
  double tokensPerSecond = 0;
  double elapsed = 0;       // seconds since the run started
  double lossScale = 0;     // fp16: the loss scale after the step (0: not fp16)
  bool skipped = false;     // fp16: the update was skipped (overflow)
};

class Progress {
public:
  Progress(FILE *out, int64_t startStep, int64_t totalSteps, int64_t printEvery);
  void step(const StepMetrics &m);
  /// A line of its own (evaluation, save), not overwritten by the next update.
  void message(const std::string &line);
  /// Ends the in-place line, if any.
  void finish();

private:
  FILE *out_;
  bool tty_;
  int64_t start_, total_, every_;
  bool lineOpen_ = false;
};

/// --log: JSON lines; appended to when the run resumes.
class MetricsLog {
public:
  MetricsLog() = default;
  MetricsLog(const std::string &file, bool append);
  ~MetricsLog();
  MetricsLog(const MetricsLog &) = delete;
  MetricsLog &operator=(const MetricsLog &) = delete;
  void step(const StepMetrics &m);
  void eval(int64_t step, double valLoss, double elapsed);
  /// Another program's record (the tune app's evaluation): one JSON object,
  /// written as its own line.
  void record(const std::string &jsonObject);

private:
  FILE *f_ = nullptr;
};

} // namespace bmrt

#endif // BMRT_APP_TRAIN_PROGRESS_H
