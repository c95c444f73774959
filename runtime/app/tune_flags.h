//===- app/tune_flags.h - The tune executable's command line --------------===//
//
// Like the train executable's (train_flags.h), with the tune app's own
// choices: held-out examples from --val FILE or a share of --data, the
// backbone from --load (default: the job's `from`), and the tokenizer from
// the backbone's directory unless --tokenizer says otherwise. A bad command
// line is a UsageError (exit 2).
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_APP_TUNE_FLAGS_H
#define BMRT_APP_TUNE_FLAGS_H

#include "app/flags.h"
#include "bmrt/program.h"

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

namespace bmrt {

struct TuneFlags {
  std::optional<std::string> data;      // --data FILE (else the job's data)
  std::optional<std::string> val;       // --val FILE: held-out examples
  std::optional<double> valFraction;    // --val-fraction (default 0.1; 0 with --val)
  std::optional<int64_t> steps;         // --steps (else the job's, else 100)
  std::optional<double> lr;             // --lr (else the job's optimizer lr)
  std::optional<uint64_t> seed;         // --seed: split, order, fresh deltas (default 0;
                                        // a resumed run keeps its own)
  std::optional<std::string> load;      // --load PATH: the backbone (else the job's `from`)
  std::optional<std::string> loadDelta; // --load-delta FILE: trained deltas over it
  std::optional<std::string> save;      // --save DIR
  int64_t saveEvery = 0;                // 0: the job's save_every (with --save)
  bool resume = false;
  int64_t evalEvery = 0;                // 0: the job's eval_every (with held-out examples)
  bool evalOnly = false;
  std::optional<std::string> log;       // --log FILE (JSONL)
  std::optional<std::string> tokenizer; // --tokenizer DIR|byte
  std::optional<std::string> dumpGrads; // --dump-grads FILE: step 1's gradients
  std::optional<int64_t> printEvery;    // else the job's log_every, else 10
  int threads = 0;
  bool info = false;
  bool help = false;
};

/// Parses argv[1..argc); throws UsageError naming the flag and the problem.
TuneFlags parseTuneFlags(int argc, char **argv);

void printTuneHelp(FILE *out, const char *argv0, const ProgramInfo &program);

} // namespace bmrt

#endif // BMRT_APP_TUNE_FLAGS_H
