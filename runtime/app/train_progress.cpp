//===- app/train_progress.cpp - Banner, progress line, JSONL metrics ------===//
#include "app/train_progress.h"
#include "app/flags.h"

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <unistd.h>

namespace bmrt {

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string fmt(const char *format, double v) {
  char b[64];
  std::snprintf(b, sizeof b, format, v);
  return b;
}

double minLrRate(const TrainInfo &train, double baseLr) {
  if (train.minLr <= 0)
    return 0;
  if (!(baseLr >= train.minLr))
    throw UsageError("--lr " + fmt("%g", baseLr) + " is below the job's schedule min_lr " +
                     fmt("%g", train.minLr) + ": the schedule decays from the lr to min_lr");
  return train.minLr / baseLr;
}

static double mib(int64_t bytes) { return (double)bytes / (1 << 20); }

void printTrainBanner(FILE *out, const ProgramInfo &p, const BannerInfo &b) {
  const TrainInfo &t = *p.train;
  std::fprintf(out, "training %s (job %s of %s)\n", p.model, p.job, p.source);
  char lowCopy[80] = "";
  // zero = 3: the copy is of the param staging (a unit at a time), not the group.
  if (b.lowParamBytes > 0)
    std::snprintf(lowCopy, sizeof lowCopy, ", %s weight copy %.2f MiB%s",
                  t.precision ? t.precision : "", mib(b.lowParamBytes),
                  t.zeroStage == 3 ? " (staging)" : "");
  char staging[64] = "", paramStaging[64] = "";
  if (b.stagingBytes > 0)
    std::snprintf(staging, sizeof staging, " (+ %.2f MiB staging)", mib(b.stagingBytes));
  if (b.paramStagingBytes > 0)
    std::snprintf(paramStaging, sizeof paramStaging, " (+ %.2f MiB staging)",
                  mib(b.paramStagingBytes));
  std::fprintf(out,
               "memory: params %.2f MiB%s, grads %.2f MiB%s, optimizer state %.2f MiB%s, "
               "activations %.2f MiB, total %.2f MiB%s\n",
               mib(b.bufferBytes[0]), paramStaging, mib(b.bufferBytes[1]), staging,
               mib(b.bufferBytes[2]), lowCopy, mib(p.activationBytes),
               mib(b.bufferBytes[0] + b.paramStagingBytes + b.bufferBytes[1] + b.stagingBytes +
                   b.bufferBytes[2] + b.lowParamBytes + p.activationBytes + p.stateBytes),
               b.ranks > 1 ? " per rank" : "");
  if (b.ranks > 1)
    std::fprintf(out,
                 "ranks: %d (%s%s), rank %d (pid %d); zero = %d: %s [%lld, %lld) of the %lld "
                 "trainable elements%s\n",
                 b.ranks, b.comm.c_str(), b.deterministic ? ", deterministic" : "", b.rank,
                 (int)getpid(),
                 t.zeroStage,
                 t.zeroStage == 3   ? "this rank holds the params and gradients of and updates"
                 : t.zeroStage == 2 ? "this rank holds the gradients of and updates"
                 : t.zeroStage      ? "this rank updates"
                                   : "every rank updates",
                 (long long)b.part.begin, (long long)b.part.end, (long long)t.groupElems,
                 b.overlapGrads         ? "; gradient all-reduce overlapped with the backward"
                 : b.reduceScatterAhead ? "; each layer's gradient reduce-scatter overlapped "
                                          "with the next layer's backward"
                                        : "");
  std::fprintf(out,
               "batch %lld x seq %lld, %lld micro-batch%s per step and rank (%lld tokens per "
               "step), %d thread%s\n",
               (long long)t.batch, (long long)t.seq, (long long)b.accum,
               b.accum == 1 ? "" : "es", (long long)(t.batch * t.seq * b.accum * b.ranks),
               b.threads, b.threads == 1 ? "" : "s");
  const std::string precision = t.precision ? t.precision : "fp32";
  if (precision == "bf16" || precision == "fp16")
    std::fprintf(out,
                 "precision: %s GEMM inputs, fp32 accumulation; params (the master weights), "
                 "grads and optimizer state fp32\n",
                 precision.c_str());
  if (precision == "fp16")
    std::fprintf(out,
                 "loss scaling: dynamic from %g (halves on overflow, doubles after %lld good "
                 "steps; --loss-scale)\n",
                 b.lossScale, (long long)t.lossScaleWindow);
  if (t.offloadOptimizer)
    std::fprintf(out,
                 "offload = optimizer: the optimizer state (%.2f MiB: AdamW's m and v, the "
                 "fp32 master params and the gradient staging of this rank's partition) is in "
                 "host memory and AdamW runs there, %lld-element chunks on %d thread%s; %s\n",
                 mib(b.bufferBytes[2]), (long long)t.offloadChunk, b.threads,
                 b.threads == 1 ? "" : "s",
                 b.offloadOnDevice ? "the GPU holds no optimizer state"
                                   : "on the host target that is the same RAM as the params "
                                     "and grads, so it saves no memory (it does on a GPU)");
  std::fprintf(out, "data: %s: %llu tokens for training, %llu held out\n", b.data.c_str(),
               (unsigned long long)b.trainTokens, (unsigned long long)b.evalTokens);
  std::fprintf(out, "start: %s; steps %lld..%lld, lr %g\n", b.start.c_str(),
               (long long)b.startStep + 1, (long long)b.totalSteps, b.lr);
  std::fflush(out);
}

static std::string duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0)
    return "?";
  long long s = (long long)(seconds + 0.5);
  char b[32];
  if (s >= 3600)
    std::snprintf(b, sizeof b, "%lldh%02lldm", s / 3600, s / 60 % 60);
  else
    std::snprintf(b, sizeof b, "%lldm%02llds", s / 60, s % 60);
  return b;
}

