//===- lowp_zero3_test.cpp - The bf16/fp16 weight copy under ZeRO-3 -------===//
//
// Under zero = 3 no rank holds the whole trainable group, so the GEMMs'
// reduced-precision copy (Buffers::lowParams) has the param staging's
// layout: the role is half the (fp32) param staging, not half the group;
// refresh_low_params leaves it alone; round_unit rounds exactly one
// gathered unit of the staging into it, bit for bit what a whole-group
// conversion gives those elements, and refuses buffers without the copy.
//
//===----------------------------------------------------------------------===//
#include "app/buffers.h"
#include "app/role_plan.h"
#include "bmrt/lowp.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>

namespace {

// A group of 40 elements staged in 24 (unit 0 and two layer slots), both
// fp32, so the staging copy is 48 bytes and the group's would be 80.
struct Program {
  bmrt::TrainInfo train = {};
  bmrt::ProgramInfo program = {};
  Program(const char *precision, int zeroStage) {
    train.precision = precision;
    train.groupElems = 40;
    train.gradBytes = 160;
    train.optSlots = 2;
    train.optStateBytes = 320;
    train.zeroStage = zeroStage;
    train.partitionAlign = 4;
    train.gradStagingBytes = zeroStage >= 2 ? 64 : 0;
    train.paramStagingBytes = zeroStage == 3 ? 96 : 0;
    program.job = "j";
    program.model = "m";
    program.paramBytes = 160;
    program.activationBytes = 16;
    program.train = &train;
  }
};

} // namespace

TEST(LowpZero3, TheCopyIsHalfTheParamStagingNotHalfTheGroup) {
  Program z3("bf16", 3), z2("bf16", 2), fp16z3("fp16", 3), fp32z3("fp32", 3);
  EXPECT_EQ(bmrt::low_param_bytes(z3.train), 48);
  EXPECT_EQ(bmrt::low_param_bytes(fp16z3.train), 48);
  EXPECT_EQ(bmrt::low_param_bytes(z2.train), 80);
  EXPECT_EQ(bmrt::low_param_bytes(fp32z3.train), 0);
  EXPECT_EQ(bmrt::planRoles(z3.program, 1, 2).bytes[5], 48);
  EXPECT_EQ(bmrt::planRoles(z2.program, 1, 2).bytes[5], 80);
}

TEST(LowpZero3, RoundUnitRoundsOneUnitAndRefreshLeavesTheCopy) {
  for (const char *precision : {"bf16", "fp16"}) {
    Program p(precision, 3);
    bmrt::ProgramBuffers buffers(p.program, 0, 2);
    const bmrt::Buffers &buf = buffers.get();
    bmrt::Context ctx;
    ctx.numThreads = 1;
    float *staged = (float *)buf.paramStaging;
    uint16_t *low = (uint16_t *)buf.lowParams;
    for (int i = 0; i < 24; ++i)
      staged[i] = 1.0f + (float)i / 3.0f; // not representable in 16 bits: rounds
    std::memset(low, 0xff, 48);
    // A layer's unit in the second slot: staging elements [14, 20).
    const bmrt::LowPrecision lp = std::string(precision) == "bf16" ? bmrt::LowPrecision::BF16
                                                                    : bmrt::LowPrecision::FP16;
    bmrt::round_unit(ctx, lp, buf, 14, 6);
    for (int i = 0; i < 24; ++i) {
      const uint16_t want = i < 14 || i >= 20 ? 0xffff
                            : lp == bmrt::LowPrecision::BF16 ? bmrt::to_bf16(staged[i]).bits
                                                             : bmrt::to_fp16(staged[i]).bits;
      EXPECT_EQ(low[i], want) << precision << " element " << i;
    }
    // The update's refresh must not convert the (partitioned) params over it.
    bmrt::refresh_low_params(ctx, buf, p.train);
    EXPECT_EQ(low[0], 0xffff);
    EXPECT_EQ(low[14], lp == bmrt::LowPrecision::BF16 ? bmrt::to_bf16(staged[14]).bits
                                                      : bmrt::to_fp16(staged[14]).bits);
  }
}

TEST(LowpZero3, RoundUnitRefusesBuffersWithoutTheCopy) {
  bmrt::Context ctx;
  bmrt::Buffers none;
  try {
    bmrt::round_unit(ctx, bmrt::LowPrecision::BF16, none, 0, 4);
    FAIL() << "no error";
  } catch (const bmrt::Error &e) {
    EXPECT_NE(std::string(e.what()).find("round_unit: this zero = 3 bf16/fp16 program needs "
                                         "Buffers::paramStaging and Buffers::lowParams"),
              std::string::npos)
        << e.what();
  }
}
