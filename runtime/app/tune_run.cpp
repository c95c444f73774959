//===- app/tune_run.cpp - The tune executable, on any backend -------------===//
//
// An emitted tune program is `return bmrt::tune_main(argc, argv, kProgram)`,
// which is runTune with its backend (app/tune_main.cpp: threads and the
// process's memory; cuda/tune_main.cpp: a GPU, its memory and NCCL).
// In order: flags -> (--help, --info) -> the backend (threads or a GPU) ->
// one process -> buffers
// -> the backbone (--load, default the job's `from`; fresh deltas) -> the
// tokenizer -> the prompt plan and label words -> soft tokens from their
// init words -> (--load-delta | --resume) -> labelled data, split into
// training and held-out examples, each assembled once -> calibration ->
// steps -> evaluation -> a delta-only checkpoint.
//
// A step takes the next B examples of a per-epoch shuffle (Fisher-Yates on
// a mt19937_64 keyed by seed and epoch), so a resumed run continues with
// exactly the examples the uninterrupted one would have seen. Evaluation
// runs `evaluate` over the held-out examples in batches of B (the last one
// padded with label -100 examples): the loss, accuracy and macro-F1 of the
// scores' argmax, and once the majority class's accuracy.
//
// The app reads and writes the params, optimizer state and grads in the
// memory's host copies (TuneMemory::roles().host()) and pushes them before
// the entries run (pulls them before it saves): nothing here touches a
// role the entries use, so a device backend runs this same code.
//
// Exit codes: 0 done, 1 run-time error (bad data, checkpoint, ...), 2 bad
// command line.
//
//===----------------------------------------------------------------------===//
#include "app/buffers.h"
#include "app/info.h"
#include "app/train_checkpoint.h"
#include "app/train_progress.h"
#include "app/tune_batch.h"
#include "app/tune_checkpoint.h"
#include "app/tune_data.h"
#include "app/tune_flags.h"
#include "app/tune_metrics.h"
#include "app/tune_run.h"
#include "bmrt/checkpoint.h"
#include "bmrt/comm.h"
#include "bmrt/lowp.h"
#include "bmrt/program.h"
#include "bmrt/training.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <memory>
#include <random>

namespace bmrt {

namespace {

constexpr double kDefaultValFraction = 0.1;
constexpr int64_t kDefaultSteps = 100;

/// A permutation of [0, n) keyed by (seed, salt): Fisher-Yates over
/// mt19937_64 (both fully specified, so every platform draws the same).
std::vector<int64_t> permutation(int64_t n, uint64_t seed, uint64_t salt) {
  std::vector<int64_t> p((size_t)n);
  for (int64_t i = 0; i < n; ++i)
    p[(size_t)i] = i;
  std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + salt + 1);
  for (int64_t i = n - 1; i > 0; --i)
    std::swap(p[(size_t)i], p[(size_t)(rng() % (uint64_t)(i + 1))]);
  return p;
}

const ParamInfo *paramNamed(const ProgramInfo &program, const char *name) {
  for (int k = 0; k < program.numParams; ++k)
    if (std::strcmp(program.params[k].name, name) == 0)
      return &program.params[k];
  return nullptr;
}

struct EvalResult {
  double loss = 0;
  ClassMetrics metrics;
  std::vector<double> wordProbs; // of the first example (calibration)
};

class TuneRun {
public:
  TuneRun(const TuneFlags &flags, const ProgramInfo &program, TuneBackend &backend)
      : flags_(flags), program_(program), train_(*program.train), tune_(*program.tune),
        backend_(backend) {}
  int run();

private:
  std::unique_ptr<Tokenizer> makeTokenizer(const std::string &backbone) const;
  void initSoftTokens(const Buffers &buf, const Tokenizer &tok);
  void initSoftLabels(const Buffers &buf);
  void readData(const Tokenizer &tok);
  void calibrate(const Buffers &buf, const Tokenizer &tok);
  EvalResult evaluate(const Buffers &buf, const std::vector<TuneExample> &examples);
  void report(const EvalResult &r, int64_t step, double elapsed, Progress *progress);
  double step(const Buffers &buf, int64_t s);

