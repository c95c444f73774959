//===- app/train_run.cpp - The train executable, on any backend -----------===//
//
// An emitted train program is `return bmrt::train_main(argc, argv, kProgram)`,
// which is runTrain with the backend it was built for (train_run.h).
// In order: flags -> (--help, --info) -> the backend (threads or a GPU) ->
// ranks -> memory (TrainMemory) -> parameters
// (fresh from the declared initializers, --load, or --resume) -> data ->
// banner -> steps -> final checkpoint. Each step: forward/backward over the
// micro-batches, (--dump-grads), a finite-loss check, the update, progress
// and the log, then periodic evaluation and checkpoints.
//
// SIGINT/SIGTERM only set a flag: the current step finishes, a checkpoint is
// saved (with --save), and the exit status is 128 + the signal (130 / 143).
// A second signal kills at once (the handler restores the default).
// A NaN/Inf loss or gradient norm stops the run with the step number and
// saves nothing: the last checkpoint on disk stays the last good state.
// Exit codes otherwise: 0 done, 1 run-time error, 2 bad command line.
//
//===----------------------------------------------------------------------===//
#include "app/train_run.h"
#include "app/info.h"
#include "app/kept_params.h"
#include "app/npy.h"
#include "app/program_check.h"
#include "app/train_checkpoint.h"
#include "app/train_data.h"
#include "app/train_flags.h"
#include "app/train_progress.h"
#include "app/train_step.h"
#include "bmrt/checkpoint.h"
#include "bmrt/comm.h"
#include "bmrt/lowp.h"
#include "bmrt/offload.h"
#include "bmrt/program.h"
#include "bmrt/training.h"

#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>

namespace bmrt {

namespace {

volatile std::sig_atomic_t gStopSignal = 0;

extern "C" void onStopSignal(int sig) {
  gStopSignal = sig;
  std::signal(sig, SIG_DFL); // a second one ends the process at once
}

constexpr double kDefaultValFraction = 0.05;

/// --dump-batch DIR: the step's tokens and targets as the program saw them.
void dumpBatch(const std::string &dir, const TrainStepper &stepper) {
  std::filesystem::create_directories(dir);
  const int64_t rows = (int64_t)stepper.tokens().size();
  const int64_t seq = stepper.seq();
  const int64_t shape[2] = {rows / seq, seq};
  writeNpy(dir + "/tokens.npy", DType::I32, shape, 2, stepper.tokens().data());
  writeNpy(dir + "/targets.npy", DType::I32, shape, 2, stepper.targets().data());
}

class TrainRun {
public:
  TrainRun(const TrainFlags &flags, const ProgramInfo &program, TrainBackend &backend)
      : flags_(flags), program_(program), train_(*program.train), backend_(backend) {}
  int run();

private:
  void openComm();
  bool stopRequested();
  void resolveSettings(const TrainerState *resumed);
  void openData();
  int evalOnly();
  void evaluate(int64_t step, double elapsed, Progress &progress);
  std::string save(int64_t step, double loss);
  std::string describeLastCheckpoint() const;

