//===- app/train_step.h - One optimizer step, and evaluation ---------------===//
//
// The app's half of the training contract (program.h, docs/training-ir.md):
// it writes "tokens" and "targets" of each micro-batch into the
// activations, calls forwardBackward once per micro-batch (gradients
// accumulate), reads "losses", and calls optimizerStep with the step's lr.
// dlossScale = 1 / (counted targets of all micro-batches of the step), so
// the gradient is that of the mean loss over the whole step, as torch's
// cross_entropy(reduction='mean') over the concatenated batch.
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_APP_TRAIN_STEP_H
#define BMRT_APP_TRAIN_STEP_H

#include "app/loss_scale.h"
#include "app/train_memory.h"
#include "bmrt/comm.h"
#include "bmrt/program.h"
#include "bmrt/tokens.h"

#include <cstdint>
#include <vector>

namespace bmrt {

/// Whether a step's last micro-batch sends its gradients from the backward,
/// layer by layer (TrainInfo::overlapGrads, StepArgs::overlapGrads): on
/// several ranks, unless the app still changes the gradients after the
/// backward (deterministic accumulation folds micro-batches into a sum;
/// fp16 checks and unscales a rank's own gradients).
/// `allowed`: not turned off (--no-overlap).
bool overlapsGradients(const TrainInfo &train, int ranks, int64_t accum, bool deterministic,
                       bool allowed);

class TrainStepper {
public:
  /// `comm`: the ranks sharing each step (each runs `accum` micro-batches);
  /// `deterministic`: micro-batch gradients are summed one by one, as a
  /// rank-order all-reduce sums ranks (an N-rank run is then bitwise one
  /// process's with N times the micro-batches).
  TrainStepper(Context &ctx, const ProgramInfo &program, TrainMemory &mem, uint64_t seed,
               int64_t accum, Comm &comm, bool deterministic);

  /// Forward and backward over `accum` micro-batches taken from `data`;
  /// returns the step's mean loss. Gradients are left for optimizerStep
  /// (or --dump-grads).
  double forwardBackward(int64_t step, TokenBatches &data);
  /// The update with learning rate `lr`; returns the gradient norm the
  /// program reports (before clipping).
  double optimizerStep(int64_t step, double lr);
  /// Whether the last optimizerStep skipped its update (fp16 overflow).
  bool skipped() const { return updateSkipped_; }
  /// fp16's dynamic loss scaling (disabled otherwise); the app restores
  /// and saves its state.
  LossScaler &scaler() { return scaler_; }
  /// --no-overlap: the gradient collectives wait for the optimizer step.
  void disableOverlap() { overlapAllowed_ = false; }
  /// Tokens per step over all ranks (B * T * accum * ranks).
  int64_t tokensPerStep() const;
  /// The last step's inputs as the program saw them ([accum, B, T]: masked
  /// tokens and their targets for a masked LM), for --dump-batch.
  const std::vector<int32_t> &tokens() const { return tokens_; }
  const std::vector<int32_t> &targets() const { return targets_; }
  int64_t seq() const { return program_.train->seq; }

private:
  Context &ctx_;
  const ProgramInfo &program_;
  TrainMemory &mem_;
  const Buffers &buf_; // mem_.buffers(): what the entries get
  uint64_t seed_;
  int64_t accum_;
  Comm &comm_;
  std::vector<int32_t> tokens_, targets_; // [accum, B*T]: this rank's micro-batches
  std::vector<int32_t> skipped_;          // other ranks' micro-batches, drawn and dropped
  std::vector<int32_t> fill_;             // writeInputs' constant inputs
  std::vector<char> sum_;                 // deterministic accumulation (accum > 1)
  LossScaler scaler_;
  bool updateSkipped_ = false;
  bool overlapped_ = false; // the last forwardBackward issued the gradient all-reduces
  bool overlapAllowed_ = true;
  void foldMicroBatch(int64_t m);
};

/// Mean loss over `maxBatches` batches of `data` in sequential order (0 =
/// the whole split once); windows past the split's end in the last batch
/// are ignored (targets -100), so each window counts once.
/// The batches are shared out over the ranks of `comm`; every rank returns
/// the same loss.
double evaluateLoss(Context &ctx, const ProgramInfo &program, TrainMemory &mem,
                    const TokenBatches &data, int64_t maxBatches, uint64_t seed, int64_t step,
                    int64_t *targetsCounted, Comm &comm);

} // namespace bmrt

#endif // BMRT_APP_TRAIN_STEP_H
