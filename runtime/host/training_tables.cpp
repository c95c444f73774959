//===- host/training_tables.cpp - The training contract's non-kernels -----===//
//
// What bmrt/program.h and training.h declare besides kernels: a rank's
// partition of the trainable group, the group's element type, the count of
// targets in a batch, and the learning-rate schedules (transformers'
// lr_lambdas transcribed, step for step). They read the program's tables and the app's host
// arrays only, so every backend's program links this same code (the cuda
// backend takes this file beside its device kernels; runtime/cuda).
//
//===----------------------------------------------------------------------===//
#include "bmrt/program.h"
#include "bmrt/training.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace bmrt {

// compiler/ZeroAuto.cpp sizes zero = auto's candidate plans with this same
// formula (the compiler does not link the runtime): change both together.
Partition partitionOf(const TrainInfo &train, int rank, int ranks) {
  if (ranks < 1 || rank < 0 || rank >= ranks)
    fail("partition of rank " + std::to_string(rank) + " of " + std::to_string(ranks));
  const int64_t elems = train.groupElems;
  const int64_t align = std::max<int64_t>(train.partitionAlign, 1);
  Partition p;
  if (train.zeroStage == 0 || ranks == 1) {
    p.begin = 0;
    p.end = p.size = p.optStride = p.total = p.gradElems = p.paramElems = elems;
    return p;
  }
  const int64_t share = (elems + ranks - 1) / ranks;
  p.size = (share + align - 1) / align * align;
  p.begin = std::min<int64_t>((int64_t)rank * p.size, elems);
  p.end = std::min<int64_t>(p.begin + p.size, elems);
  p.optStride = p.size;
  p.total = p.size * ranks;
  // zero = 2 and 3: the grads allocation is the partition alone; zero = 3:
  // the group's span of the params too.
  p.gradsFrom = train.zeroStage >= 2 ? p.begin : 0;
  p.gradElems = train.zeroStage >= 2 ? p.size : p.total;
  p.paramsFrom = train.zeroStage == 3 ? p.begin : 0;
  p.paramElems = train.zeroStage == 3 ? p.size : p.total;
  return p;
}

DType groupDType(const ProgramInfo &program) {
  for (int i = 0; i < program.numParams; ++i)
    if (program.params[i].gradOffset >= 0)
      return program.params[i].dtype;
  return DType::F32;
}

int64_t count_targets(const int32_t *targets, int64_t rows, int64_t ignoreIndex) {
  int64_t count = 0;
  for (int64_t r = 0; r < rows; ++r)
    count += targets[r] != ignoreIndex;
  return count;
}

namespace {
void checkSchedule(const char *what, int64_t step, int64_t warmupSteps,
                   int64_t totalSteps) {
  if (step < 0 || warmupSteps < 0 || totalSteps < 0)
    fail(std::string(what) + ": negative step, warmup or total (step " +
         std::to_string(step) + ", warmup " + std::to_string(warmupSteps) + ", total " +
         std::to_string(totalSteps) + ")");
}
double warmupFraction(int64_t step, int64_t warmupSteps) {
  return double(step) / double(warmupSteps > 1 ? warmupSteps : 1);
}
} // namespace

double lr_constant(int64_t step, int64_t warmupSteps) {
  checkSchedule("lr_constant", step, warmupSteps, 0);
  return step < warmupSteps ? warmupFraction(step, warmupSteps) : 1.0;
}

double lr_linear(int64_t step, int64_t warmupSteps, int64_t totalSteps) {
  checkSchedule("lr_linear", step, warmupSteps, totalSteps);
  if (step < warmupSteps)
    return warmupFraction(step, warmupSteps);
  const int64_t decaySteps = totalSteps - warmupSteps;
  const double f =
      double(totalSteps - step) / double(decaySteps > 1 ? decaySteps : 1);
  return f > 0.0 ? f : 0.0;
}

double lr_cosine(int64_t step, int64_t warmupSteps, int64_t totalSteps, double numCycles) {
  checkSchedule("lr_cosine", step, warmupSteps, totalSteps);
  if (step < warmupSteps)
    return warmupFraction(step, warmupSteps);
  const int64_t decaySteps = totalSteps - warmupSteps;
  const double progress =
      double(step - warmupSteps) / double(decaySteps > 1 ? decaySteps : 1);
  const double f = 0.5 * (1.0 + std::cos(M_PI * numCycles * 2.0 * progress));
  return f > 0.0 ? f : 0.0;
}

double lr_multiplier(LrSchedule kind, int64_t step, int64_t warmupSteps,
                     int64_t totalSteps, double numCycles, double minRate) {
  if (!(minRate >= 0.0 && minRate <= 1.0))
    fail("lr_multiplier: the schedule's min_lr is " + std::to_string(minRate) +
         " times the learning rate; it must be between 0 and the learning rate");
  auto floored = [&](double m) {
    return step < warmupSteps ? m : minRate + (1.0 - minRate) * m;
  };
  switch (kind) {
  case LrSchedule::Constant:
    return lr_constant(step, warmupSteps);
  case LrSchedule::Linear:
    return floored(lr_linear(step, warmupSteps, totalSteps));
  case LrSchedule::Cosine:
    return floored(lr_cosine(step, warmupSteps, totalSteps, numCycles));
  }
  fail("lr_multiplier: invalid schedule kind " + std::to_string((int)kind));
}

} // namespace bmrt
