//===- app/train_flags.h - The train executable's command line ------------===//
//
// As for infer (flags.h): parsing is separate from running so the rules are
// testable without a model; a bad command line is a UsageError (exit 2).
// Values left unset take the job's defaults (train_main resolves them).
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_APP_TRAIN_FLAGS_H
#define BMRT_APP_TRAIN_FLAGS_H

#include "app/flags.h"

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

namespace bmrt {

enum class EvalSplit : int { HeldOut, All };

struct TrainFlags {
  std::optional<std::string> data;      // --data (else the job's data)
  std::optional<std::string> tokenizer; // --tokenizer DIR|byte (text data)
  std::optional<int64_t> steps;         // --steps: the run ends at this step
  std::optional<double> lr;             // --lr: base learning rate
  std::optional<uint64_t> seed;         // --seed (default 0; a resume keeps its own)
  std::optional<std::string> load;      // --load DIR|FILE: params only
  std::optional<std::string> loadDelta; // --load-delta FILE: a delta checkpoint over --load
  std::optional<std::string> save;      // --save DIR
  int64_t saveEvery = 0;                // 0: only at the end and on a signal
  int64_t keep = 3;                     // complete checkpoints kept in --save DIR
  bool resume = false;
  int64_t evalEvery = 0;                // 0: no periodic evaluation
  int64_t evalBatches = 8;              // batches per periodic evaluation
  std::optional<double> valFraction;    // held-out share of the data (default 0.05)
  std::optional<std::string> log;       // --log FILE (JSONL)
  std::optional<std::string> order;     // random | sequential (default random)
  int threads = 0;                      // 0: OMP_NUM_THREADS or all cores
  std::optional<int64_t> accum;         // micro-batches per step
  bool evalOnly = false;
  EvalSplit evalSplit = EvalSplit::HeldOut;
  bool evalSplitSet = false;
  std::optional<std::string> dumpGrads; // --dump-grads FILE
  std::optional<std::string> dumpBatch; // --dump-batch DIR
  int64_t printEvery = 10;              // plain progress lines (not a terminal)
  // Which of the three above the command line set (else the job's defaults).
  bool saveEverySet = false, evalEverySet = false, printEverySet = false;
  bool profile = false;
  // Several ranks (mpirun -np N; docs/distributed.md):
  bool deterministic = false;           // rank-order reductions; bitwise = one process
  bool noOverlap = false;               // --no-overlap: gradient collectives at the optimizer step
  double commTimeout = 300;             // seconds a collective may take
  std::optional<std::string> rankLogs;  // --rank-logs DIR: DIR/rank-R.log per rank
  bool info = false;
  bool help = false;
  double lossScale = 0;                 // --loss-scale S (fp16): initial scale, 0 = the job's
};

/// Parses argv[1..argc); throws UsageError naming the flag and the problem.
TrainFlags parseTrainFlags(int argc, char **argv);

/// Fills --save-every, --eval-every and --print-every that the command line
/// left unset from the job's save_every, eval_every and log_every, where they
/// apply (saving needs --save, evaluation held-out data, so a job default
/// never turns into an error).
void applyJobDefaults(TrainFlags &flags, const TrainInfo &train);

/// --help: every flag, with this program's defaults (batch and sequence
/// length are fixed at compile time and printed as such).
void printTrainHelp(FILE *out, const char *argv0, const ProgramInfo &program);

} // namespace bmrt

#endif // BMRT_APP_TRAIN_FLAGS_H