Progress::Progress(FILE *out, int64_t startStep, int64_t totalSteps, int64_t printEvery)
    : out_(out), tty_(isatty(fileno(out)) != 0), start_(startStep), total_(totalSteps),
      every_(printEvery) {}

void Progress::step(const StepMetrics &m) {
  const int64_t done = m.step - start_, left = total_ - m.step;
  const double eta = done > 0 ? m.elapsed / (double)done * (double)left : NAN;
  if (!tty_) {
    if (m.step % every_ == 0 || m.step == total_ || done == 1)
      std::fprintf(out_, "step %lld/%lld  loss %.4f  lr %.3g  grad norm %.3g  %.0f tokens/s  ETA %s\n",
                   (long long)m.step, (long long)total_, m.loss, m.lr, m.gradNorm,
                   m.tokensPerSecond, duration(eta).c_str());
    std::fflush(out_);
    return;
  }
  constexpr int kBar = 24;
  const int filled = total_ > 0 ? (int)(kBar * m.step / total_) : kBar;
  std::string bar(filled, '#');
  bar.resize(kBar, '.');
  std::fprintf(out_, "\r\033[K[%s] step %lld/%lld  loss %.4f  %.0f tok/s  ETA %s", bar.c_str(),
               (long long)m.step, (long long)total_, m.loss, m.tokensPerSecond,
               duration(eta).c_str());
  std::fflush(out_);
  lineOpen_ = true;
}

void Progress::message(const std::string &line) {
  if (lineOpen_)
    std::fputs("\r\033[K", out_);
  std::fprintf(out_, "%s\n", line.c_str());
  lineOpen_ = false;
  std::fflush(out_);
}

void Progress::finish() {
  if (lineOpen_)
    std::fputc('\n', out_);
  lineOpen_ = false;
  std::fflush(out_);
}

MetricsLog::MetricsLog(const std::string &file, bool append) {
  f_ = std::fopen(file.c_str(), append ? "a" : "w");
  if (!f_)
    fail(file + ": cannot write the log: " + std::strerror(errno));
}

MetricsLog::~MetricsLog() {
  if (f_)
    std::fclose(f_);
}

// JSON has no NaN/Infinity: a non-finite value is null. %.17g reads back as
// the same double, so logs of two runs compare exactly (the multi-rank tests
// compare every step's loss bit for bit).
static std::string num(double v) {
  if (!std::isfinite(v))
    return "null";
  char b[40];
  std::snprintf(b, sizeof b, "%.17g", v);
  return b;
}

void MetricsLog::step(const StepMetrics &m) {
  if (!f_)
    return;
  std::string scaling;
  if (m.lossScale > 0)
    scaling = ", \"loss_scale\": " + num(m.lossScale) +
              ", \"skipped\": " + (m.skipped ? "true" : "false");
  std::fprintf(f_,
               "{\"step\": %lld, \"loss\": %s, \"lr\": %s, \"grad_norm\": %s, "
               "\"tokens_per_s\": %s, \"elapsed\": %s%s}\n",
               (long long)m.step, num(m.loss).c_str(), num(m.lr).c_str(),
               num(m.gradNorm).c_str(), num(m.tokensPerSecond).c_str(), num(m.elapsed).c_str(),
               scaling.c_str());
  std::fflush(f_);
}

void MetricsLog::eval(int64_t step, double valLoss, double elapsed) {
  if (!f_)
    return;
  std::fprintf(f_, "{\"step\": %lld, \"val_loss\": %s, \"val_ppl\": %s, \"elapsed\": %s}\n",
               (long long)step, num(valLoss).c_str(), num(std::exp(valLoss)).c_str(),
               num(elapsed).c_str());
  std::fflush(f_);
}

void MetricsLog::record(const std::string &jsonObject) {
  if (!f_)
    return;
  std::fprintf(f_, "%s\n", jsonObject.c_str());
  std::fflush(f_);
}

} // namespace bmrt