  const TuneFlags &flags_;
  const ProgramInfo &program_;
  const TrainInfo &train_;
  const TuneInfo &tune_;
  TuneBackend &backend_;
  Context ctx_;
  std::unique_ptr<TuneMemory> mem_;
  int threads_ = 1;
  uint64_t seed_ = 0;
  TunePrompt prompt_;
  std::vector<TuneExample> train_examples_, val_examples_;
  std::vector<int32_t> trainLabels_;
  std::vector<double> calibration_; // [M, C, W]
  std::string dataDescription_;
  std::unique_ptr<MetricsLog> log_;
  int32_t majority_ = 0;
  bool baselinePrinted_ = false;
  // The current epoch's order of the training examples.
  int64_t epoch_ = -1;
  std::vector<int64_t> order_;
};

// --tokenizer DIR|byte, else the backbone checkpoint's directory.
std::unique_ptr<Tokenizer> TuneRun::makeTokenizer(const std::string &backbone) const {
  std::string hint = program_.tokenizer ? program_.tokenizer : "";
  if (flags_.tokenizer ? *flags_.tokenizer == "byte" : hint == "byte")
    return makeByteTokenizer(program_.vocab > 256);
  std::string path = flags_.tokenizer ? *flags_.tokenizer : backbone;
  if (!flags_.tokenizer && !std::filesystem::is_directory(path)) {
    path = std::filesystem::path(path).parent_path().string();
    if (path.empty())
      path = ".";
  }
  return loadTokenizer(path, hint == "byte" ? "" : hint);
}

// Soft token k starts as the mean of the embedding rows of its init word's
// tokens ({soft: "word"}); a soft token without one keeps its random init.
void TuneRun::initSoftTokens(const Buffers &buf, const Tokenizer &tok) {
  if (tune_.numSoft == 0)
    return;
  const ParamInfo *soft = paramNamed(program_, tune_.softParam);
  const ParamInfo *table = paramNamed(program_, tune_.embeddingParam);
  if (!soft || !table || soft->rank != 2 || table->rank != 2 ||
      soft->shape[1] != table->shape[1] || soft->dtype != table->dtype)
    fail(std::string("the soft tokens '") + tune_.softParam + "' and the embedding '" +
         tune_.embeddingParam + "' are not tables of one width (a bmbc bug)");
  const int64_t dim = table->shape[1];
  const std::vector<std::vector<int32_t>> init = softInitIds(prompt_.tmpl, tok);
  char *base = (char *)buf.params;
  for (size_t k = 0; k < init.size() && (int64_t)k < soft->shape[0]; ++k) {
    if (init[k].empty())
      continue;
    for (int64_t i = 0; i < dim; ++i) {
      double sum = 0;
      for (int32_t id : init[k]) {
        if (id < 0 || id >= table->shape[0])
          fail("soft token " + std::to_string(k) + "'s init word has token " +
               std::to_string(id) + ", outside the embedding's " +
               std::to_string(table->shape[0]) + " rows");
        const int64_t at = id * dim + i;
        sum += table->dtype == DType::F64 ? ((double *)(base + table->offset))[at]
                                          : ((float *)(base + table->offset))[at];
      }
      const double mean = sum / (double)init[k].size();
      const int64_t at = (int64_t)k * dim + i;
      if (soft->dtype == DType::F64)
        ((double *)(base + soft->offset))[at] = mean;
      else
        ((float *)(base + soft->offset))[at] = (float)mean;
    }
  }
}

// A soft verbalizer's row c starts as the mean row of its class's first
// label word's tokens in labelInitParam: the head's weight (OpenPrompt's
// SoftVerbalizer takes the first word of each class and the head's last
// layer) or, for a headless encoder, the token embedding (whose rows a
// tied head would have).
void TuneRun::initSoftLabels(const Buffers &buf) {
  const ParamInfo *rows = paramNamed(program_, tune_.labelParam);
  const ParamInfo *head = paramNamed(program_, tune_.labelInitParam);
  if (!rows || !head || rows->rank != 2 || head->rank != 2 || rows->shape[1] != head->shape[1] ||
      rows->shape[0] != tune_.numLabels || rows->dtype != head->dtype)
    fail(std::string("the soft verbalizer '") + tune_.labelParam + "' and its init table '" +
         tune_.labelInitParam + "' are not tables of one width (a bmbc bug)");
  const int64_t dim = head->shape[1], W = tune_.maxWords, K = tune_.maxWordTokens;
  char *base = (char *)buf.params;
  auto at = [&](const ParamInfo *p, int64_t i) -> double {
    return p->dtype == DType::F64 ? ((double *)(base + p->offset))[i]
                                  : ((float *)(base + p->offset))[i];
  };
  for (int64_t c = 0; c < tune_.numLabels; ++c) {
    const int32_t *word = &prompt_.labelWords[(size_t)(c * W * K)]; // mask 0, word 0
    int64_t n = 0;
    while (n < K && word[n] >= 0)
      ++n;
    for (int64_t i = 0; i < dim; ++i) {
      double sum = 0;
      for (int64_t k = 0; k < n; ++k)
        sum += at(head, word[k] * dim + i);
      const double mean = n ? sum / (double)n : 0.0;
      if (rows->dtype == DType::F64)
        ((double *)(base + rows->offset))[c * dim + i] = mean;
      else
        ((float *)(base + rows->offset))[c * dim + i] = (float)mean;
    }
  }
}

void TuneRun::readData(const Tokenizer &tok) {
  const std::vector<std::string> &labels = prompt_.verbalizers.front().labels;
  LabelledSource source = labelledSource(tune_.data ? tune_.data : "", flags_.data ? *flags_.data : "");
  std::vector<LabelledExample> all = readLabelled(source, prompt_.fields, labels);
  std::vector<LabelledExample> train, val;
  if (flags_.val) {
    train = std::move(all);
    LabelledSource v = source;
    v.path = *flags_.val;
    val = readLabelled(v, prompt_.fields, labels);
  } else {
    const double fraction = flags_.valFraction ? *flags_.valFraction : kDefaultValFraction;
    const int64_t n = (int64_t)all.size();
    const int64_t held = fraction > 0 ? std::max<int64_t>(1, (int64_t)std::llround(fraction * n)) : 0;
    if (held >= n)
      fail(source.path + " has " + std::to_string(n) + " examples: too few to hold out " +
           std::to_string(held) + " (lower --val-fraction or pass --val FILE)");
    const std::vector<int64_t> p = permutation(n, seed_, 0x5eed);
    for (int64_t i = 0; i < n; ++i)
      (i < n - held ? train : val).push_back(all[(size_t)p[(size_t)i]]);
  }
  dataDescription_ = source.path + ": " + std::to_string(train.size()) + " training, " +
                     std::to_string(val.size()) + " held-out examples";
  train_examples_ = assembleExamples(train, prompt_, tok);
  val_examples_ = assembleExamples(val, prompt_, tok);
  for (const TuneExample &e : train_examples_)
    trainLabels_.push_back(e.label);
  majority_ = trainLabels_.empty() ? 0 : majorityClass(trainLabels_, (int)tune_.numLabels);
}

// OpenPrompt's contextual calibration: the word probabilities of the
// content-free input (every field empty), computed once with no calibration,
// divide those of every example (masks whose verbalizer has calibrate).
void TuneRun::calibrate(const Buffers &buf, const Tokenizer &tok) {
  if (std::none_of(prompt_.calibrate.begin(), prompt_.calibrate.end(), [](bool c) { return c; }))
    return;
  std::vector<TuneExample> cf{{assemblePrompt(prompt_.tmpl, contentFreeExample(prompt_.tmpl), tok),
                               -100}};
  EvalResult r = evaluate(buf, cf);
  const int64_t CW = tune_.numLabels * tune_.maxWords, K = tune_.maxWordTokens;
  for (int64_t m = 0; m < tune_.numMasks; ++m) {
    if (!prompt_.calibrate[(size_t)m])
      continue;
    for (int64_t j = 0; j < CW; ++j)
      if (prompt_.labelWords[(size_t)((m * CW + j) * K)] >= 0)
        calibration_[(size_t)(m * CW + j)] = r.wordProbs[(size_t)(m * CW + j)];
  }
}

EvalResult TuneRun::evaluate(const Buffers &buf, const std::vector<TuneExample> &examples) {
  const int64_t B = train_.batch, C = tune_.numLabels;
  const TrainEntry &e = train_.evaluate;
  EvalResult r;
  std::vector<int32_t> gold, predicted;
  double sum = 0;
  int64_t counted = 0;
  std::vector<const TuneExample *> batch((size_t)B);
  for (size_t first = 0; first < examples.size(); first += (size_t)B) {
    const int64_t n = std::min<int64_t>(B, (int64_t)(examples.size() - first));
    for (int64_t b = 0; b < n; ++b)
      batch[(size_t)b] = &examples[first + (size_t)b];
    writeTuneInputs(program_, e, *mem_, batch.data(), n, prompt_, calibration_);
    StepArgs args;
    args.dlossScale = 1.0 / (double)n;
    e.fn(ctx_, buf, args);
    const std::vector<double> losses = readTuneOutput(e, *mem_, "losses");
    const std::vector<double> scores = readTuneOutput(e, *mem_, "scores");
    if (first == 0)
      r.wordProbs = readTuneOutput(e, *mem_, "word_probs");
    for (int64_t b = 0; b < n; ++b) {
      if (batch[(size_t)b]->label < 0)
        continue;
      sum += losses[(size_t)b];
      ++counted;
      const double *s = &scores[(size_t)(b * C)];
      gold.push_back(batch[(size_t)b]->label);
      predicted.push_back((int32_t)(std::max_element(s, s + C) - s));
    }
  }
  r.loss = counted ? sum / (double)counted : 0.0;
  if (counted)
    r.metrics = classMetrics(gold, predicted, (int)C);
  return r;
}

// An evaluation on stderr (and the log); the last of a run (no progress
// line: --eval-only, the end) also on stdout, as `key value` lines.
void TuneRun::report(const EvalResult &r, int64_t step, double elapsed, Progress *progress) {
  int64_t hits = 0;
  for (const TuneExample &e : val_examples_)
    hits += e.label == majority_;
  const double baseline = val_examples_.empty() ? 0 : (double)hits / (double)val_examples_.size();
  const std::string line = "step " + std::to_string(step) + ": held-out loss " +
                           fmt("%.4f", r.loss) + ", accuracy " + fmt("%.4f", r.metrics.accuracy) +
                           ", macro-F1 " + fmt("%.4f", r.metrics.macroF1) + " (" +
                           std::to_string(r.metrics.examples) + " examples)";
  if (progress)
    progress->message(line);
  else
    std::fprintf(stderr, "%s\n", line.c_str());
  if (!baselinePrinted_) {
    const std::string b = "majority baseline (class '" +
                          prompt_.verbalizers.front().labels[(size_t)majority_] +
                          "'): accuracy " + fmt("%.4f", baseline);
    progress ? progress->message(b) : (void)std::fprintf(stderr, "%s\n", b.c_str());
    baselinePrinted_ = true;
  }
  if (log_)
    log_->record("{\"step\": " + std::to_string(step) + ", \"val_loss\": " + fmt("%.17g", r.loss) +
                 ", \"accuracy\": " + fmt("%.17g", r.metrics.accuracy) + ", \"macro_f1\": " +
                 fmt("%.17g", r.metrics.macroF1) + ", \"majority_accuracy\": " +
                 fmt("%.17g", baseline) + ", \"examples\": " +
                 std::to_string(r.metrics.examples) + ", \"elapsed\": " + fmt("%.17g", elapsed) +
                 "}");
  if (progress)
    return;
  std::printf("loss %.17g\naccuracy %.17g\nmacro_f1 %.17g\nmajority_accuracy %.17g\nexamples %lld\n",
              r.loss, r.metrics.accuracy, r.metrics.macroF1, baseline,
              (long long)r.metrics.examples);
  std::fflush(stdout);
}

// Forward and backward of step s's batch; returns its mean loss.
double TuneRun::step(const Buffers &buf, int64_t s) {
  const int64_t B = train_.batch, N = (int64_t)train_examples_.size();
  std::vector<const TuneExample *> batch((size_t)B);
  for (int64_t b = 0; b < B; ++b) {
    const int64_t pos = (s - 1) * B + b, epoch = pos / N;
    if (epoch != epoch_) {
      order_ = permutation(N, seed_, (uint64_t)epoch + 1);
      epoch_ = epoch;
    }
    batch[(size_t)b] = &train_examples_[(size_t)order_[(size_t)(pos % N)]];
  }
  const TrainEntry &e = train_.forwardBackward;
  writeTuneInputs(program_, e, *mem_, batch.data(), B, prompt_, calibration_);
  StepArgs args;
  args.step = s;
  args.seed = seed_;
  args.dlossScale = 1.0 / (double)B;
  e.fn(ctx_, buf, args);
  const std::vector<double> losses = readTuneOutput(e, *mem_, "losses");
  double sum = 0;
  for (double l : losses)
    sum += l;
  return sum / (double)B;
}

int TuneRun::run() {
  if (flags_.info) {
    printProgramInfo(stdout, program_);
    return 0;
  }
  threads_ = backend_.open(ctx_, flags_);
  CommOptions co;
  std::unique_ptr<Comm> comm = backend_.openComm(co);
  if (comm->size() > 1)
    throw UsageError("the tune executable runs in one process; tuning on " +
                     std::to_string(comm->size()) +
                     " ranks is not implemented yet (run it without mpirun)");
  ctx_.comm = comm.get();
  mem_ = backend_.allocate(program_);
  TrainMemory &roles = mem_->roles();
  const Buffers &buf = roles.buffers(); // what the entries run on
  const Buffers &host = roles.host();   // what the app reads and writes
  seed_ = flags_.seed ? *flags_.seed : 0;

  // The backbone, with fresh deltas (and prompt params) over it.
  const std::string backbone = flags_.load ? *flags_.load : program_.from;
  if (backbone.empty())
    throw UsageError(std::string("job ") + program_.job +
                     " names no backbone (`from`): pass --load PATH");
  initDeltaParams(program_, host.params, seed_);
  LoadReport loaded = loadCheckpoint(backbone, program_, host.params);
  std::unique_ptr<Tokenizer> tok = makeTokenizer(backbone);
  prompt_ = readTunePrompt(program_, *tok);
  // Soft tokens the backbone file does not hold start from their init words.
  auto fresh = [&](const char *name) {
    return *name && std::find(loaded.freshDeltas.begin(), loaded.freshDeltas.end(), name) !=
                        loaded.freshDeltas.end();
  };
  if (tune_.numSoft > 0 && fresh(tune_.softParam))
    initSoftTokens(host, *tok);
  // A soft verbalizer the backbone file does not hold starts from the head
  // (or the token embedding).
  if (fresh(tune_.labelParam))
    initSoftLabels(host);
  std::string start = "backbone " + loaded.file + ", fresh deltas (seed " +
                      std::to_string(seed_) + ")";
  if (flags_.loadDelta) {
    LoadReport d = loadDeltaCheckpoint(*flags_.loadDelta, program_, host.params);
    start = "backbone " + loaded.file + ", deltas from " + d.file;
  }
  calibration_.assign((size_t)(tune_.numMasks * tune_.numLabels * tune_.maxWords), 1.0);
  int64_t startStep = 0;
  if (flags_.resume) {
    std::string path;
    if (std::optional<TuneState> s = loadTuneCheckpoint(*flags_.save, program_, host, &path)) {
      if (flags_.seed && *flags_.seed != s->seed)
        throw UsageError("--seed " + std::to_string(*flags_.seed) + " differs from the resumed " +
                         "run's " + std::to_string(s->seed) + " (a resumed run keeps its settings)");
      seed_ = s->seed;
      startStep = s->step;
      if (s->calibration.size() == calibration_.size())
        calibration_ = s->calibration;
      start = "backbone " + loaded.file + ", resumed from " + path;
    } else {
      std::fprintf(stderr, "note: --resume: no checkpoint in %s yet; starting afresh\n",
                   flags_.save->c_str());
    }
  }
  roles.push(TrainMemory::kParams | TrainMemory::kOptState);
  refresh_low_params(ctx_, buf, train_);
  readData(*tok);
  if (startStep == 0)
    calibrate(buf, *tok);

  if (flags_.evalOnly) {
    if (val_examples_.empty())
      throw UsageError("--eval-only evaluates the held-out examples: pass --val FILE or "
                       "--val-fraction F > 0");
    std::fprintf(stderr, "%s; %s\n", start.c_str(), dataDescription_.c_str());
    report(evaluate(buf, val_examples_), startStep, 0, nullptr);
    return 0;
  }
  if (train_examples_.empty())
    fail("no training examples (" + dataDescription_ + ")");
  const int64_t totalSteps = flags_.steps ? *flags_.steps : train_.steps ? train_.steps
                                                                           : kDefaultSteps;
  const double lr = flags_.lr ? *flags_.lr : train_.lr;
  (void)minLrRate(train_, lr); // a --lr below min_lr: refused before any step
  std::fprintf(stderr,
               "%s: tuning %s (job %s), batch %lld x seq %lld, %lld label(s), %lld mask(s)\n"
               "  %s\n  %s\n  steps %lld -> %lld, lr %g, %d thread(s)\n",
               program_.source, program_.model, program_.job, (long long)train_.batch,
               (long long)train_.seq, (long long)tune_.numLabels, (long long)tune_.numMasks,
               start.c_str(), dataDescription_.c_str(), (long long)startStep,
               (long long)totalSteps, lr, threads_);
  // The job's eval_every / save_every / log_every are the defaults where they
  // apply (evaluation needs held-out examples, saving --save).
  const int64_t evalEvery = flags_.evalEvery ? flags_.evalEvery
                            : val_examples_.empty() ? 0 : train_.evalEvery;
  if (flags_.evalEvery && val_examples_.empty())
    throw UsageError("--eval-every needs held-out examples: pass --val FILE or --val-fraction F > 0");
  const int64_t saveEvery = flags_.saveEvery ? flags_.saveEvery : flags_.save ? train_.saveEvery : 0;
  const int64_t printEvery = flags_.printEvery ? *flags_.printEvery
                             : train_.logEvery ? train_.logEvery : 10;
  if (flags_.log)
    log_ = std::make_unique<MetricsLog>(*flags_.log, startStep > 0);
  Progress progress(stderr, startStep, totalSteps, printEvery);
  const double t0 = now();
  double loss = NAN;
  int64_t s = startStep;
  std::string saved;
  auto save = [&]() {
    TuneState st;
    st.step = s;
    st.seed = seed_;
    st.loss = loss;
    st.calibration = calibration_;
    roles.pull(TrainMemory::kParams | TrainMemory::kOptState);
    saved = saveTuneCheckpoint(*flags_.save, program_, host, st);
  };
  while (s < totalSteps) {
    const int64_t next = s + 1;
    const double stepStart = now();
    loss = step(buf, next);
    if (flags_.dumpGrads && next == startStep + 1) {
      roles.pull(TrainMemory::kGrads);
      saveGradients(*flags_.dumpGrads, program_, host);
      progress.message("wrote the gradients of step " + std::to_string(next) + " to " +
                       *flags_.dumpGrads);
    }
    if (!std::isfinite(loss))
      fail("the loss is " + fmt("%g", loss) + " at step " + std::to_string(next) +
           "; stopped without saving");
    StepArgs args;
    args.step = next;
    args.seed = seed_;
    args.lr = lr * lr_multiplier((LrSchedule)train_.schedule, next - 1, train_.warmup,
                                 totalSteps, 0.5, minLrRate(train_, lr));
    train_.optimizerStep.fn(ctx_, buf, args);
    refresh_low_params(ctx_, buf, train_);
    roles.finishStep();
    s = next;
    StepMetrics m;
    m.step = s;
    m.loss = loss;
    m.lr = args.lr;
    m.gradNorm = args.gradNorm;
    m.tokensPerSecond = (double)(train_.batch * train_.seq) / std::max(now() - stepStart, 1e-9);
    m.elapsed = now() - t0;
    progress.step(m);
    if (log_)
      log_->step(m);
    if (evalEvery && s % evalEvery == 0 && s < totalSteps)
      report(evaluate(buf, val_examples_), s, now() - t0, &progress);
    if (saveEvery && s % saveEvery == 0 && s < totalSteps) {
      save();
      progress.message("saved " + saved);
    }
  }
  progress.finish();
  if (!val_examples_.empty())
    report(evaluate(buf, val_examples_), s, now() - t0, nullptr);
  if (flags_.save)
    save();
  std::fprintf(stderr, "done: %lld steps, loss %.4f, %.1f s, peak RSS %.0f MiB%s%s\n",
               (long long)s, loss, now() - t0, peakRssKiB() / 1024.0,
               flags_.save ? "; saved " : "", saved.c_str());
  return 0;
}

} // namespace

int runTune(int argc, char **argv, const ProgramInfo &program, TuneBackend &backend) {
  const char *argv0 = argc > 0 ? argv[0] : program.job;
  return runExecutable(argv0, [&] {
    if (!program.train || !program.tune)
      fail(std::string("program ") + program.job + " is not a tune program");
    TuneFlags flags = parseTuneFlags(argc, argv);
    if (flags.help) {
      printTuneHelp(stdout, argv0, program);
      backend.printHelpNote(stdout);
      return 0;
    }
    return TuneRun(flags, program, backend).run();
  });
}

} // namespace bmrt
