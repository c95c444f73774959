//===- app/flags.cpp - Parsing and documenting the infer command line -----===//
//
// Numbers are parsed strictly (the whole value, in range): "--max-tokens 1O"
// is an error, not 1. Both "--flag value" and "--flag=value" are accepted.
// The help text prints this program's own defaults (checkpoint, sampling),
// since every executable is compiled for one job.
//
//===----------------------------------------------------------------------===//
#include "app/flags.h"

#include "bmrt/context.h"

#include <filesystem>
#include <new>

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

namespace bmrt {

int64_t parseInt(const std::string &flag, const std::string &value, int64_t lo, int64_t hi) {
  errno = 0;
  char *end = nullptr;
  long long v = std::strtoll(value.c_str(), &end, 10);
  if (value.empty() || *end != '\0' || errno == ERANGE)
    throw UsageError(flag + " expects an integer, not '" + value + "'");
  if (v < lo || v > hi)
    throw UsageError(flag + " must be between " + std::to_string(lo) + " and " +
                     std::to_string(hi) + ", not " + value);
  return v;
}

uint64_t parseSeed(const std::string &flag, const std::string &value) {
  errno = 0;
  char *end = nullptr;
  unsigned long long v = std::strtoull(value.c_str(), &end, 10);
  if (value.empty() || value[0] == '-' || *end != '\0' || errno == ERANGE)
    throw UsageError(flag + " expects an integer in [0, 2^64), not '" + value + "'");
  return v;
}

double parseReal(const std::string &flag, const std::string &value) {
  errno = 0;
  char *end = nullptr;
  double v = std::strtod(value.c_str(), &end);
  if (value.empty() || *end != '\0' || errno == ERANGE || !std::isfinite(v))
    throw UsageError(flag + " expects a number, not '" + value + "'");
  return v;
}

// "1,2,3" -> {1, 2, 3}; ids are checked against the vocabulary later, when
// the program is known.
static std::vector<int32_t> parseIds(const std::string &flag, const std::string &value) {
  std::vector<int32_t> ids;
  size_t pos = 0;
  while (true) {
    size_t comma = value.find(',', pos);
    std::string item = value.substr(pos, comma == std::string::npos ? std::string::npos
                                                                    : comma - pos);
    ids.push_back((int32_t)parseInt(flag, item, 0, std::numeric_limits<int32_t>::max()));
    if (comma == std::string::npos)
      break;
    pos = comma + 1;
  }
  return ids;
}

static bool isDeltaName(const std::string &s) {
  if (s.empty())
    return false;
  for (char c : s)
    if (!(std::isalnum((unsigned char)c) || c == '_' || c == '-' || c == '.'))
      return false;
  return true;
}

DeltaFlag parseDeltaFlag(const std::string &flag, const std::string &value) {
  DeltaFlag d;
  size_t eq = value.find('=');
  if (eq != std::string::npos && (eq == 0 || isDeltaName(value.substr(0, eq)))) {
    d.name = value.substr(0, eq);
    d.file = value.substr(eq + 1);
    if (d.name.empty())
      throw UsageError(flag + " '" + value + "': the name before '=' is empty");
  } else {
    d.file = value;
    d.name = std::filesystem::path(value).stem().string();
    if (!isDeltaName(d.name))
      throw UsageError(flag + " '" + value + "': the file's stem '" + d.name +
                       "' is not a delta name (letters, digits, _ - .); write NAME=FILE");
  }
  if (d.file.empty())
    throw UsageError(flag + " '" + value + "' names no file");
  if (d.name == kNoDelta)
    throw UsageError(flag + " '" + value + "': '" + kNoDelta +
                     "' names the backbone alone; give the delta another name (NAME=FILE)");
  return d;
}

std::string defaultDelta(const InferFlags &f) {
  if (f.useDelta)
    return *f.useDelta;
  return f.deltas.empty() ? std::string() : f.deltas[0].name;
}

// Every --delta names a different delta, and --use-delta one of them.
static void checkDeltaFlags(const InferFlags &f) {
  std::string names;
  for (size_t i = 0; i < f.deltas.size(); i++) {
    for (size_t j = 0; j < i; j++)
      if (f.deltas[j].name == f.deltas[i].name)
        throw UsageError("--delta: two deltas named '" + f.deltas[i].name + "' (" +
                         f.deltas[j].file + " and " + f.deltas[i].file +
                         "); name them apart with NAME=FILE");
    names += (i ? ", " : "") + f.deltas[i].name;
  }
  if (!f.useDelta || *f.useDelta == kNoDelta)
    return;
  for (const DeltaFlag &d : f.deltas)
    if (d.name == *f.useDelta)
      return;
  throw UsageError("--use-delta: no delta named '" + *f.useDelta + "' (" +
                   (names.empty() ? std::string("no --delta was given") : "the deltas: " + names) +
                   "; or " + kNoDelta + " for the backbone alone)");
}

bool FlagReader::next() {
  if (++i_ >= argc_)
    return false;
  std::string arg = argv_[i_];
  if (arg.size() < 3 || arg.compare(0, 2, "--") != 0)
    throw UsageError("unexpected argument '" + arg + "' (flags start with --)");
  name_ = arg;
  inlineValue_.reset();
  if (size_t eq = arg.find('='); eq != std::string::npos) {
    name_ = arg.substr(0, eq);
    inlineValue_ = arg.substr(eq + 1);
  }
  return true;
}

std::string FlagReader::value() {
  if (inlineValue_)
    return *inlineValue_;
  if (i_ + 1 >= argc_)
    throw UsageError(name_ + " needs a value");
  return argv_[++i_];
}

void FlagReader::noValue() const {
  if (inlineValue_)
    throw UsageError(name_ + " takes no value");
}

int runExecutable(const char *argv0, const std::function<int()> &body) {
  try {
    return body();
  } catch (const UsageError &e) {
    std::fprintf(stderr, "error: %s\n(%s --help lists the flags)\n", e.what(), argv0);
    return 2;
  } catch (const Error &e) {
    std::fflush(stdout);
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  } catch (const std::filesystem::filesystem_error &e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  } catch (const std::bad_alloc &) {
    std::fprintf(stderr, "error: out of memory\n");
    return 1;
  } catch (const std::exception &e) { // a bug of ours; still a message, not an abort
    std::fprintf(stderr, "error: internal error: %s\n", e.what());
    return 1;
  }
}

InferFlags parseInferFlags(int argc, char **argv) {
  InferFlags f;
  FlagReader flags(argc, argv);
  while (flags.next()) {
    const std::string &name = flags.name();
    auto value = [&] { return flags.value(); };
    auto noValue = [&] { flags.noValue(); };
    if (name == "--help" || name == "-h") {
      noValue();
      f.help = true;
    } else if (name == "--load") {
      f.load = value();
    } else if (name == "--delta" || name == "--load-delta") {
      // --load-delta FILE is the older spelling of one --delta FILE.
      f.deltas.push_back(parseDeltaFlag(name, value()));
    } else if (name == "--use-delta") {
      f.useDelta = value();
    } else if (name == "--init") {
      f.init = parseSeed(name, value());
    } else if (name == "--tokenizer") {
      f.tokenizer = value();
    } else if (name == "--prompt") {
      f.prompt = value();
    } else if (name == "--prompt-ids") {
      f.promptIds = parseIds(name, value());
    } else if (name == "--max-tokens") {
      f.maxTokens = parseInt(name, value(), 0, std::numeric_limits<int32_t>::max());
    } else if (name == "--sampling") {
      std::string v = value();
      SamplingMode mode;
      if (!parseSamplingMode(v, mode))
        throw UsageError("--sampling must be greedy, temperature, top_k or top_p, not '" + v +
                         "'");
      f.sampling = v;
    } else if (name == "--temperature") {
      f.temperature = parseReal(name, value());
      if (!(*f.temperature > 0))
        throw UsageError("--temperature must be > 0");
    } else if (name == "--top-k") {
      f.topK = parseInt(name, value(), 1, std::numeric_limits<int32_t>::max());
    } else if (name == "--top-p") {
      f.topP = parseReal(name, value());
      if (!(*f.topP >= 0 && *f.topP <= 1))
        throw UsageError("--top-p must be in [0, 1]");
    } else if (name == "--seed") {
      f.seed = parseSeed(name, value());
    } else if (name == "--ignore-eos") {
      noValue();
      f.ignoreEos = true;
    } else if (name == "--threads") {
      f.threads = (int)parseInt(name, value(), 1, 4096);
    } else if (name == "--profile") {
      noValue();
      f.profile = true;
    } else if (name == "--output") {
      std::string v = value();
      if (v == "text")
        f.output = OutputFormat::Text;
      else if (v == "ids")
        f.output = OutputFormat::Ids;
      else
        throw UsageError("--output must be text or ids, not '" + v + "'");
    } else if (name == "--dump") {
      f.dumpDir = value();
    } else if (name == "--save") {
      f.save = value();
    } else if (name == "--save-names") {
      f.saveNames = value();
    } else if (name == "--info") {
      noValue();
      f.info = true;
    } else {
      throw UsageError("unknown flag '" + name + "'");
    }
  }
  if (f.init && f.load)
    throw UsageError("--init and --load exclude each other");
  if (f.init && (!f.deltas.empty() || f.useDelta))
    throw UsageError(std::string(f.deltas.empty() ? "--use-delta" : "--delta") +
                     " goes on the backbone a delta was tuned from: --load, not --init");
  checkDeltaFlags(f);
  if (f.prompt && f.promptIds)
    throw UsageError("--prompt and --prompt-ids exclude each other");
  if (f.saveNames && !f.save)
    throw UsageError("--save-names needs --save FILE");
  if (f.save && (f.dumpDir || f.prompt || f.promptIds))
    throw UsageError("--save writes the parameters and exits; it takes no --prompt, "
                     "--prompt-ids or --dump");
  return f;
}

SamplingConfig resolveSampling(const InferFlags &f, const ProgramInfo &program) {
  std::string programMode = program.sampling && *program.sampling ? program.sampling : "greedy";
  SamplingMode jobMode;
  if (!parseSamplingMode(programMode, jobMode))
    fail(std::string("program ") + program.job + " has an unknown sampling '" + programMode +
         "'");
  SamplingConfig c;
  c.seed = f.seed;
  if (f.sampling) {
    parseSamplingMode(*f.sampling, c.mode);
  } else if (f.topK && f.topP) {
    throw UsageError("--top-k and --top-p exclude each other; choose one (or --sampling)");
  } else if (f.topK) {
    c.mode = SamplingMode::TopK;
  } else if (f.topP) {
    c.mode = SamplingMode::TopP;
  } else if (f.temperature && jobMode == SamplingMode::Greedy) {
    c.mode = SamplingMode::Temperature;
  } else {
    c.mode = jobMode;
  }
  const char *modeName = samplingModeName(c.mode);
  if (c.mode == SamplingMode::Greedy && f.temperature)
    throw UsageError("--temperature has no effect with greedy sampling");
  if (c.mode != SamplingMode::TopK && f.topK)
    throw UsageError(std::string("--top-k has no effect with ") + modeName + " sampling");
  if (c.mode != SamplingMode::TopP && f.topP)
    throw UsageError(std::string("--top-p has no effect with ") + modeName + " sampling");
  // The job's k and p count only when the job chose that mode.
  c.temperature = f.temperature ? *f.temperature
                                : (program.temperature > 0 ? program.temperature : 1.0);
  if (c.mode == SamplingMode::TopK) {
    if (f.topK)
      c.topK = *f.topK;
    else if (jobMode == SamplingMode::TopK)
      c.topK = program.topK;
    else
      throw UsageError("top_k sampling needs --top-k N (the job samples with " + programMode +
                       ")");
  }
  if (c.mode == SamplingMode::TopP) {
    if (f.topP)
      c.topP = *f.topP;
    else if (jobMode == SamplingMode::TopP)
      c.topP = program.topP;
    else
      throw UsageError("top_p sampling needs --top-p P (the job samples with " + programMode +
                       ")");
  }
  validateSamplingConfig(c);
  return c;
}

static std::string describeJobSampling(const ProgramInfo &p) {
  std::string mode = p.sampling && *p.sampling ? p.sampling : "greedy";
  char buf[128];
  if (mode == "top_p")
    std::snprintf(buf, sizeof buf, "top_p (p = %g, temperature = %g)", p.topP, p.temperature);
  else if (mode == "top_k")
    std::snprintf(buf, sizeof buf, "top_k (k = %lld, temperature = %g)", (long long)p.topK,
                  p.temperature);
  else if (mode == "temperature")
    std::snprintf(buf, sizeof buf, "temperature (%g)", p.temperature);
  else
    std::snprintf(buf, sizeof buf, "%s", mode.c_str());
  return buf;
}

void printInferHelp(FILE *out, const char *argv0, const ProgramInfo &p) {
  bool lm = p.kind == ModelKind::CausalLM;
  std::fprintf(out, "usage: %s [flags]\n\n", argv0);
  std::fprintf(out, "Runs job '%s' of %s (model %s, %s).\n", p.job, p.source, p.model,
               lm ? "generates text" : "encodes text");
  std::fprintf(out, "Prompts come from --prompt / --prompt-ids, else one per line on stdin: "
                    "a line is the prompt, or a JSON object {\"prompt\": TEXT, \"delta\": "
                    "NAME} when it starts with '{'.\n\n");
  std::fprintf(out, "flags:\n");
  std::fprintf(out,
               "  --load PATH          checkpoint: a .safetensors file or a directory "
               "(default: %s)\n",
               p.from && *p.from ? p.from : "none; the job has no `from`");
  std::fprintf(out, "  --delta [NAME=]FILE  a delta checkpoint (delta.safetensors of a "
                    "delta-tuned run) over that backbone, named NAME (default: the file's "
                    "stem); repeatable: requests choose one by name\n");
  std::fprintf(out, "  --load-delta FILE    the same as --delta FILE\n");
  std::fprintf(out, "  --use-delta NAME     the delta of --prompt, --prompt-ids and plain stdin "
                    "lines (default: the first --delta); 'none': the backbone alone\n");
  std::fprintf(out, "  --init SEED          start from the parameters' declared initializers "
                    "(normal(0.02), zeros, ...), drawn reproducibly from SEED, instead of a "
                    "checkpoint\n");
  std::fprintf(out,
               "  --tokenizer PATH     tokenizer files, or 'byte' (default: the checkpoint "
               "directory%s%s)\n",
               p.tokenizer && *p.tokenizer ? ", kind " : "", p.tokenizer ? p.tokenizer : "");
  std::fprintf(out, "  --prompt TEXT        the prompt (else one prompt per line from stdin)\n");
  std::fprintf(out, "  --prompt-ids IDS     the prompt as token ids, e.g. 1,2,3 (no tokenizer)\n");
  if (lm) {
    std::fprintf(out, "  --max-tokens N       tokens to generate at most (default 128)\n");
    std::fprintf(out,
                 "  --sampling MODE      greedy, temperature, top_k or top_p (default: %s)\n",
                 describeJobSampling(p).c_str());
    std::fprintf(out, "  --temperature X      divide the logits by X > 0 before sampling\n");
    std::fprintf(out, "  --top-k N            keep the N most likely tokens (implies top_k)\n");
    std::fprintf(out,
                 "  --top-p X            keep the most likely tokens up to probability X "
                 "(implies top_p)\n");
    std::fprintf(out, "  --seed N             random seed; a seed reproduces a run (default 0)\n");
    std::fprintf(out, "  --ignore-eos         keep generating after the end-of-text token\n");
    std::fprintf(out,
                 "  --output FORMAT      text, or ids (generated token ids, space-separated)\n");
  }
  std::fprintf(out,
               "  --threads N          CPU threads (default: OMP_NUM_THREADS or all cores)\n");
  std::fprintf(out,
               "  --profile            after the run, print time per kernel kind, "
               "throughput and peak memory to stderr\n");
  std::fprintf(out,
               "  --dump DIR           write each step's outputs as DIR/stepNNNN_<name>.npy "
               "(step 0 = prefill); stdin request N's in DIR/lineNNNN/\n");
  std::fprintf(out,
               "  --save FILE          write the loaded parameters to FILE (.safetensors), "
               "then exit\n");
  std::fprintf(out,
               "  --save-names NAME    with --save: use the checkpoint name map NAME instead "
               "of our names\n");
  std::fprintf(out,
               "  --info               describe the program (params, memory plan, entry "
               "points, name maps), then exit\n");
  std::fprintf(out, "  --help               this text\n");
}

} // namespace bmrt