  const TrainFlags &flags_;
  const ProgramInfo &program_;
  const TrainInfo &train_;
  TrainBackend &backend_;
  Context ctx_;
  std::unique_ptr<Comm> comm_;
  std::unique_ptr<TrainMemory> mem_; // the roles; entries get mem_->buffers()
  FILE *out_ = stderr;           // progress: rank 0's stderr (and --rank-logs file), the others' file
  std::unique_ptr<FILE, int (*)(FILE *)> rankLog_{nullptr, std::fclose};
  int threads_ = 1;
  // Settings after defaults and the resumed state.
  uint64_t seed_ = 0;
  std::string order_ = "random";
  double valFraction_ = kDefaultValFraction;
  int64_t accum_ = 1, totalSteps_ = 0;
  double lr_ = 0;
  TrainingData data_;
  std::unique_ptr<TokenBatches> trainBatches_, evalBatches_;
  std::unique_ptr<MetricsLog> log_;
  std::string lastCheckpoint_;
  int64_t lastSavedStep_ = -1;
  const LossScaler *scaler_ = nullptr; // the stepper's, while steps run (fp16)
};

// Rank 0's progress with --rank-logs: stderr and DIR/rank-0.log alike (a
// glibc cookie stream; it is not a terminal, so the progress is plain lines).
struct Tee {
  FILE *screen, *file;
};
ssize_t teeWrite(void *cookie, const char *buf, size_t n) {
  Tee *t = (Tee *)cookie;
  std::fwrite(buf, 1, n, t->screen);
  std::fflush(t->screen);
  return (ssize_t)std::fwrite(buf, 1, n, t->file);
}
int teeClose(void *cookie) {
  Tee *t = (Tee *)cookie;
  int rc = std::fclose(t->file);
  delete t;
  return rc;
}

// The ranks of this run (mpirun, torchrun-style variables, or one process).
// Only rank 0 talks on stderr; every rank writes its progress to
// --rank-logs DIR/rank-R.log (the others nowhere else). Errors reach stderr
// on every rank.
void TrainRun::openComm() {
  CommOptions o;
  o.deterministic = flags_.deterministic;
  o.timeoutSeconds = flags_.commTimeout;
  comm_ = backend_.openComm(o);
  ctx_.comm = comm_.get();
  if (comm_->size() > 1 && (flags_.dumpGrads || flags_.dumpBatch))
    throw UsageError("--dump-grads and --dump-batch show one process's step; run them "
                     "without mpirun");
  if (comm_->rank() == 0 && !flags_.rankLogs)
    return;
  std::string file = "/dev/null";
  if (flags_.rankLogs) {
    std::filesystem::create_directories(*flags_.rankLogs);
    file = *flags_.rankLogs + "/rank-" + std::to_string(comm_->rank()) + ".log";
  }
  FILE *f = std::fopen(file.c_str(), "w");
  if (!f)
    fail("cannot write " + file);
  std::setvbuf(f, nullptr, _IOLBF, 0);
  if (comm_->rank() == 0) {
    Tee *tee = new Tee{stderr, f};
    f = fopencookie(tee, "w", cookie_io_functions_t{nullptr, teeWrite, nullptr, teeClose});
    if (!f) {
      std::fclose(tee->file);
      delete tee;
      fail("cannot write " + file + " and stderr together");
    }
    std::setvbuf(f, nullptr, _IOLBF, 0);
  }
  rankLog_.reset(f);
  out_ = f;
}

// A signal reaches the ranks at different moments; they stop together, at
// the first step end where any rank has seen one.
bool TrainRun::stopRequested() {
  if (comm_->size() == 1)
    return gStopSignal != 0;
  const double sig = comm_->max((double)gStopSignal);
  if (sig != 0 && !gStopSignal)
    gStopSignal = (std::sig_atomic_t)sig;
  return sig != 0;
}

// A resumed run continues with the settings it was saved with; a flag that
// contradicts them would silently make the continuation differ.
void TrainRun::resolveSettings(const TrainerState *r) {
  auto conflict = [&](const char *flag, const std::string &given, const std::string &saved) {
    throw UsageError(std::string(flag) + " " + given + " differs from the resumed run's " +
                     saved + " (a resumed run keeps its settings)");
  };
  if (r) {
    if (flags_.seed && *flags_.seed != r->seed)
      conflict("--seed", std::to_string(*flags_.seed), std::to_string(r->seed));
    if (flags_.order && *flags_.order != r->order)
      conflict("--order", *flags_.order, r->order);
    if (flags_.valFraction && *flags_.valFraction != r->valFraction)
      conflict("--val-fraction", fmt("%g", *flags_.valFraction), fmt("%g", r->valFraction));
    // The global batch (ranks x accum micro-batches) is the run's; at
    // another world size, accum adapts to keep it.
    const int64_t global = r->accum * r->ranks, ranks = comm_->size();
    const int64_t accum = flags_.accum ? *flags_.accum : global / ranks;
    if (accum * ranks != global)
      throw UsageError("the resumed run takes " + std::to_string(global) +
                       " micro-batches per step (" + std::to_string(r->ranks) + " rank(s) x " +
                       std::to_string(r->accum) + "); on " + std::to_string(ranks) +
                       " rank(s) pass --accum A with " + std::to_string(ranks) +
                       " x A = " + std::to_string(global) +
                       (global % ranks ? " (none exists: use a world size dividing it)" : ""));
    seed_ = r->seed;
    order_ = r->order;
    valFraction_ = r->valFraction;
    accum_ = accum;
    lr_ = flags_.lr ? *flags_.lr : r->lr;
    totalSteps_ = flags_.steps ? *flags_.steps : r->totalSteps;
    (void)minLrRate(train_, lr_); // a --lr below min_lr: refused before any step
    return;
  }
  seed_ = flags_.seed ? *flags_.seed : 0;
  order_ = flags_.order ? *flags_.order : "random";
  valFraction_ = flags_.valFraction ? *flags_.valFraction : kDefaultValFraction;
  accum_ = flags_.accum ? *flags_.accum : train_.accumulate;
  lr_ = flags_.lr ? *flags_.lr : train_.lr;
  totalSteps_ = flags_.steps ? *flags_.steps : train_.steps;
  (void)minLrRate(train_, lr_); // a --lr below min_lr: refused before any step
}

void TrainRun::openData() {
  DataOptions o;
  o.path = flags_.data ? *flags_.data : (train_.data ? train_.data : "");
  o.tokenizer = flags_.tokenizer;
  o.loadDir = flags_.load;
  data_ = openTrainingData(o, program_);
  const BatchOrder order = order_ == "sequential" ? BatchOrder::Sequential : BatchOrder::Random;
  trainBatches_ = std::make_unique<TokenBatches>(*data_.file, train_.batch, train_.seq,
                                                 DataSplit::Train, order, seed_, valFraction_);
  if (valFraction_ > 0) {
    try {
      evalBatches_ = std::make_unique<TokenBatches>(*data_.file, train_.batch, train_.seq,
                                                    DataSplit::Eval, BatchOrder::Sequential,
                                                    seed_, valFraction_);
    } catch (const Error &e) {
      if (flags_.evalEvery)
        fail(std::string(e.what()) + " (needed by --eval-every; raise --val-fraction)");
      std::fprintf(stderr, "note: no evaluation: %s\n", e.what());
    }
  } else if (flags_.evalEvery) {
    throw UsageError("--eval-every needs held-out data: --val-fraction must be > 0");
  }
}

int TrainRun::evalOnly() {
  // zero = 3: straight into the rank's partition (kept_params.h).
  const KeptParams params(program_, mem_->host());
  initKeptDeltaParams(program_, mem_->host(), seed_);
  LoadReport r = loadCheckpoint(*flags_.load, program_, params);
  if (flags_.loadDelta)
    loadDeltaCheckpoint(*flags_.loadDelta, program_, params);
  mem_->push(TrainMemory::kParams);
  refresh_low_params(ctx_, mem_->buffers(), train_); // mixed precision: the GEMMs' weight copy
  DataOptions o;
  o.path = flags_.data ? *flags_.data : (train_.data ? train_.data : "");
  o.tokenizer = flags_.tokenizer;
  o.loadDir = flags_.load;
  data_ = openTrainingData(o, program_);
  const bool all = flags_.evalSplit == EvalSplit::All;
  const double fraction = flags_.valFraction ? *flags_.valFraction : kDefaultValFraction;
  if (!all && fraction <= 0)
    throw UsageError("--eval-split held-out needs --val-fraction > 0");
  TokenBatches batches(*data_.file, train_.batch, train_.seq,
                       all ? DataSplit::Train : DataSplit::Eval, BatchOrder::Sequential, 0,
                       all ? 0.0 : fraction);
  int64_t counted = 0;
  const double loss = evaluateLoss(ctx_, program_, *mem_, batches, 0, 0, 0, &counted, *comm_);
  if (comm_->rank() != 0)
    return 0;
  std::fprintf(stderr, "evaluated %s on %s (%s split, %lld targets)\n", r.file.c_str(),
               data_.description.c_str(), all ? "whole file" : "held-out",
               (long long)counted);
  // %.17g: the printed loss reads back as the same double (finite-difference
  // checks of fp64 programs difference two of them).
  std::printf("loss %.17g\nperplexity %.17g\n", loss, std::exp(loss));
  return 0;
}

void TrainRun::evaluate(int64_t step, double elapsed, Progress &progress) {
  int64_t counted = 0;
  const double loss = evaluateLoss(ctx_, program_, *mem_, *evalBatches_, flags_.evalBatches, seed_,
                                   step, &counted, *comm_);
  progress.message("step " + std::to_string(step) + ": val loss " + fmt("%.4f", loss) +
                   ", val ppl " + fmt("%.3f", std::exp(loss)) + " (" + std::to_string(counted) +
                   " targets)");
  if (log_)
    log_->eval(step, loss, elapsed);
}

std::string TrainRun::save(int64_t step, double loss) {
  TrainerState s;
  s.step = step;
  s.seed = seed_;
  s.data = trainBatches_->state();
  s.order = order_;
  s.valFraction = valFraction_;
  s.accum = accum_;
  s.ranks = comm_->size();
  s.lr = lr_;
  s.schedule = train_.schedule;
  s.warmup = train_.warmup;
  s.totalSteps = totalSteps_;
  s.loss = loss;
  s.model = program_.model;
  s.job = program_.job;
  s.paramHash = paramTableHash(program_);
  if (scaler_ && scaler_->enabled()) {
    s.lossScale = scaler_->scale();
    s.lossScaleGood = scaler_->goodSteps();
    s.skippedSteps = scaler_->skippedSteps();
  }
  mem_->pull(TrainMemory::kParams | TrainMemory::kOptState);
  // zero = 3: model.safetensors holds whole params, gathered one at a time
  // from the ranks' partitions (gathered_params.h).
  lastCheckpoint_ = saveTrainCheckpoint(*flags_.save, program_, mem_->host(), s,
                                        data_.tokenizerDir, flags_.keep, *comm_);
  lastSavedStep_ = step;
  return lastCheckpoint_;
}

std::string TrainRun::describeLastCheckpoint() const {
  if (!lastCheckpoint_.empty())
    return "the last good checkpoint is " + lastCheckpoint_;
  return flags_.save ? "no checkpoint was saved by this run" : "no --save";
}

int TrainRun::run() {
  checkProgram(program_);
  if (flags_.lossScale > 0 && !lossScalerFor(train_, 0).enabled())
    throw UsageError("--loss-scale applies to precision = fp16 programs (this one is " +
                     std::string(train_.precision ? train_.precision : "fp32") + ")");
  if (flags_.info) {
    printProgramInfo(stdout, program_);
    return 0;
  }
  ctx_.profile = flags_.profile;
  threads_ = backend_.open(ctx_, flags_);
  openComm();
  mem_ = backend_.allocate(program_, comm_->rank(), comm_->size());
  const Buffers &buf = mem_->buffers();
  if (flags_.evalOnly)
    return evalOnly();

  // zero = 3: params from files and initializers go straight into the
  // rank's partition (kept_params.h).
  const KeptParams params(program_, mem_->host());
  std::optional<ResumePoint> resumed;
  if (flags_.resume) {
    resumed = loadResumePoint(*flags_.save, program_, mem_->host(), out_, *comm_);
    if (!resumed)
      std::fprintf(out_, "note: --resume: no checkpoint in %s yet; starting afresh\n",
                   flags_.save->c_str());
  }
  resolveSettings(resumed ? &resumed->state : nullptr);
  std::string start;
  if (resumed) {
    start = "resumed from " + resumed->path;
    lastCheckpoint_ = resumed->path;
    lastSavedStep_ = resumed->state.step;
  } else if (flags_.load) {
    // Delta tuning: a backbone checkpoint lacks the deltas, which start
    // from their declared initializers.
    initKeptDeltaParams(program_, mem_->host(), seed_);
    LoadReport r = loadCheckpoint(*flags_.load, program_, params);
    start = "parameters from " + r.file + ", fresh optimizer";
    if (flags_.loadDelta) {
      LoadReport d = loadDeltaCheckpoint(*flags_.loadDelta, program_, params);
      start += ", " + std::to_string(d.tensors) + " delta tensors from " + d.file;
    } else if (!r.freshDeltas.empty()) {
      start += ", " + std::to_string(r.freshDeltas.size()) + " fresh delta tensors";
    }
  } else {
    initKeptParams(program_, mem_->host(), seed_);
    start = "fresh parameters (seed " + std::to_string(seed_) + ")";
  }
  mem_->push(TrainMemory::kParams | TrainMemory::kOptState);
  // Mixed precision: the GEMMs read their weights from a reduced copy of
  // the params; TrainStepper refreshes it after every update.
  refresh_low_params(ctx_, buf, train_);
  // offload = optimizer: AdamW updates the host's master copy of the
  // partition, which starts as the params just set.
  if (train_.offloadOptimizer)
    offload_pull_master(ctx_, buf, train_);
  openData();
  const int64_t startStep = resumed ? resumed->state.step : 0;
  if (resumed)
    trainBatches_->restore(resumed->state.data);

  BannerInfo banner;
  banner.threads = threads_;
  banner.accum = accum_;
  banner.data = data_.description;
  banner.trainTokens = trainBatches_->end() - trainBatches_->begin();
  banner.evalTokens = data_.file->size() - banner.trainTokens;
  banner.startStep = startStep;
  banner.totalSteps = totalSteps_;
  banner.lr = lr_;
  banner.start = start;
  banner.rank = comm_->rank();
  banner.ranks = comm_->size();
  banner.comm = comm_->backend();
  banner.deterministic = comm_->deterministic();
  banner.overlapGrads = overlapsGradients(train_, comm_->size(), accum_, flags_.deterministic,
                                          !flags_.noOverlap);
  banner.reduceScatterAhead = train_.zeroStage >= 2 && comm_->size() > 1 && !flags_.noOverlap;
  banner.part = buf.part;
  banner.bufferBytes = {mem_->bytes(0), mem_->bytes(3), mem_->bytes(4)};
  banner.lowParamBytes = mem_->bytes(5);
  banner.stagingBytes = mem_->bytes(6);
  banner.offloadOnDevice = ctx_.device != nullptr;
  banner.paramStagingBytes = train_.zeroStage == 3 ? mem_->bytes(7) : 0;
  banner.lossScale = flags_.lossScale > 0                        ? flags_.lossScale
                     : resumed && resumed->state.lossScale > 0 ? resumed->state.lossScale
                                                               : train_.lossScale;
  printTrainBanner(out_, program_, banner);
  if (startStep >= totalSteps_) {
    std::fprintf(out_, "nothing to do: at step %lld of %lld (raise --steps)\n",
                 (long long)startStep, (long long)totalSteps_);
    return 0;
  }
  if (flags_.log && comm_->rank() == 0)
    log_ = std::make_unique<MetricsLog>(*flags_.log, resumed.has_value());

  std::signal(SIGINT, onStopSignal);
  std::signal(SIGTERM, onStopSignal);
  TrainStepper stepper(ctx_, program_, *mem_, seed_, accum_, *comm_, flags_.deterministic);
  if (flags_.noOverlap)
    stepper.disableOverlap();
  // fp16: dynamic loss scaling, continued from the checkpoint on --resume
  // (unless --loss-scale restarts it).
  stepper.scaler() = lossScalerFor(train_, flags_.lossScale);
  if (stepper.scaler().enabled() && resumed && resumed->state.lossScale > 0) {
    const TrainerState &r = resumed->state;
    stepper.scaler().restore(flags_.lossScale > 0 ? flags_.lossScale : r.lossScale,
                             flags_.lossScale > 0 ? 0 : r.lossScaleGood, r.skippedSteps);
  }
  scaler_ = &stepper.scaler();
  Progress progress(out_, startStep, totalSteps_, flags_.printEvery);
  const double t0 = now();
  double loss = NAN;
  int64_t step = startStep;
  while (step < totalSteps_ && !stopRequested()) {
    const int64_t s = step + 1;
    const double stepStart = now();
    loss = stepper.forwardBackward(s, *trainBatches_);
    if (flags_.dumpBatch && s == startStep + 1)
      dumpBatch(*flags_.dumpBatch, stepper);
    if (flags_.dumpGrads && s == startStep + 1) {
      mem_->pull(TrainMemory::kGrads);
      saveGradients(*flags_.dumpGrads, program_, mem_->host());
      progress.message("wrote the gradients of step " + std::to_string(s) + " to " +
                       *flags_.dumpGrads);
    }
    if (!std::isfinite(loss)) {
      progress.finish();
      fail("the loss is " + fmt("%g", loss) + " at step " + std::to_string(s) +
           "; stopped without saving (" + describeLastCheckpoint() + ")");
    }
    const double lr = lr_ * lr_multiplier((LrSchedule)train_.schedule, s - 1, train_.warmup,
                                          totalSteps_, 0.5, minLrRate(train_, lr_));
    const double scaleBefore = stepper.scaler().scale();
    const double gradNorm = stepper.optimizerStep(s, lr);
    if (stepper.skipped())
      progress.message("step " + std::to_string(s) + ": the gradients overflowed at loss scale " +
                       fmt("%g", scaleBefore) + "; update skipped, loss scale now " +
                       fmt("%g", stepper.scaler().scale()));
    if (!std::isfinite(gradNorm)) {
      progress.finish();
      fail("the gradient norm is " + fmt("%g", gradNorm) + " at step " + std::to_string(s) +
           "; stopped without saving (" + describeLastCheckpoint() + ")");
    }
    step = s;
    StepMetrics m;
    m.step = s;
    m.loss = loss;
    m.lr = lr;
    m.gradNorm = gradNorm;
    if (stepper.scaler().enabled()) {
      m.lossScale = stepper.scaler().scale();
      m.skipped = stepper.skipped();
    }
    m.tokensPerSecond = (double)stepper.tokensPerStep() / std::max(now() - stepStart, 1e-9);
    m.elapsed = now() - t0;
    progress.step(m);
    if (log_)
      log_->step(m);
    if (flags_.evalEvery && evalBatches_ && s % flags_.evalEvery == 0)
      evaluate(s, now() - t0, progress);
    if (flags_.saveEvery && s % flags_.saveEvery == 0 && s < totalSteps_)
      progress.message("saved " + save(s, loss));
  }
  progress.finish();
  if (flags_.save && lastSavedStep_ != step)
    save(step, loss);
  if (stepper.scaler().enabled())
    std::fprintf(out_, "fp16 loss scaling: %lld update%s skipped, loss scale %g\n",
                 (long long)stepper.scaler().skippedSteps(),
                 stepper.scaler().skippedSteps() == 1 ? "" : "s", stepper.scaler().scale());
  scaler_ = nullptr;
  if (flags_.profile && comm_->rank() == 0)
    printProfile(ctx_);
  if (gStopSignal) {
    const int sig = gStopSignal;
    std::fprintf(out_, "stopped by %s after step %lld; %s\n",
                 sig == SIGINT ? "SIGINT" : "SIGTERM", (long long)step,
                 flags_.save ? ("saved " + lastCheckpoint_ + " (continue with --resume)").c_str()
                             : "nothing was saved (no --save)");
    return 128 + sig;
  }
  std::fprintf(out_, "done: %lld steps, loss %.4f, %.1f s, peak RSS %.0f MiB%s%s\n",
               (long long)step, loss, now() - t0, peakRssKiB() / 1024.0,
               flags_.save ? "; saved " : "", flags_.save ? lastCheckpoint_.c_str() : "");
  return 0;
}

} // namespace

int runTrain(int argc, char **argv, const ProgramInfo &program, TrainBackend &backend) {
  const char *argv0 = argc > 0 ? argv[0] : program.job;
  return runExecutable(argv0, [&] {
    if (!program.train)
      fail(std::string("program ") + program.job + " is not a training program");
    TrainFlags flags = parseTrainFlags(argc, argv);
    if (flags.help) {
      printTrainHelp(stdout, argv0, program);
      backend.printHelpNote(stdout);
      return 0;
    }
    applyJobDefaults(flags, *program.train);
    return TrainRun(flags, program, backend).run();
  });
}

} // namespace bmrt
