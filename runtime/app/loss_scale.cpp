//===- app/loss_scale.cpp - Dynamic loss scaling for precision = fp16 -----===//
//
// See loss_scale.h. Which gradients are checked and unscaled depends on
// where the program sums them over the ranks:
//   - zero = 0 and 1 sum them in the optimizer step, after this: the rank's
//     own gradients (the whole flat trainable group). An inf/NaN in one
//     rank's sum makes the reduced sum inf/NaN, and dividing by a power of
//     two before summing gives the bits of dividing after.
//   - zero = 2 and 3 sum them during the backward (each unit's
//     reduce-scatter into the partition): the rank's partition of the
//     summed gradients, the very values one process checks. A sum that
//     overflows although no rank's part did is caught too.
// Either way the ranks agree through Comm::max, so every world size and
// stage takes the same decisions and computes the same values.
//
//===----------------------------------------------------------------------===//
#include "app/loss_scale.h"
#include "bmrt/kernels_backward.h"
#include "bmrt/training.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace bmrt {

namespace {

bool powerOfTwo(double x) {
  int e;
  return std::isfinite(x) && x > 0 && std::frexp(x, &e) == 0.5;
}

} // namespace

LossScaler::LossScaler(double initial, int64_t window) : scale_(initial), window_(window) {
  if (!(initial >= 1) || !powerOfTwo(initial))
    fail("loss scale " + std::to_string(initial) + " is not a power of two >= 1");
  if (window < 1)
    fail("loss scale window " + std::to_string(window) + " is not >= 1");
}

void LossScaler::restore(double scale, int64_t goodSteps, int64_t skippedSteps) {
  if (!(scale >= 1) || !powerOfTwo(scale) || goodSteps < 0 || skippedSteps < 0)
    fail("the resumed loss scale state (scale " + std::to_string(scale) + ", good steps " +
         std::to_string(goodSteps) + ", skipped " + std::to_string(skippedSteps) +
         ") is invalid");
  scale_ = scale;
  good_ = goodSteps;
  skipped_ = skippedSteps;
}

bool LossScaler::unscale(Context &ctx, const Buffers &buf, const TrainInfo &train, Comm &comm) {
  if (!enabled())
    return true;
  // Through the kernel API, so the gradients may be in host or device
  // memory (the backend's any_nonfinite, fill_zero and scale_inplace): the
  // decisions are this function's on every backend.
  // zero = 2 and 3: grads holds the partition alone (group element e at
  // grads[e - part.gradsFrom]), already summed over the ranks.
  const bool summed = train.zeroStage >= 2;
  float *g = (float *)buf.grads + (summed ? buf.part.begin - buf.part.gradsFrom : 0);
  const int64_t n = summed ? buf.part.end - buf.part.begin : train.groupElems;
  const bool bad = any_nonfinite<float>(ctx, g, n);
  if (comm.max(bad ? 1.0 : 0.0) > 0) {
    fill_zero<float>(ctx, (float *)buf.grads,
                     summed ? buf.part.gradElems : train.gradBytes / (int64_t)sizeof(float));
    scale_ = std::max(1.0, scale_ / 2);
    good_ = 0;
    ++skipped_;
    return false;
  }
  scale_inplace<float>(ctx, g, n, 1.0 / scale_);
  if (++good_ >= window_) {
    scale_ *= 2;
    good_ = 0;
  }
  return true;
}

LossScaler lossScalerFor(const TrainInfo &train, double initialOverride) {
  if (!train.precision || std::string(train.precision) != "fp16")
    return LossScaler();
  return LossScaler(initialOverride > 0 ? initialOverride : train.lossScale,
                    train.lossScaleWindow);
}

} // namespace bmrt
