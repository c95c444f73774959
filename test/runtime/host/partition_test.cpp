// bmrt::partitionOf and the partition-aware optimizer step
// (runtime/host/partition.cpp): partitions tile the trainable group exactly,
// start on chunk boundaries, and the gradient norm and AdamW update over
// partitions equal one call over the whole group, bit for bit.
#include "bmrt/comm.h"
#include "bmrt/training.h"
#include "bmrt/zero2_ahead.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
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

// zero = 2: the grads allocation is the partition; group element e at
// grads[e - gradsFrom]. One rank: the whole group, as for the other stages.
TEST(Partition, ZeroStageTwoHoldsOnlyThePartitionOfGradients) {
  TrainInfo t = groupOf(180, 64, 2);
  Partition p = partitionOf(t, 1, 3);
  EXPECT_EQ(p.begin, 64);
  EXPECT_EQ(p.end, 128);
  EXPECT_EQ(p.total, 192);
  EXPECT_EQ(p.gradsFrom, 64);
  EXPECT_EQ(p.gradElems, 64);
  Partition last = partitionOf(t, 2, 3);
  EXPECT_EQ(last.gradsFrom, 128);
  EXPECT_EQ(last.end, 180);
  Partition one = partitionOf(t, 0, 1);
  EXPECT_EQ(one.gradsFrom, 0);
  EXPECT_EQ(one.gradElems, 180);
  Partition z1 = partitionOf(groupOf(180, 64, 1), 1, 3);
  EXPECT_EQ(z1.gradsFrom, 0);
  EXPECT_EQ(z1.gradElems, 192);
}

// A communicator of 3 ranks (this one rank 1) that records the pieces of
// reduceScatterv and sums nothing: what reduce_scatter_unit asks for.
struct RecordingComm final : Comm {
  std::vector<int64_t> counts, gatherCounts;
  void *gathered = nullptr;
  int rank() const override { return 1; }
  int size() const override { return 3; }
  const char *backend() const override { return "recording"; }
  bool deterministic() const override { return true; }
  CommHandle allReduce(void *, int64_t, DType) override { return {}; }
  CommHandle reduceScatter(void *, int64_t, DType) override { return {}; }
  CommHandle allGather(void *, int64_t, DType) override { return {}; }
  CommHandle reduceScatterv(void *, const int64_t *c, DType) override {
    counts.assign(c, c + 3);
    return {};
  }
  CommHandle allGatherv(void *buf, const int64_t *c, DType) override {
    gathered = buf;
    gatherCounts.assign(c, c + 3);
    return {};
  }
  CommHandle broadcast(void *, int64_t, DType, int) override { return {}; }
  void wait(CommHandle) override {}
  void barrier() override {}
};

// Unit [100, 170) of a 180-element group on 3 ranks (partitions of 64):
// rank 0's piece is empty, rank 1 gets [100, 128), rank 2 [128, 170). Rank
// 1 adds its piece into its partition (grads[36..64)) and zeroes the
// staging; the rest of its gradients stay as they were.
TEST(Partition, UnitPiecesAndTheAddIntoThePartition) {
  TrainInfo t = groupOf(180, 64, 2);
  RecordingComm comm;
  Context ctx;
  ctx.comm = &comm;
  std::vector<float> grads(64), staging(80, 0.f);
  for (int i = 0; i < 64; ++i)
    grads[(size_t)i] = (float)i;
  for (int i = 0; i < 70; ++i)
    staging[(size_t)(10 + i)] = 1000.f + (float)i; // the unit staged at element 10
  Buffers b;
  b.grads = grads.data();
  b.gradStaging = staging.data();
  b.part = partitionOf(t, 1, 3);
  reduce_scatter_unit<float>(ctx, b, 10, 100, 70);
  EXPECT_EQ(comm.counts, (std::vector<int64_t>{0, 28, 42}));
  add_unit_grads<float>(ctx, b, 10, 100, 70);
  for (int i = 0; i < 64; ++i) {
    const float want = i >= 36 ? (float)i + 1000.f + (float)(i - 36) : (float)i;
    EXPECT_EQ(grads[(size_t)i], want) << "grads[" << i << "]";
  }
  for (float x : staging)
    EXPECT_EQ(x, 0.f);
  // Without the staging allocation: a clear error, not a write to null.
  b.gradStaging = nullptr;
  try {
    add_unit_grads<float>(ctx, b, 10, 100, 70);
    FAIL() << "add_unit_grads must fail without Buffers::gradStaging";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("needs Buffers::gradStaging"), std::string::npos)
        << e.what();
  }
}

