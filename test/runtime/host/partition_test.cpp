// bmrt::partitionOf and the partition-aware optimizer step
// (runtime/host/partition.cpp): partitions tile the trainable group exactly,
// start on chunk boundaries, and the gradient norm and AdamW update over
// partitions equal one call over the whole group, bit for bit.
#include "bmrt/comm.h"
#include "bmrt/training.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

using namespace bmrt;

namespace {

TrainInfo groupOf(int64_t elems, int64_t align, int zero) {
  TrainInfo t{};
  t.groupElems = elems;
  t.partitionAlign = align;
  t.zeroStage = zero;
  return t;
}

TEST(Partition, ZeroStageZeroIsTheWholeGroup) {
  TrainInfo t = groupOf(1000, 64, 0);
  for (int r = 0; r < 4; ++r) {
    Partition p = partitionOf(t, r, 4);
    EXPECT_EQ(p.begin, 0);
    EXPECT_EQ(p.end, 1000);
    EXPECT_EQ(p.optStride, 1000);
    EXPECT_EQ(p.total, 1000);
  }
}

TEST(Partition, TilesTheGroupOnChunkBoundaries) {
  for (int64_t elems : {1, 63, 64, 65, 1000, 136960, 394240})
    for (int ranks : {1, 2, 3, 4, 7}) {
      TrainInfo t = groupOf(elems, 64, 1);
      int64_t covered = 0;
      for (int r = 0; r < ranks; ++r) {
        Partition p = partitionOf(t, r, ranks);
        EXPECT_EQ(p.begin, covered) << elems << " elements, rank " << r << " of " << ranks;
        EXPECT_TRUE(p.begin == p.end || p.begin % 64 == 0);
        EXPECT_LE(p.end - p.begin, p.size);
        EXPECT_EQ(p.total, p.size * ranks);
        EXPECT_GE(p.total, elems);
        covered = p.end;
      }
      EXPECT_EQ(covered, elems);
    }
}

TEST(Partition, RejectsABadRank) {
  TrainInfo t = groupOf(100, 16, 1);
  EXPECT_THROW(partitionOf(t, 2, 2), Error);
  EXPECT_THROW(partitionOf(t, 0, 0), Error);
}

// The norm of the whole group against a plain sum; the AdamW update per
// partition (each rank's optimizer state only) against one update of the
// whole group, bit for bit. The partitioned norm's all-reduce is covered
// by e2e.dist.
TEST(Partition, NormAndUpdateOverPartitionsEqualTheWholeGroup) {
  const int64_t elems = 1000, chunk = 64;
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0.f, 1.f);
  std::vector<float> params(elems), grads(elems);
  for (int64_t i = 0; i < elems; ++i) {
    params[i] = normal(rng);
    grads[i] = normal(rng);
  }
  Context ctx;
  ctx.numThreads = 2;

  TrainInfo whole = groupOf(elems, chunk, 0);
  std::vector<float> p0 = params, g0 = grads, opt0(2 * elems, 0.f);
  Buffers b0;
  b0.params = p0.data();
  b0.grads = g0.data();
  b0.optState = opt0.data();
  b0.part = partitionOf(whole, 0, 1);
  const double norm = grad_norm_part<float>(ctx, b0, elems, chunk);
  double sq = 0;
  for (float g : grads)
    sq += double(g) * double(g);
  EXPECT_NEAR(norm, std::sqrt(sq), 1e-9 * std::sqrt(sq));
  adamw_update_part<float>(ctx, b0, 0, 0, 600, 1e-2, 0.9, 0.95, 1e-8, 0.1, 1);
  adamw_update_part<float>(ctx, b0, 0, 600, 400, 1e-2, 0.9, 0.95, 1e-8, 0.0, 1);

  const int ranks = 3;
  TrainInfo zero1 = groupOf(elems, chunk, 1);
  std::vector<float> p1 = params;
  for (int r = 0; r < ranks; ++r) {
    Partition part = partitionOf(zero1, r, ranks);
    std::vector<float> g1(part.total, 0.f), opt1(2 * part.optStride, 0.f);
    std::copy(grads.begin() + part.begin, grads.begin() + part.end, g1.begin() + part.begin);
    Buffers b1;
    b1.params = p1.data();
    b1.grads = g1.data();
    b1.optState = opt1.data();
    b1.part = part;
    adamw_update_part<float>(ctx, b1, 0, 0, 600, 1e-2, 0.9, 0.95, 1e-8, 0.1, 1);
    adamw_update_part<float>(ctx, b1, 0, 600, 400, 1e-2, 0.9, 0.95, 1e-8, 0.0, 1);
    for (int64_t e = part.begin; e < part.end; ++e) {
      EXPECT_EQ(opt1[e - part.begin], opt0[e]) << "exp_avg of element " << e;
      EXPECT_EQ(opt1[part.optStride + e - part.begin], opt0[elems + e]) << "exp_avg_sq " << e;
    }
  }
  for (int64_t e = 0; e < elems; ++e)
    EXPECT_EQ(p1[e], p0[e]) << "param " << e;
}

// A partition smaller than the group needs the comm for the norm.
TEST(Partition, PartitionedNormNeedsAComm) {
  TrainInfo t = groupOf(200, 64, 1);
  std::vector<float> g(256, 1.f);
  Buffers b;
  b.grads = g.data();
  b.part = partitionOf(t, 0, 2);
  Context ctx;
  EXPECT_THROW(grad_norm_part<float>(ctx, b, 200, 64), Error);
  auto single = makeSingleComm(CommOptions{});
  ctx.comm = single.get();
  EXPECT_DOUBLE_EQ(grad_norm_part<float>(ctx, b, 200, 64), std::sqrt(128.0));
}

} // namespace
