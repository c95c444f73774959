//===- offload_plan_test.cpp - The offloaded optimizer state's allocation -===//
//
// offload = optimizer (bmrt/offload.h): the rank's optimizer-state role holds
// four slots of its partition (m, v, the fp32 master, the gradient staging)
// and is marked as host state (RolePlan::optStateOnHost), which the host's
// ProgramBuffers hands to the program as Buffers::optStateOffloaded; the
// offloaded step refuses buffers without it.
//
//===----------------------------------------------------------------------===//
#include "app/buffers.h"
#include "app/role_plan.h"
#include "bmrt/offload.h"

#include <gtest/gtest.h>

#include <string>

namespace {

struct Program {
  bmrt::TrainInfo train = {};
  bmrt::ProgramInfo program = {};
  explicit Program(bool offload) {
    train.groupElems = 10;
    train.gradBytes = 40;
    train.optSlots = 2;
    train.optStateBytes = 80;
    train.zeroStage = 1;
    train.partitionAlign = 4; // partitions of ceil(10 / 2) = 5 rounded up to 8
    train.offloadOptimizer = offload;
    train.offloadChunk = offload ? 3 : 0;
    program.job = "j";
    program.model = "m";
    program.paramBytes = 40;
    program.activationBytes = 20;
    program.train = &train;
  }
};

TEST(OffloadPlan, TheStateRoleHoldsFourSlotsOfThePartitionInHostMemory) {
  Program off(true), plain(false);
  bmrt::RolePlan a = bmrt::planRoles(off.program, 1, 2), b = bmrt::planRoles(plain.program, 1, 2);
  EXPECT_TRUE(a.optStateOnHost);
  EXPECT_FALSE(b.optStateOnHost);
  EXPECT_EQ(b.bytes[4], 2 * 8 * 4); // m, v of a partition of 8
  EXPECT_EQ(a.bytes[4], bmrt::kOffloadSlots * 8 * 4);
  for (int role : {0, 1, 2, 3, 5, 6})
    EXPECT_EQ(a.bytes[role], b.bytes[role]) << "role " << role;
}

TEST(OffloadPlan, ProgramBuffersMarkTheOffloadedState) {
  Program off(true), plain(false);
  bmrt::ProgramBuffers a(off.program, 0, 2), b(plain.program, 0, 2);
  EXPECT_TRUE(a.get().optStateOffloaded);
  EXPECT_FALSE(b.get().optStateOffloaded);
  EXPECT_EQ(a.bytes(4), bmrt::kOffloadSlots * 8 * 4);
}

TEST(OffloadPlan, TheStepRefusesBuffersWithoutTheOffloadedState) {
  Program plain(false);
  bmrt::ProgramBuffers b(plain.program, 0, 2);
  bmrt::Context ctx;
  try {
    bmrt::offload_grads_out<float>(ctx, b.get(), 3);
    FAIL() << "no error";
  } catch (const bmrt::Error &e) {
    EXPECT_NE(std::string(e.what()).find("offload_grads_out: this offload = optimizer program "
                                         "needs the offloaded optimizer state"),
              std::string::npos)
        << e.what();
  }
}

TEST(OffloadPlan, ARankOfTheSecondPartitionUpdatesItsOwnElements) {
  // Rank 1 of 2: group elements [8, 10). The master starts as the params,
  // the update writes only the partition back, in chunks of 1.
  Program off(true);
  bmrt::ProgramBuffers buffers(off.program, 1, 2);
  const bmrt::Buffers &buf = buffers.get();
  float *params = (float *)buf.params, *grads = (float *)buf.grads;
  for (int i = 0; i < 16; ++i)
    params[i] = 1.0f + i, grads[i] = 0.5f;
  bmrt::Context ctx;
  bmrt::offload_pull_master(ctx, buf, off.train);
  const bmrt::OffloadSegment seg[] = {{0, 10, 0.0}};
  bmrt::OffloadRequest out = bmrt::offload_grads_out<float>(ctx, buf, 1);
  EXPECT_EQ(out.chunks, 2);
  bmrt::OffloadRequest in = bmrt::offload_adamw_update<float>(ctx, buf, out, 0, seg, 1, 0.1, 0.9,
                                                              0.999, 1e-8, 1, 1.0);
  bmrt::offload_wait(ctx, in);
  for (int i = 0; i < 8; ++i)
    EXPECT_EQ(params[i], 1.0f + i) << "element " << i << " is rank 0's";
  // AdamW's first step moves each param by about lr against the gradient.
  for (int i = 8; i < 10; ++i)
    EXPECT_NEAR(params[i], 1.0f + i - 0.1f, 1e-5) << "element " << i;
  EXPECT_THROW(bmrt::offload_wait(ctx, out), bmrt::Error); // a copy out is not waited so
}

} // namespace
