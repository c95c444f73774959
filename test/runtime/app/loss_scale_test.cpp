//===- loss_scale_test.cpp - fp16 dynamic loss scaling (app/loss_scale.h) -===//
//
// The rule on a hand-made gradient buffer, one process: overflow zeroes the
// gradients and halves the scale (not below 1), a good step divides them
// by the scale exactly and counts towards the window, after which the scale
// doubles; skipped steps do not count as optimizer steps; bad settings and
// bad resumed states fail loudly. (Several ranks agreeing and resume are
// end-to-end tests: test/e2e/check_mixed.py fp16.)
//
//===----------------------------------------------------------------------===//
#include "app/loss_scale.h"
#include "bmrt/training.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

using namespace bmrt;

namespace {

struct Fixture {
  std::vector<float> grads = std::vector<float>(8, 0.f);
  TrainInfo train{};
  Buffers buf;
  Context ctx;
  std::unique_ptr<Comm> comm = openComm(CommOptions());
  Fixture() {
    train.groupElems = (int64_t)grads.size();
    train.gradBytes = (int64_t)(grads.size() * sizeof(float));
    train.precision = "fp16";
    buf.grads = grads.data();
    ctx.numThreads = 1;
    ctx.comm = comm.get();
  }
};

} // namespace

TEST(LossScale, GoodStepsUnscaleExactlyAndDoubleAfterTheWindow) {
  Fixture f;
  LossScaler s(1024, 2);
  for (size_t i = 0; i < f.grads.size(); ++i)
    f.grads[i] = 1024.f * (float)(i + 1) * 0.1f;
  ASSERT_TRUE(s.unscale(f.ctx, f.buf, f.train, *f.comm));
  for (size_t i = 0; i < f.grads.size(); ++i)
    EXPECT_EQ(f.grads[i], (1024.f * (float)(i + 1) * 0.1f) / 1024.f);
  EXPECT_EQ(s.scale(), 1024);
  EXPECT_EQ(s.goodSteps(), 1);
  ASSERT_TRUE(s.unscale(f.ctx, f.buf, f.train, *f.comm));
  EXPECT_EQ(s.scale(), 2048); // the second good step in a row doubles
  EXPECT_EQ(s.goodSteps(), 0);
  EXPECT_EQ(s.stepFor(2), 2);
}

TEST(LossScale, OverflowSkipsZeroesAndHalvesNotBelowOne) {
  Fixture f;
  LossScaler s(2, 1000);
  f.grads[3] = std::numeric_limits<float>::infinity();
  f.grads[1] = 5;
  EXPECT_FALSE(s.unscale(f.ctx, f.buf, f.train, *f.comm));
  for (float g : f.grads)
    EXPECT_EQ(g, 0.f);
  EXPECT_EQ(s.scale(), 1);
  f.grads[0] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_FALSE(s.unscale(f.ctx, f.buf, f.train, *f.comm));
  EXPECT_EQ(s.scale(), 1); // never below 1
  EXPECT_EQ(s.skippedSteps(), 2);
  EXPECT_EQ(s.stepFor(5), 3); // AdamW counts updates done, not skipped steps
}

TEST(LossScale, DisabledForOtherPrecisions) {
  Fixture f;
  f.train.precision = "bf16";
  LossScaler s = lossScalerFor(f.train, 0);
  EXPECT_FALSE(s.enabled());
  EXPECT_EQ(s.scale(), 1);
  f.grads[0] = std::numeric_limits<float>::infinity();
  EXPECT_TRUE(s.unscale(f.ctx, f.buf, f.train, *f.comm)); // nothing checked
  f.train.precision = "fp16";
  f.train.lossScale = 256;
  f.train.lossScaleWindow = 7;
  LossScaler on = lossScalerFor(f.train, 0);
  EXPECT_TRUE(on.enabled());
  EXPECT_EQ(on.scale(), 256);
  EXPECT_EQ(on.window(), 7);
  EXPECT_EQ(lossScalerFor(f.train, 4096).scale(), 4096); // --loss-scale
}

