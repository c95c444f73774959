//===- app/infer_run.cpp - The infer executable, on any backend -----------===//
//
// An emitted infer program is `return bmrt::infer_main(argc, argv, kProgram)`,
// which is runInfer with the backend it was built for (infer_run.h);
// everything around the compiled entry points happens here, in this order:
// flags -> (--info) -> the backend (threads or a GPU) -> memory + checkpoint -> (--save) ->
// (deltas) -> tokenizer -> one generation (or encoding) per prompt ->
// (--profile). Exit codes: 0 success, 1 a run-time error (bmrt::Error: bad
// checkpoint, prompt too long, ...), 2 a bad command line. Every error is one
// line "error: ..." on stderr; stdout carries only the generated text. A
// failed stdin request does not stop the others: its error names the line,
// and the run exits 1 at the end.
//
//===----------------------------------------------------------------------===//
#include "app/infer_run.h"
#include "app/delta_set.h"
#include "app/flags.h"
#include "app/info.h"
#include "app/program_check.h"
#include "app/request.h"
#include "app/run.h"
#include "app/token_stream.h"
#include "bmrt/checkpoint.h"
#include "bmrt/program.h"
#include "bmrt/tokenizer.h"

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>

namespace bmrt {

namespace {

// The whole run, once flags are parsed; throws UsageError / Error.
class InferRun {
public:
  InferRun(const InferFlags &flags, const ProgramInfo &program, InferBackend &backend)
      : flags_(flags), program_(program), backend_(backend),
        lm_(program.kind == ModelKind::CausalLM) {}
  int run();

private:
  void checkFlagsApply();
  std::string checkpointPath() const;
  bool needsTokenizer() const;
  std::unique_ptr<Tokenizer> makeTokenizer(const std::string &checkpoint) const;
  void loadParams(const std::string &checkpoint, void *params);
  void useDelta(const std::optional<std::string> &requested);
  void runPrompt(const std::vector<int32_t> &ids, Sampler *sampler, const Tokenizer *tokenizer,
                 const std::string &dump);
  void serveStdin(Sampler *sampler, const Tokenizer *tokenizer);
  void printRunProfile() const;

