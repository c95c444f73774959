//===- app/train_step.cpp - Micro-batches through the train entries -------===//
#include "app/train_step.h"
#include "app/train_mask.h"

#include "bmrt/comm.h"
#include "bmrt/lowp.h"
#include "bmrt/training.h"

#include <cstring>
#include <utility>
#include <string>

namespace bmrt {

namespace {

constexpr int64_t kIgnore = -100;

const TensorRef &tensorNamed(const TensorRef *list, int count, const char *name) {
  for (int i = 0; i < count; ++i)
    if (std::strcmp(list[i].name, name) == 0)
      return list[i];
  fail(std::string("train entry has no tensor '") + name + "' (a bmbc bug)");
}

const TensorRef *findTensor(const TrainEntry &e, const char *name) {
  for (int i = 0; i < e.numInputs; ++i)
    if (std::strcmp(e.inputs[i].name, name) == 0)
      return &e.inputs[i];
  return nullptr;
}

// Writes one micro-batch's inputs and returns the entry's losses [B*T].
// A masked LM's token_types are zeros and its mask ones (windows of the
// token stream have no segments and no padding); `fill` is their scratch.
const TensorRef &writeInputs(const TrainEntry &e, TrainMemory &mem, std::vector<int32_t> &fill,
                             const int32_t *tokens, const int32_t *targets, int64_t rows) {
  for (auto [name, value] : {std::pair<const char *, int32_t>{"token_types", 0}, {"mask", 1}})
    if (const TensorRef *r = findTensor(e, name)) {
      fill.assign((size_t)rows, value);
      mem.writeInput(*r, fill.data(), rows);
    }
  mem.writeInput(tensorNamed(e.inputs, e.numInputs, "tokens"), tokens, rows);
  mem.writeInput(tensorNamed(e.inputs, e.numInputs, "targets"), targets, rows);
  return tensorNamed(e.outputs, e.numOutputs, "losses");
}

} // namespace

double sumLossRows(const void *at, DType dtype, int64_t rows) {
  double s = 0;
  for (int64_t r = 0; r < rows; ++r)
    s += dtype == DType::F64 ? ((const double *)at)[r] : (double)((const float *)at)[r];
  return s;
}

bool overlapsGradients(const TrainInfo &train, int ranks, int64_t accum, bool deterministic,
                       bool allowed) {
  const bool fp16 = train.precision && std::string(train.precision) == "fp16";
  return allowed && train.overlapGrads && ranks > 1 && !(deterministic && accum > 1) && !fp16;
}

TrainStepper::TrainStepper(Context &ctx, const ProgramInfo &program, TrainMemory &mem,
                           uint64_t seed, int64_t accum, Comm &comm, bool deterministic)
    : ctx_(ctx), program_(program), mem_(mem), buf_(mem.buffers()), seed_(seed), accum_(accum),
      comm_(comm) {
  const int64_t rows = program.train->batch * program.train->seq;
  tokens_.resize((size_t)(rows * accum));
  targets_.resize((size_t)(rows * accum));
  skipped_.resize((size_t)rows * 2);
  // zero = 2 and 3 need no fold: each micro-batch's unit reduce-scatters
  // add into the partition, ((0 + g0) + g1) + ..., already in this order.
  if (deterministic && accum > 1 && program.train->zeroStage < 2)
    sum_.resize((size_t)program.train->gradBytes);
}

int64_t TrainStepper::tokensPerStep() const {
  return program_.train->batch * program_.train->seq * accum_ * comm_.size();
}

namespace {

// Deterministic accumulation: micro-batch gradients are added one by one,
// sum = ((g0 + g1) + g2) + ..., the arithmetic of a rank-order all-reduce.
template <class T> void addInto(void *sum, const void *grads, int64_t n, bool first) {
  T *s = (T *)sum;
  const T *g = (const T *)grads;
  for (int64_t i = 0; i < n; ++i)
    s[i] = first ? g[i] : s[i] + g[i];
}

} // namespace

void TrainStepper::foldMicroBatch(int64_t m) {
  const TrainInfo &t = *program_.train;
  const bool f64 = groupDType(program_) == DType::F64;
  const int64_t n = t.groupElems;
  void *grads = mem_.host().grads; // the app's copy (a device's pulled to the host)
  mem_.pull(TrainMemory::kGrads);
  if (m + 1 < accum_) { // into the sum, then a fresh gradient for the next one
    f64 ? addInto<double>(sum_.data(), grads, n, m == 0)
        : addInto<float>(sum_.data(), grads, n, m == 0);
    std::memset(grads, 0, (size_t)t.gradBytes);
  } else { // the last: grads = sum + grads (IEEE addition commutes exactly)
    f64 ? addInto<double>(grads, sum_.data(), n, false)
        : addInto<float>(grads, sum_.data(), n, false);
  }
  mem_.push(TrainMemory::kGrads);
}

double TrainStepper::forwardBackward(int64_t step, TokenBatches &data) {
  const TrainInfo &t = *program_.train;
  const int64_t rows = t.batch * t.seq;
  const int rank = comm_.rank(), ranks = comm_.size();
  // All micro-batches of the global step first, in one order on every rank
  // (rank r's are the global micro-batches r * accum ... r * accum +
  // accum - 1, the order one process with --accum ranks*accum takes them
  // in): dlossScale needs the whole step's target count.
  int64_t counted = 0;
  for (int64_t g = 0; g < accum_ * ranks; ++g) {
    if (g / accum_ != rank) {
      data.next(skipped_.data(), skipped_.data() + rows);
      continue;
    }
    const int64_t m = g - rank * accum_;
    data.next(&tokens_[m * rows], &targets_[m * rows]);
    if (t.objective == TrainObjective::MaskedLM)
      maskTokens(t, program_.vocab, seed_, step, (uint32_t)g, &tokens_[m * rows],
                 &targets_[m * rows], rows);
    counted += count_targets(&targets_[m * rows], rows, kIgnore);
  }
  counted = comm_.sum(counted);
  if (counted == 0)
    fail("step " + std::to_string(step) + " has no targets to learn from");
  StepArgs args;
  args.step = step;
  // fp16: the loss (so every gradient) is scaled by the loss scale, a
  // power of two (1 otherwise: the product is exact).
  const double perTarget = 1.0 / (double)counted;
  args.dlossScale = scaler_.scale() * perTarget;
  args.seed = seed_;
  // The last micro-batch's backward can send each unit's gradients as it
  // finishes them (TrainInfo::overlapGrads), unless the app still changes
  // them afterwards: deterministic accumulation folds them into the sum,
  // fp16 checks and unscales the rank's own gradients before the sum.
  overlapped_ =
      overlapsGradients(t, ranks, accum_, !sum_.empty(), overlapAllowed_) && !scaler_.enabled();
  double sum = 0;
  for (int64_t m = 0; m < accum_; ++m) {
    const TensorRef &losses = writeInputs(t.forwardBackward, mem_, fill_, &tokens_[m * rows],
                                          &targets_[m * rows], rows);
    args.microStep = rank * accum_ + m;
    args.overlapGrads = overlapped_ && m + 1 == accum_;
    args.prefetchParams = overlapAllowed_; // zero = 3's look-ahead, unless --no-overlap
    args.reduceScatterAhead = overlapAllowed_; // zero = 2's and 3's, likewise
    t.forwardBackward.fn(ctx_, buf_, args);
    if (!sum_.empty())
      foldMicroBatch(m);
    sum += mem_.sumLosses(losses, rows);
  }
  return comm_.sum(sum) * perTarget; // the losses themselves are never scaled
}

double TrainStepper::optimizerStep(int64_t step, double lr) {
  updateSkipped_ = !scaler_.unscale(ctx_, buf_, *program_.train, comm_);
  if (updateSkipped_)
    return 0;
  StepArgs args;
  args.step = scaler_.stepFor(step);
  args.lr = lr;
  args.seed = seed_;
  args.overlapGrads = overlapped_;
  program_.train->optimizerStep.fn(ctx_, buf_, args);
  // Mixed precision: the GEMMs' weight copy follows the master weights
  // (every rank holds all of them now, also after ZeRO-1's all-gather).
  refresh_low_params(ctx_, buf_, *program_.train);
  mem_.finishStep();
  return args.gradNorm;
}

double evaluateLoss(Context &ctx, const ProgramInfo &program, TrainMemory &mem,
                    const TokenBatches &data, int64_t maxBatches, uint64_t seed, int64_t step,
                    int64_t *targetsCounted, Comm &comm) {
  const TrainInfo &t = *program.train;
  const int64_t rows = t.batch * t.seq;
  const uint64_t windows = data.windows();
  int64_t batches = (int64_t)data.stepsPerEpoch();
  if (maxBatches > 0 && maxBatches < batches)
    batches = maxBatches;
  std::vector<int32_t> tokens((size_t)rows), targets((size_t)rows), fill;
  // Batch i is rank (i mod ranks)'s; the per-batch sums are all-reduced
  // (adding the other ranks' zeros is exact) and added in batch order, so
  // every world size gives one process's result.
  std::vector<double> sums((size_t)batches, 0.0), counts((size_t)batches, 0.0);
  StepArgs args;
  args.step = step;
  args.seed = seed;
  // zero = 3: the evaluate entry gathers the params (collectives), so every
  // rank calls it equally often; a rank left without a batch in the last
  // round evaluates batch 0 again and drops the result.
  const int64_t ranks = comm.size();
  const int64_t rounds = t.zeroStage == 3 ? (batches + ranks - 1) / ranks * ranks : batches;
  for (int64_t i = comm.rank(); i < rounds; i += ranks) {
    const bool spare = i >= batches;
    const int64_t at = spare ? 0 : i;
    data.batchAt((uint64_t)at, tokens.data(), targets.data());
    if (t.objective == TrainObjective::MaskedLM)
      maskTokens(t, program.vocab, seed, at, kEvalMicroStep, tokens.data(), targets.data(), rows);
    for (int64_t b = 0; b < t.batch; ++b)
      if ((uint64_t)(at * t.batch + b) >= windows) // wrapped around: counted already
        for (int64_t r = 0; r < t.seq; ++r)
          targets[b * t.seq + r] = (int32_t)kIgnore;
    const int64_t n = count_targets(targets.data(), rows, kIgnore);
    const TensorRef &losses =
        writeInputs(t.evaluate, mem, fill, tokens.data(), targets.data(), rows);
    args.dlossScale = n > 0 ? 1.0 / (double)n : 1.0;
    t.evaluate.fn(ctx, mem.buffers(), args);
    if (spare)
      continue;
    sums[(size_t)i] = mem.sumLosses(losses, rows);
    counts[(size_t)i] = (double)n;
  }
  if (comm.size() > 1 && batches > 0) {
    commWait(ctx, comm.allReduce(sums.data(), batches, DType::F64));
    commWait(ctx, comm.allReduce(counts.data(), batches, DType::F64));
  }
  double sum = 0;
  int64_t counted = 0;
  for (int64_t i = 0; i < batches; ++i) {
    sum += sums[(size_t)i];
    counted += (int64_t)counts[(size_t)i];
  }
  if (targetsCounted)
    *targetsCounted = counted;
  return counted > 0 ? sum / (double)counted : 0.0;
}

} // namespace bmrt