// The optimizer step reads a zero = 2 partition at grads[e - gradsFrom]:
// the same update and norm as ZeRO-1's grads of the whole span.
TEST(Partition, ZeroStageTwoUpdatesFromThePartitionOfGradients) {
  const int64_t elems = 180;
  std::vector<float> whole(192), params1(192), params2(192);
  std::mt19937 rng(7);
  std::normal_distribution<float> dist(0.f, 1.f);
  for (auto &x : whole)
    x = dist(rng);
  for (int64_t e = 0; e < 192; ++e)
    params1[(size_t)e] = params2[(size_t)e] = (float)e * 0.01f;
  Buffers b1, b2;
  b1.part = partitionOf(groupOf(elems, 64, 1), 1, 3);
  b2.part = partitionOf(groupOf(elems, 64, 2), 1, 3);
  std::vector<float> part(whole.begin() + 64, whole.begin() + 128);
  std::vector<float> opt1(2 * 64, 0.f), opt2(2 * 64, 0.f);
  b1.grads = whole.data();
  b2.grads = part.data();
  b1.params = params1.data();
  b2.params = params2.data();
  b1.optState = opt1.data();
  b2.optState = opt2.data();
  Context ctx;
  adamw_update_part<float>(ctx, b1, 0, 0, elems, 1e-2, 0.9, 0.95, 1e-8, 0.1, 1);
  adamw_update_part<float>(ctx, b2, 0, 0, elems, 1e-2, 0.9, 0.95, 1e-8, 0.1, 1);
  EXPECT_EQ(params1, params2);
  EXPECT_EQ(opt1, opt2);
  scale_part<float>(ctx, b2, 0.5);
  for (int i = 0; i < 64; ++i)
    EXPECT_EQ(part[(size_t)i], whole[(size_t)(64 + i)] * 0.5f);
}

} // namespace

// zero = 3: the params allocation's group span is the partition too
// (paramsFrom = begin); one rank keeps the whole group.
TEST(Partition, ZeroStageThreeHoldsOnlyThePartitionOfParams) {
  TrainInfo t = groupOf(180, 64, 3);
  Partition p = partitionOf(t, 1, 3);
  EXPECT_EQ(p.paramsFrom, 64);
  EXPECT_EQ(p.paramElems, 64);
  EXPECT_EQ(p.gradsFrom, 64);
  EXPECT_EQ(p.gradElems, 64);
  Partition one = partitionOf(t, 0, 1);
  EXPECT_EQ(one.paramsFrom, 0);
  EXPECT_EQ(one.paramElems, 180);
  Partition z2 = partitionOf(groupOf(180, 64, 2), 1, 3);
  EXPECT_EQ(z2.paramsFrom, 0);
  EXPECT_EQ(z2.paramElems, 192);
}

// gather_unit of unit [100, 170) on rank 1 of 3 (partitions of 64): rank
// 1 copies its piece, group elements [100, 128) = params[36..64) after the
// frozen 16 bytes, to staging elements 10 + [0, 28), and asks for pieces
// {0, 28, 42} gathered in place at staging element 10.
TEST(Partition, GatherUnitCopiesThePieceAndGathersInPlace) {
  TrainInfo t = groupOf(180, 64, 3);
  RecordingComm comm;
  Context ctx;
  ctx.comm = &comm;
  std::vector<float> params(4 + 64), staging(80, -1.f);
  for (int i = 0; i < 68; ++i)
    params[(size_t)i] = (float)i; // 4 frozen floats (16 bytes), then the partition
  Buffers b;
  b.params = params.data();
  b.paramStaging = staging.data();
  b.part = partitionOf(t, 1, 3);
  gather_unit<float>(ctx, b, 16, 10, 100, 70);
  EXPECT_EQ(comm.gatherCounts, (std::vector<int64_t>{0, 28, 42}));
  EXPECT_EQ(comm.gathered, (void *)(staging.data() + 10));
  for (int i = 0; i < 80; ++i) {
    const float want = i >= 10 && i < 38 ? (float)(4 + 36 + (i - 10)) : -1.f;
    EXPECT_EQ(staging[(size_t)i], want) << "staging[" << i << "]";
  }
  b.paramStaging = nullptr;
  try {
    gather_unit<float>(ctx, b, 16, 10, 100, 70);
    FAIL() << "gather_unit must fail without Buffers::paramStaging";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("needs Buffers::paramStaging"), std::string::npos)
        << e.what();
  }
}

