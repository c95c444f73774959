//===- app/flags.h - The infer executable's command line ------------------===//
//
// Parsing is separate from running so the rules (every flag, its value, what
// excludes what) are testable without a model. A bad command line is a
// UsageError: infer_main prints it with a hint to --help and exits 2, apart
// from run-time errors (bmrt::Error, exit 1).
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_APP_FLAGS_H
#define BMRT_APP_FLAGS_H

#include "bmrt/program.h"
#include "bmrt/sampling.h"

#include <cstdint>
#include <cstdio>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace bmrt {

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

enum class OutputFormat : int { Text, Ids };

/// One --delta [NAME=]FILE (or --load-delta FILE): a delta checkpoint over
/// the loaded backbone, which requests select by NAME.
struct DeltaFlag {
  std::string name; // NAME, else the file's stem ("sst2" for runs/sst2.safetensors)
  std::string file;
};

/// The name a request or --use-delta gives the backbone alone (the delta
/// params at their declared initializers, an identity); no --delta may use it.
constexpr const char *kNoDelta = "none";

struct InferFlags {
  std::optional<std::string> load;            // --load (else the job's `from`)
  std::vector<DeltaFlag> deltas;              // --delta [NAME=]FILE / --load-delta FILE, in order
  std::optional<std::string> useDelta;        // --use-delta NAME|none (else the first --delta)
  std::optional<uint64_t> init;               // --init SEED: declared initializers
  std::optional<std::string> tokenizer;       // --tokenizer (else the checkpoint dir)
  std::optional<std::string> prompt;          // --prompt (else stdin, one per line)
  std::optional<std::vector<int32_t>> promptIds; // --prompt-ids 1,2,3
  std::optional<int64_t> maxTokens;          // --max-tokens (default 128)
  std::optional<std::string> sampling;        // --sampling
  std::optional<double> temperature;
  std::optional<int64_t> topK;
  std::optional<double> topP;
  uint64_t seed = 0;
  bool ignoreEos = false;
  int threads = 0;                            // 0: OMP_NUM_THREADS or all cores
  bool profile = false;
  OutputFormat output = OutputFormat::Text;
  std::optional<std::string> dumpDir;
  std::optional<std::string> save;
  std::optional<std::string> saveNames;
  bool info = false;
  bool help = false;
};

/// Walks a command line of `--name value`, `--name=value` and `--name`
/// flags, shared by the executables' parsers: each parser asks for a flag's
/// value (or checks it has none) once it knows the flag.
class FlagReader {
public:
  FlagReader(int argc, char **argv) : argc_(argc), argv_(argv) {}
  /// Moves to the next flag; false after the last. A word that is not a flag
  /// is a UsageError.
  bool next();
  const std::string &name() const { return name_; }
  /// The value: after '=', else the next word (a UsageError if none).
  std::string value();
  /// A UsageError if the flag was written with '='.
  void noValue() const;

private:
  int argc_;
  char **argv_;
  int i_ = 0;
  std::string name_;
  std::optional<std::string> inlineValue_;
};

/// An executable's main around `body`: a UsageError prints a hint to --help
/// and returns 2; a run-time error (bmrt::Error, a file system error, out of
/// memory, anything else thrown) prints one line and returns 1.
int runExecutable(const char *argv0, const std::function<int()> &body);

/// Strict value parsers shared by the executables' command lines (the whole
/// value, in range, else a UsageError naming the flag).
int64_t parseInt(const std::string &flag, const std::string &value, int64_t lo, int64_t hi);
uint64_t parseSeed(const std::string &flag, const std::string &value);
double parseReal(const std::string &flag, const std::string &value);

/// Parses argv[1..argc); throws UsageError naming the flag and the problem.
InferFlags parseInferFlags(int argc, char **argv);

/// --delta's value: "NAME=FILE" when the part before the first '=' is a
/// name (letters, digits, '_', '-', '.'), else FILE named by its stem.
/// A UsageError for an empty or reserved name.
DeltaFlag parseDeltaFlag(const std::string &flag, const std::string &value);

/// The delta a request without its own choice uses: --use-delta, else the
/// first --delta; "" when neither was given (the checkpoint as loaded).
std::string defaultDelta(const InferFlags &flags);

/// The sampling the run uses: the program's defaults, overridden by flags.
/// A flag the chosen mode does not use (e.g. --top-k with greedy) is a
/// UsageError rather than silently ignored.
SamplingConfig resolveSampling(const InferFlags &flags, const ProgramInfo &program);

/// --help: every flag, with this program's defaults.
void printInferHelp(FILE *out, const char *argv0, const ProgramInfo &program);

} // namespace bmrt

#endif // BMRT_APP_FLAGS_H
