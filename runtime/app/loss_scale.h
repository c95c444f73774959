//===- app/loss_scale.h - Dynamic loss scaling for precision = fp16 -------===//
//
// fp16 has 5 exponent bits: gradients of a mean loss (~1e-6 and below)
// flush to zero when a GEMM rounds them to fp16. So the loss is scaled by S
// (the backward's dlogits are multiplied by S: StepArgs::dlossScale), the
// gradients come out S times too large, and before the update:
//   - every rank checks its gradients for inf/NaN (an fp16 GEMM input that
//     overflowed): its own under zero = 0 and 1, its partition of the
//     summed ones under zero = 2 and 3; the ranks agree through Comm::max;
//   - overflow anywhere: the update is skipped on every rank, the gradients
//     are zeroed and S halves (not below 1);
//   - else the gradients are divided by S (S is a power of two: exact) and
//     the update runs; after `window` updates in a row without overflow, S
//     doubles.
// This is torch.cuda.amp.GradScaler's rule (growth 2, backoff 1/2,
// growth_interval = window). A skipped update is not an optimizer step:
// AdamW's bias correction counts updates done (stepFor), as torch's
// state['step'] does. Scale, good-step count and skipped count are saved in
// trainer_state.json and restored on --resume.
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_APP_LOSS_SCALE_H
#define BMRT_APP_LOSS_SCALE_H

#include "bmrt/comm.h"
#include "bmrt/program.h"

#include <cstdint>

namespace bmrt {

class LossScaler {
public:
  /// Disabled: scale 1, nothing is checked, nothing is skipped.
  LossScaler() = default;
  /// `initial` a power of two >= 1, `window` >= 1 (else bmrt::fail).
  LossScaler(double initial, int64_t window);

  bool enabled() const { return window_ > 0; }
  double scale() const { return scale_; }
  int64_t goodSteps() const { return good_; }
  int64_t skippedSteps() const { return skipped_; }
  int64_t window() const { return window_; }
  /// The state of a resumed run (trainer_state.json).
  void restore(double scale, int64_t goodSteps, int64_t skippedSteps);

  /// The optimizer step number of global step `step` (1-based): updates
  /// done including this one, skipped steps not counted.
  int64_t stepFor(int64_t step) const { return step - skipped_; }

  /// After the step's backward, before the update (see above). Returns
  /// false when the update must be skipped (the gradients are then zero).
  bool unscale(Context &ctx, const Buffers &buf, const TrainInfo &train, Comm &comm);

private:
  double scale_ = 1;
  int64_t window_ = 0, good_ = 0, skipped_ = 0;
};

/// The scaler a program asks for: enabled for precision = fp16, with the
/// job's loss_scale (or `initialOverride` when > 0) and loss_scale_window.
LossScaler lossScalerFor(const TrainInfo &train, double initialOverride);

} // namespace bmrt

#endif // BMRT_APP_LOSS_SCALE_H