// The optimizer step writes a zero = 3 partition at params[e - paramsFrom]:
// the same update as ZeRO-2's params of the whole span.
TEST(Partition, ZeroStageThreeUpdatesThePartitionOfParams) {
  const int64_t elems = 180;
  std::vector<float> grads(64), whole(192), part(64);
  std::mt19937 rng(9);
  std::normal_distribution<float> dist(0.f, 1.f);
  for (auto &x : grads)
    x = dist(rng);
  for (int64_t e = 0; e < 192; ++e)
    whole[(size_t)e] = (float)e * 0.01f;
  std::copy(whole.begin() + 64, whole.begin() + 128, part.begin());
  std::vector<float> g2 = grads, g3 = grads, opt2(2 * 64, 0.f), opt3(2 * 64, 0.f);
  Buffers b2, b3;
  b2.part = partitionOf(groupOf(elems, 64, 2), 1, 3);
  b3.part = partitionOf(groupOf(elems, 64, 3), 1, 3);
  b2.grads = g2.data();
  b3.grads = g3.data();
  b2.params = whole.data();
  b3.params = part.data();
  b2.optState = opt2.data();
  b3.optState = opt3.data();
  Context ctx;
  adamw_update_part<float>(ctx, b2, 0, 0, elems, 1e-2, 0.9, 0.95, 1e-8, 0.1, 1);
  adamw_update_part<float>(ctx, b3, 0, 0, elems, 1e-2, 0.9, 0.95, 1e-8, 0.1, 1);
  for (int i = 0; i < 64; ++i)
    EXPECT_EQ(part[(size_t)i], whole[(size_t)(64 + i)]) << "param " << 64 + i;
  EXPECT_EQ(opt2, opt3);
}

// The look-ahead's two slots: layer l's unit goes to stagingAt + (l % 2) *
// slotStride. prefetch_unit of layer 1 issues its gather into slot 1 and
// holds it; wait_unit of layer 1 takes it (no second gather); wait_unit of
// layer 2 with nothing held gathers now, into slot 0. A prefetch past the
// last layer does nothing.
TEST(Partition, LayerSlotsAlternateAndThePrefetchIsTakenByTheWait) {
  TrainInfo t = groupOf(180, 64, 3);
  struct CountingComm final : Comm {
    std::vector<void *> gathers;
    int waits = 0;
    int rank() const override { return 0; }
    int size() const override { return 1; }
    const char *backend() const override { return "counting"; }
    bool deterministic() const override { return true; }
    CommHandle allReduce(void *, int64_t, DType) override { return {}; }
    CommHandle reduceScatter(void *, int64_t, DType) override { return {}; }
    CommHandle allGather(void *, int64_t, DType) override { return {}; }
    CommHandle allGatherv(void *buf, const int64_t *, DType) override {
      gathers.push_back(buf);
      return {(int64_t)gathers.size()};
    }
    CommHandle broadcast(void *, int64_t, DType, int) override { return {}; }
    void wait(CommHandle) override { ++waits; }
    void barrier() override {}
  } comm;
  Context ctx;
  ctx.comm = &comm;
  std::vector<float> params(180, 1.f), staging(100, 0.f);
  Buffers b;
  b.params = params.data();
  b.paramStaging = staging.data();
  b.part = partitionOf(t, 0, 1);
  // Units of 20 elements from element 60, staged at element 10, slots 30 apart.
  prefetch_unit<float>(ctx, b, 0, 10, 30, 80, 20, 1, 3);
  ASSERT_EQ(comm.gathers.size(), 1u);
  EXPECT_EQ(comm.gathers[0], (void *)(staging.data() + 40));
  wait_unit<float>(ctx, b, 0, 10, 30, 80, 20, 1);
  EXPECT_EQ(comm.gathers.size(), 1u) << "the held gather is taken, not issued again";
  EXPECT_EQ(comm.waits, 1);
  wait_unit<float>(ctx, b, 0, 10, 30, 100, 20, 2);
  ASSERT_EQ(comm.gathers.size(), 2u);
  EXPECT_EQ(comm.gathers[1], (void *)(staging.data() + 10));
  prefetch_unit<float>(ctx, b, 0, 10, 30, 120, 20, 3, 3); // past the last layer
  prefetch_unit<float>(ctx, b, 0, 10, 30, 40, 20, -1, 3); // before the first
  EXPECT_EQ(comm.gathers.size(), 2u);
  // A held gather of another layer than the one waited for: a loud failure.
  prefetch_unit<float>(ctx, b, 0, 10, 30, 80, 20, 1, 3);
  try {
    wait_unit<float>(ctx, b, 0, 10, 30, 60, 20, 0);
    FAIL() << "waiting for layer 0 with layer 1's gather held must fail";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("is for 1, not 0"), std::string::npos) << e.what();
  }
}