TEST(LossScale, BadSettingsAndStatesFail) {
  EXPECT_THROW(LossScaler(1000, 10), Error);   // not a power of two
  EXPECT_THROW(LossScaler(0.5, 10), Error);    // below 1
  EXPECT_THROW(LossScaler(1024, 0), Error);    // no window
  LossScaler s(1024, 10);
  EXPECT_THROW(s.restore(3, 0, 0), Error);
  EXPECT_THROW(s.restore(1024, -1, 0), Error);
  s.restore(64, 3, 5);
  EXPECT_EQ(s.scale(), 64);
  EXPECT_EQ(s.goodSteps(), 3);
  EXPECT_EQ(s.skippedSteps(), 5);
}

// zero = 2 and 3: the grads allocation holds the rank's partition of the
// gradients already summed over the ranks (element e at grads[e -
// gradsFrom]); the scaler checks and unscales exactly the partition's
// elements. Rank 1 of 2 over a group of 10 (partitions of 8): elements
// [8, 10) at grads[0, 2); grads[2, 8) is padding past the group's end.
TEST(LossScale, ZeroTwoChecksAndUnscalesThePartitionOfTheSums) {
  Fixture f;
  f.train.groupElems = 10;
  f.train.gradBytes = 40;
  f.train.zeroStage = 2;
  f.train.partitionAlign = 4;
  f.buf.part = partitionOf(f.train, 1, 2);
  ASSERT_EQ(f.buf.part.begin, 8);
  ASSERT_EQ(f.buf.part.end, 10);
  ASSERT_EQ(f.buf.part.gradElems, 8);
  LossScaler s(4, 1000);
  f.grads.assign(8, 0.f);
  f.grads[0] = 6;
  f.grads[1] = -10;
  f.grads[5] = std::numeric_limits<float>::infinity(); // padding: not a gradient
  ASSERT_TRUE(s.unscale(f.ctx, f.buf, f.train, *f.comm));
  EXPECT_EQ(f.grads[0], 1.5f);
  EXPECT_EQ(f.grads[1], -2.5f);
  EXPECT_TRUE(std::isinf(f.grads[5])); // untouched
  f.grads[5] = 0;
  f.grads[1] = std::numeric_limits<float>::quiet_NaN(); // an overflowed sum
  EXPECT_FALSE(s.unscale(f.ctx, f.buf, f.train, *f.comm));
  for (float g : f.grads) // the whole partition zeroed, not the group's 10
    EXPECT_EQ(g, 0.f);
  EXPECT_EQ(s.scale(), 2);
}

// The scaler's overflow check through the kernel API (training.h's
// any_nonfinite; the cuda backend's is a device reduction tested against
// this one on a GPU): one bad element anywhere, at any thread count.
TEST(LossScale, AnyNonFiniteFindsOneBadElement) {
  Context ctx;
  std::vector<float> x((size_t)1 << 17, 1.5f); // above the parallel threshold
  for (int threads : {1, 4}) {
    ctx.numThreads = threads;
    EXPECT_FALSE(any_nonfinite<float>(ctx, x.data(), (int64_t)x.size()));
    for (size_t at : {(size_t)0, x.size() / 2 + 3, x.size() - 1}) {
      x[at] = -std::numeric_limits<float>::infinity();
      EXPECT_TRUE(any_nonfinite<float>(ctx, x.data(), (int64_t)x.size())) << at;
      x[at] = std::numeric_limits<float>::quiet_NaN();
      EXPECT_TRUE(any_nonfinite<float>(ctx, x.data(), (int64_t)x.size())) << at;
      x[at] = 1.5f;
    }
  }
  EXPECT_FALSE(any_nonfinite<float>(ctx, x.data(), 0));
  EXPECT_THROW(any_nonfinite<float>(ctx, x.data(), -1), Error);
}