  const InferFlags &flags_;
  const ProgramInfo &program_;
  InferBackend &backend_;
  const bool lm_;
  Context ctx_;
  std::unique_ptr<EntryMemory> mem_;
  RunStats stats_;
  std::unique_ptr<DeltaSet> deltas_; // with --delta or --use-delta only
};

// Flags that only mean something for text generation are refused for an
// encoder instead of being ignored.
void InferRun::checkFlagsApply() {
  if (lm_)
    return;
  const char *lmOnly = flags_.maxTokens   ? "--max-tokens"
                       : flags_.sampling  ? "--sampling"
                       : flags_.temperature ? "--temperature"
                       : flags_.topK      ? "--top-k"
                       : flags_.topP      ? "--top-p"
                       : flags_.ignoreEos ? "--ignore-eos"
                       : flags_.output == OutputFormat::Ids ? "--output ids"
                                                            : nullptr;
  if (lmOnly)
    throw UsageError(std::string(lmOnly) + " applies to text generation; " + program_.model +
                     " is an encoder");
}

std::string InferRun::checkpointPath() const {
  if (flags_.load)
    return *flags_.load;
  if (program_.from && *program_.from)
    return program_.from;
  fail(std::string("no checkpoint: job ") + program_.job + " has no `from`; pass --load PATH");
}

// A tokenizer is needed to read text prompts, to print text, and to know the
// end-of-text token; --prompt-ids --output ids --ignore-eos runs without one.
bool InferRun::needsTokenizer() const {
  if (flags_.tokenizer || !flags_.promptIds)
    return true;
  return lm_ && (flags_.output == OutputFormat::Text || !flags_.ignoreEos);
}

std::unique_ptr<Tokenizer> InferRun::makeTokenizer(const std::string &checkpoint) const {
  std::string hint = program_.tokenizer ? program_.tokenizer : "";
  // Byte-level models trained here have 256 byte ids, plus EOS as id 256
  // when the vocabulary has room for it.
  if (flags_.tokenizer ? *flags_.tokenizer == "byte" : hint == "byte")
    return makeByteTokenizer(program_.vocab > 256);
  if (!flags_.tokenizer && checkpoint.empty())
    fail("no checkpoint directory to find the tokenizer in (--init): pass --tokenizer PATH "
         "(or byte), or use --prompt-ids with --output ids");
  std::string path = flags_.tokenizer ? *flags_.tokenizer : checkpoint;
  if (!flags_.tokenizer && !std::filesystem::is_directory(path)) {
    path = std::filesystem::path(path).parent_path().string();
    if (path.empty())
      path = ".";
  }
  return loadTokenizer(path, hint);
}

// The backbone, then (with --delta / --use-delta) every delta held apart
// from it; without, a checkpoint lacking the job's delta tensors is refused.
void InferRun::loadParams(const std::string &checkpoint, void *params) {
  if (flags_.init) {
    initParams(program_, params, *flags_.init);
    return;
  }
  LoadReport r = loadCheckpoint(checkpoint, program_, params);
  if (!flags_.deltas.empty() || flags_.useDelta) {
    deltas_ = std::make_unique<DeltaSet>(program_, params, flags_.deltas);
    return;
  }
  if (!r.freshDeltas.empty())
    fail(checkpoint + ": no delta tensor '" + r.freshDeltas[0] + "' (" +
         std::to_string(r.freshDeltas.size()) +
         " missing): the job's delta needs the checkpoint its train job saved, or --delta "
         "FILE (or --use-delta none for the backbone alone)");
}

// A request's delta, else the run's default; switches only on a change.
void InferRun::useDelta(const std::optional<std::string> &requested) {
  if (!deltas_) {
    if (requested)
      fail("the request names delta '" + *requested +
           "', but this run has no deltas: start it with --delta NAME=FILE (or --use-delta "
           "none)");
    return;
  }
  if (deltas_->apply(requested ? *requested : defaultDelta(flags_)))
    mem_->paramsChanged();
}

// `dump`: the directory of this prompt's --dump files, "" for none.
void InferRun::runPrompt(const std::vector<int32_t> &ids, Sampler *sampler,
                         const Tokenizer *tokenizer, const std::string &dump) {
  if (!dump.empty()) {
    checkPrompt(program_, ids); // no directory for a prompt refused
    std::filesystem::create_directories(dump);
  }
  if (!lm_) {
    encodePrompt(ctx_, program_, *mem_, ids, dump, stdout, stats_);
    return;
  }
  GenerateOptions options;
  options.maxTokens = flags_.maxTokens ? *flags_.maxTokens : 128;
  if (tokenizer && !flags_.ignoreEos)
    options.eos = tokenizer->eosId();
  options.dumpDir = dump;
  TokenStream stream(stdout, flags_.output, tokenizer);
  generateTokens(ctx_, program_, *mem_, *sampler, ids, options, stream, stats_);
}

// One request per line; a failed one is reported (naming its line) and
// the next is served; the run fails at the end if any did. --dump DIR
// writes request N's files to DIR/lineNNNN/.
void InferRun::serveStdin(Sampler *sampler, const Tokenizer *tokenizer) {
  std::string line;
  int64_t number = 0, failed = 0, firstFailed = 0;
  while (std::getline(std::cin, line)) {
    number++;
    if (!line.empty() && line.back() == '\r')
      line.pop_back();
    try {
      Request request = parseRequest(line);
      useDelta(request.delta);
      std::string dump;
      if (flags_.dumpDir) {
        char sub[32];
        std::snprintf(sub, sizeof sub, "/line%04lld", (long long)number);
        dump = *flags_.dumpDir + sub;
      }
      runPrompt(tokenizer->encode(request.prompt, true), sampler, tokenizer, dump);
    } catch (const Error &e) {
      std::fflush(stdout);
      std::fprintf(stderr, "error: stdin line %lld: %s\n", (long long)number, e.what());
      if (failed++ == 0)
        firstFailed = number;
    }
  }
  if (failed)
    fail(std::to_string(failed) + " of " + std::to_string(number) +
         " requests failed (the first: stdin line " + std::to_string(firstFailed) + ")");
}

void InferRun::printRunProfile() const {
  printProfile(ctx_);
  auto rate = [](int64_t n, double s) { return s > 0 ? (double)n / s : 0.0; };
  std::fprintf(stderr, "prefill: %lld tokens in %.6f s (%.1f tokens/s)\n",
               (long long)stats_.prefillTokens, stats_.prefillSeconds,
               rate(stats_.prefillTokens, stats_.prefillSeconds));
  if (lm_)
    std::fprintf(stderr, "decode: %lld tokens in %.6f s (%.1f tokens/s)\n",
                 (long long)stats_.decodeTokens, stats_.decodeSeconds,
                 rate(stats_.decodeTokens, stats_.decodeSeconds));
  backend_.printMemoryProfile(stderr, program_);
  const double mib = 1 << 20;
  if (deltas_)
    std::fprintf(stderr, "deltas: %zu held, %.3f MiB, + %.3f MiB pristine copies for switching\n",
                 deltas_->size(), deltas_->deltaBytes() / mib, deltas_->pristineBytes() / mib);
}

int InferRun::run() {
  checkProgram(program_);
  if (flags_.info) {
    printProgramInfo(stdout, program_);
    return 0;
  }
  checkFlagsApply();
  if (flags_.saveNames) {
    bool known = false;
    std::string names;
    for (int i = 0; i < program_.numNameMaps; i++) {
      known |= *flags_.saveNames == program_.nameMaps[i].name;
      names += std::string(i ? ", " : "") + program_.nameMaps[i].name;
    }
    if (!known)
      throw UsageError("--save-names: " + std::string(program_.model) + " has no name map '" +
                       *flags_.saveNames + "' (it has: " + (names.empty() ? "none" : names) +
                       ")");
  }
  SamplingConfig sampling;
  if (lm_)
    sampling = resolveSampling(flags_, program_);
  ctx_.profile = flags_.profile;
  backend_.open(ctx_, flags_);
  if (lm_)
    backend_.checkSampling(sampling);

  std::string checkpoint = flags_.init ? std::string() : checkpointPath();
  mem_ = backend_.allocate(program_);
  void *params = mem_->hostParams();
  loadParams(checkpoint, params);
  if (flags_.save) {
    // A saved checkpoint keeps the backbone and the delta apart (unmerged).
    if (deltas_)
      deltas_->apply(defaultDelta(flags_), /*merge=*/false);
    saveCheckpoint(*flags_.save, program_, params,
                   flags_.saveNames ? flags_.saveNames->c_str() : nullptr);
    std::fprintf(stderr, "saved %d parameters of %s to %s (%s names)\n", program_.numParams,
                 program_.model, flags_.save->c_str(),
                 flags_.saveNames ? flags_.saveNames->c_str() : "our");
    return 0;
  }
  // LoRA into the weights (infer jobs with a delta); with --delta, the
  // default delta applied (and merged) before any request.
  if (deltas_)
    useDelta(std::nullopt);
  else
    mergeDeltas(program_, params);
  mem_->paramsChanged(); // the params the requests start from (a device copies them in)

  std::unique_ptr<Tokenizer> tokenizer;
  if (needsTokenizer())
    tokenizer = makeTokenizer(checkpoint);
  Sampler sampler;
  if (lm_)
    sampler = makeSampler(sampling, program_.vocab);

  std::string dump = flags_.dumpDir ? *flags_.dumpDir : "";
  if (flags_.promptIds) {
    runPrompt(*flags_.promptIds, &sampler, tokenizer.get(), dump);
  } else if (flags_.prompt) {
    runPrompt(tokenizer->encode(*flags_.prompt, true), &sampler, tokenizer.get(), dump);
  } else {
    try {
      serveStdin(&sampler, tokenizer.get());
    } catch (const Error &) {
      if (flags_.profile)
        printRunProfile();
      throw;
    }
  }
  if (flags_.profile)
    printRunProfile();
  return 0;
}

} // namespace

int runInfer(int argc, char **argv, const ProgramInfo &program, InferBackend &backend) {
  const char *argv0 = argc > 0 ? argv[0] : program.job;
  return runExecutable(argv0, [&] {
    InferFlags flags = parseInferFlags(argc, argv);
    if (flags.help) {
      printInferHelp(stdout, argv0, program);
      backend.printHelpNote(stdout);
      return 0;
    }
    return InferRun(flags, program, backend).run();
  });
}

} // namespace bmrt