// ZeRO-2's gradient slots (bmrt/zero2_ahead.h): layer l's reduce-scatter is
// issued from slot l % 2 (stagingAt + (l % 2) * slotStride) and, ahead,
// held: the partition is unchanged until wait_unit_grads of that layer
// takes it, waits, adds the piece and zeroes the slot. A wait with nothing
// held does nothing; not ahead (--no-overlap), the add happens at once; a
// held reduce-scatter of another layer than the one waited for fails.
TEST(Partition, GradientSlotsAlternateAndTheHeldReduceScatterIsFinishedByItsWait) {
  TrainInfo t = groupOf(180, 64, 2);
  struct CountingComm final : Comm {
    std::vector<void *> scatters;
    int waits = 0;
    int rank() const override { return 0; }
    int size() const override { return 1; }
    const char *backend() const override { return "counting"; }
    bool deterministic() const override { return true; }
    CommHandle allReduce(void *, int64_t, DType) override { return {}; }
    CommHandle reduceScatter(void *, int64_t, DType) override { return {}; }
    CommHandle allGather(void *, int64_t, DType) override { return {}; }
    CommHandle reduceScatterv(void *buf, const int64_t *, DType) override {
      scatters.push_back(buf);
      return {(int64_t)scatters.size()};
    }
    CommHandle broadcast(void *, int64_t, DType, int) override { return {}; }
    void wait(CommHandle) override { ++waits; }
    void barrier() override {}
  } comm;
  Context ctx;
  ctx.comm = &comm;
  std::vector<float> grads(180, 0.f), staging(100, 0.f);
  Buffers b;
  b.grads = grads.data();
  b.gradStaging = staging.data();
  b.part = partitionOf(t, 0, 1);
  // Units of 20 elements from element 60 (layer l at 60 + 20 l), staged at
  // element 10, slots 30 apart: layer 1 in slot 1 (element 40).
  for (int i = 0; i < 20; ++i)
    staging[(size_t)(40 + i)] = 1.f + (float)i;
  wait_unit_grads<float>(ctx, b, 10, 30, 120, 20, 3); // nothing held in slot 1 yet
  EXPECT_EQ(comm.waits, 0);
  reduce_scatter_ahead<float>(ctx, b, 10, 30, 80, 20, 1, /*ahead=*/true);
  ASSERT_EQ(comm.scatters.size(), 1u);
  EXPECT_EQ(comm.scatters[0], (void *)(staging.data() + 40));
  EXPECT_EQ(comm.waits, 0) << "held, not waited for";
  EXPECT_EQ(grads[80], 0.f) << "the partition is untouched while the reduce-scatter is held";
  wait_unit_grads<float>(ctx, b, 10, 30, 80, 20, 1);
  EXPECT_EQ(comm.waits, 1);
  for (int i = 0; i < 20; ++i)
    EXPECT_EQ(grads[(size_t)(80 + i)], 1.f + (float)i) << "grads[" << 80 + i << "]";
  for (float x : staging)
    EXPECT_EQ(x, 0.f);
  wait_unit_grads<float>(ctx, b, 10, 30, 80, 20, 1); // taken already: nothing
  EXPECT_EQ(comm.waits, 1);
  // Not ahead: waited for and added at once, from slot 0 for layer 2.
  staging[10] = 5.f;
  reduce_scatter_ahead<float>(ctx, b, 10, 30, 100, 20, 2, /*ahead=*/false);
  EXPECT_EQ(comm.scatters.back(), (void *)(staging.data() + 10));
  EXPECT_EQ(comm.waits, 2);
  EXPECT_EQ(grads[100], 5.f);
  EXPECT_EQ(staging[10], 0.f);
  // Layer 2's held in slot 0; waiting for layer 0 there is a bmbc bug.
  reduce_scatter_ahead<float>(ctx, b, 10, 30, 100, 20, 2, /*ahead=*/true);
  try {
    wait_unit_grads<float>(ctx, b, 10, 30, 60, 20, 0);
    FAIL() << "waiting for layer 0 with layer 2's reduce-scatter held must fail";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("is for 2, not 0"), std::string::npos) << e.what();
  }
  // A second reduce-scatter into a slot whose first is still held fails too.
  try {
    reduce_scatter_ahead<float>(ctx, b, 10, 30, 60, 20, 0, /*ahead=*/true);
    FAIL() << "holding two reduce-scatters of one slot must fail";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("already holds one for 2"), std::string::npos)
        << e.what();
  }
}
