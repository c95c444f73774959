//===- cuda_zero3_gpu_test.cpp - ZeRO-3's device forms on one GPU ----------===//
//
// The device side of ZeRO-3 (label cuda-gpu, skipped without a GPU): the
// rank's piece of a unit copied from its partition of the params into the
// param staging on the compute stream before the all-gather is issued
// (gather_unit), the two slots of wait_unit / prefetch_unit with the held
// request, and the optimizer step writing a partition at params[e -
// paramsFrom], and round_unit's 16-bit copy of a gathered unit (bf16/fp16
// jobs). A communicator of 3 ranks (this one rank 1) records what is
// gathered and moves nothing, as the host's partition_test does; the same
// unit and partition give the host test's expected elements.
//
//===----------------------------------------------------------------------===//
#include "bmrt/comm.h"
#include "bmrt/lowp.h"
#include "bmrt/training.h"
#include "cuda/device.h"
#include "gpu_test.h"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <vector>

namespace {

using namespace bmrt;
using gpu_test::DeviceVector;

TrainInfo groupOf(int64_t elems, int64_t align, int zero) {
  TrainInfo t{};
  t.groupElems = elems;
  t.partitionAlign = align;
  t.zeroStage = zero;
  return t;
}

struct RecordingComm final : Comm {
  std::vector<std::vector<int64_t>> gatherCounts;
  std::vector<void *> gathered;
  int waits = 0;
  int rank() const override { return 1; }
  int size() const override { return 3; }
  const char *backend() const override { return "recording"; }
  bool deterministic() const override { return false; }
  CommHandle allReduce(void *, int64_t, DType) override { return {}; }
  CommHandle reduceScatter(void *, int64_t, DType) override { return {}; }
  CommHandle allGather(void *, int64_t, DType) override { return {}; }
  CommHandle allGatherv(void *buf, const int64_t *c, DType) override {
    gathered.push_back(buf);
    gatherCounts.emplace_back(c, c + 3);
    return {(int64_t)gathered.size()};
  }
  CommHandle broadcast(void *, int64_t, DType, int) override { return {}; }
  void wait(CommHandle) override { ++waits; }
  void barrier() override {}
};

class Zero3Gpu : public ::testing::Test {
protected:
  void SetUp() override {
    try {
      dev_ = cuda::openDevice();
    } catch (const Error &e) {
      GTEST_SKIP() << e.what();
    }
    ctx.device = dev_.get();
    ctx.comm = &comm;
  }
  std::unique_ptr<cuda::Device> dev_;
  RecordingComm comm;
  Context ctx;
};

// Unit [100, 170) of a 180-element group on 3 ranks (partitions of 64):
// rank 1 owns [100, 128) of it, its partition's elements 36..64, which land
// at staging elements 10..38 (the unit staged at element 10); the rest of
// the staging is the other ranks' to fill (untouched here).
TEST_F(Zero3Gpu, GatherUnitCopiesThePieceOnTheDeviceAndGathersInPlace) {
  TrainInfo t = groupOf(180, 64, 3);
  std::vector<float> params(4 + 64), staging(80, -1.f);
  for (int i = 0; i < 68; ++i)
    params[(size_t)i] = (float)i; // 4 frozen floats (16 bytes), then the partition
  DeviceVector<float> dparams(params), dstaging(staging);
  Buffers b;
  b.params = dparams.p;
  b.paramStaging = dstaging.p;
  b.part = partitionOf(t, 1, 3);
  gather_unit<float>(ctx, b, 16, 10, 100, 70);
  ASSERT_EQ(comm.gatherCounts.size(), 1u);
  EXPECT_EQ(comm.gatherCounts[0], (std::vector<int64_t>{0, 28, 42}));
  EXPECT_EQ(comm.gathered[0], (void *)(dstaging.p + 10));
  const std::vector<float> got = dstaging.get(dev_->compute);
  for (int i = 0; i < 80; ++i) {
    const float want = i >= 10 && i < 38 ? (float)(4 + 36 + (i - 10)) : -1.f;
    EXPECT_EQ(got[(size_t)i], want) << "staging[" << i << "]";
  }
}

// The look-ahead on the device: prefetch_unit of layer 1 gathers into slot
// 1 (stagingAt + slotStride) and holds the request; wait_unit of layer 1
// takes it (no second gather) and waits; wait_unit of layer 0 with nothing
// held gathers into slot 0 now. A prefetch past the last layer does nothing.
TEST_F(Zero3Gpu, WaitAndPrefetchUseTheTwoSlots) {
  TrainInfo t = groupOf(180, 64, 3);
  std::vector<float> params(64), staging(200, -1.f);
  for (int i = 0; i < 64; ++i)
    params[(size_t)i] = 100.f + (float)i;
  DeviceVector<float> dparams(params), dstaging(staging);
  Buffers b;
  b.params = dparams.p;
  b.paramStaging = dstaging.p;
  b.part = partitionOf(t, 1, 3); // group elements [64, 128)
  // A unit of 20 elements per layer, layer l at group element 60 + 20 l.
  prefetch_unit<float>(ctx, b, 0, 0, 100, 80, 20, 1, 2); // layer 1: [80, 100)
  ASSERT_EQ(comm.gathered.size(), 1u);
  EXPECT_EQ(comm.gathered[0], (void *)(dstaging.p + 100));
  wait_unit<float>(ctx, b, 0, 0, 100, 80, 20, 1);
  EXPECT_EQ(comm.gathered.size(), 1u); // taken, not gathered again
  EXPECT_EQ(comm.waits, 1);
  wait_unit<float>(ctx, b, 0, 0, 100, 60, 20, 0); // layer 0: [60, 80), nothing held
  ASSERT_EQ(comm.gathered.size(), 2u);
  EXPECT_EQ(comm.gathered[1], (void *)dstaging.p);
  EXPECT_EQ(comm.gatherCounts[1], (std::vector<int64_t>{4, 16, 0}));
  prefetch_unit<float>(ctx, b, 0, 0, 100, 100, 20, 2, 2); // past the last layer
  EXPECT_EQ(comm.gathered.size(), 2u);
  const std::vector<float> got = dstaging.get(dev_->compute);
  for (int i = 0; i < 200; ++i) {
    float want = -1.f;
    if (i >= 4 && i < 20) // layer 0's piece [64, 80) -> partition 0..16
      want = 100.f + (float)(i - 4);
    if (i >= 100 && i < 120) // layer 1's unit [80, 100) -> partition 16..36
      want = 100.f + 16.f + (float)(i - 100);
    EXPECT_EQ(got[(size_t)i], want) << "staging[" << i << "]";
  }
}

// The optimizer step on a zero = 3 partition (params hold group elements
// [paramsFrom, end) at 0) updates the same elements as on zero = 2's whole
// span: the device kernels index the params from paramsFrom.
TEST_F(Zero3Gpu, TheUpdateWritesThePartitionAtParamsFrom) {
  const int64_t elems = 180;
  std::vector<float> grads(64), whole(192), part(64);
  std::mt19937 rng(9);
  std::normal_distribution<float> dist(0.f, 1.f);
  for (auto &x : grads)
    x = dist(rng);
  for (int64_t e = 0; e < 192; ++e)
    whole[(size_t)e] = (float)e * 0.01f;
  std::copy(whole.begin() + 64, whole.begin() + 128, part.begin());
  DeviceVector<float> g2(grads), g3(grads), w2(whole), w3(part);
  DeviceVector<float> opt2(std::vector<float>(128, 0.f)), opt3(std::vector<float>(128, 0.f));
  Buffers b2, b3;
  b2.part = partitionOf(groupOf(elems, 64, 2), 1, 3);
  b3.part = partitionOf(groupOf(elems, 64, 3), 1, 3);
  b2.grads = g2.p, b3.grads = g3.p;
  b2.params = w2.p, b3.params = w3.p;
  b2.optState = opt2.p, b3.optState = opt3.p;
  adamw_update_part<float>(ctx, b2, 0, 0, elems, 1e-2, 0.9, 0.95, 1e-8, 0.1, 1);
  adamw_update_part<float>(ctx, b3, 0, 0, elems, 1e-2, 0.9, 0.95, 1e-8, 0.1, 1);
  const std::vector<float> w = w2.get(dev_->compute), p = w3.get(dev_->compute);
  for (int i = 0; i < 64; ++i)
    EXPECT_EQ(p[(size_t)i], w[(size_t)(64 + i)]) << "param " << 64 + i;
  EXPECT_EQ(opt2.get(dev_->compute), opt3.get(dev_->compute));
  sgd_update_part<float>(ctx, b2, 0, 0, elems, 1e-2, 0.9, 0.1, 2);
  sgd_update_part<float>(ctx, b3, 0, 0, elems, 1e-2, 0.9, 0.1, 2);
  const std::vector<float> ws = w2.get(dev_->compute), ps = w3.get(dev_->compute);
  for (int i = 0; i < 64; ++i)
    EXPECT_EQ(ps[(size_t)i], ws[(size_t)(64 + i)]) << "param " << 64 + i << " (sgd)";
}

// zero = 3 with bf16/fp16: round_unit rounds elements [at, at + n) of the
// param staging into the 16-bit copy at the same elements, bit for bit the
// host's to_bf16 / to_fp16 (the shared element functions), and touches
// nothing outside the range.
TEST_F(Zero3Gpu, RoundUnitRoundsTheRangeOfTheStagingOnly) {
  std::vector<float> staged(96);
  std::mt19937 rng(11);
  std::normal_distribution<float> dist(0.f, 3.f);
  for (auto &x : staged)
    x = dist(rng);
  for (LowPrecision p : {LowPrecision::BF16, LowPrecision::FP16}) {
    DeviceVector<float> dstaging(staged);
    DeviceVector<uint16_t> dlow(std::vector<uint16_t>(96, 0xabcd));
    Buffers b;
    b.paramStaging = dstaging.p;
    b.lowParams = dlow.p;
    round_unit(ctx, p, b, 20, 50);
    const std::vector<uint16_t> low = dlow.get(dev_->compute);
    for (int i = 0; i < 96; ++i) {
      const float x = staged[(size_t)i];
      const uint16_t want = i < 20 || i >= 70 ? (uint16_t)0xabcd
                            : p == LowPrecision::BF16 ? to_bf16(x).bits
                                                      : to_fp16(x).bits;
      EXPECT_EQ(low[(size_t)i], want) << "element " << i;
    }
  }
}

} // namespace
