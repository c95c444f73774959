//===- cuda_api_test.cpp - The CUDA backend's messages, without a GPU -----===//
//
// What runs on any machine with the CUDA toolkit: the messages a user of a
// --target=cuda program sees when there is no GPU, when the memory plan does
// not fit, when $LOCAL_RANK is malformed, and when a kernel has no device
// implementation yet. None of these calls reaches the GPU.
//
//===----------------------------------------------------------------------===//
#include "bmrt/kernels.h"
#include "bmrt/kernels_backward.h"
#include "bmrt/lowp.h"
#include "bmrt/training.h"
#include "cuda/decode_graph.h"
#include "cuda/device.h"
#include "cuda/device_buffers.h"
#include "cuda/kernels_cuda.h"
#include "cuda/nccl_comm.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

namespace {

using bmrt::Context;

template <class F> std::string errorOf(F &&f) {
  try {
    f();
  } catch (const bmrt::Error &e) {
    return e.what();
  }
  return "";
}

bool haveGpu() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

TEST(CudaDevice, NoGpuNamesCudaGetDeviceCountAndItsError) {
  if (haveGpu())
    GTEST_SKIP() << "a GPU is present";
  const std::string msg = errorOf([] { bmrt::cuda::openDevice(); });
  EXPECT_EQ(msg.rfind("no usable CUDA GPU: cudaGetDeviceCount failed: ", 0), 0u) << msg;
  EXPECT_NE(msg.find("(cudaError"), std::string::npos) << msg;
  EXPECT_NE(msg.find("bmbc --target=host builds the same job for the CPU"), std::string::npos)
      << msg;
}

TEST(CudaDevice, LocalRankPicksTheDeviceModuloTheCount) {
  setenv("LOCAL_RANK", "3", 1);
  EXPECT_EQ(bmrt::cuda::defaultDeviceIndex(2), 1);
  setenv("LOCAL_RANK", "x1", 1);
  EXPECT_EQ(errorOf([] { bmrt::cuda::defaultDeviceIndex(2); }),
            "$LOCAL_RANK is 'x1', not a local rank (0, 1, ...)");
  unsetenv("LOCAL_RANK");
  EXPECT_EQ(bmrt::cuda::defaultDeviceIndex(2), 0);
}

TEST(CudaBuffers, APlanThatDoesNotFitSaysNeedFreeAndWhichSetting) {
  bmrt::cuda::Device dev; // a description only: nothing is opened
  dev.name = "Test GPU";
  std::vector<bmrt::cuda::RoleSize> roles = {
      {"params", size_t(100) << 20, "the model's size"},
      {"activations", size_t(900) << 20, "the job's batch and seq"}};
  const std::string msg =
      errorOf([&] { bmrt::cuda::checkFits(dev, roles, size_t(512) << 20, size_t(1) << 30); });
  EXPECT_EQ(msg, "the program needs 1032.0 MiB of GPU memory (params 100.0 MiB, activations "
                 "900.0 MiB, cuBLASLt workspace 32.0 MiB), but GPU 0 (Test GPU) has 512.0 MiB "
                 "free of 1024.0 MiB; the largest role is activations, sized by the job's batch "
                 "and seq: make that smaller in the .bmb job, or free the GPU");
  EXPECT_EQ(errorOf([&] {
              bmrt::cuda::checkFits(dev, roles, size_t(2) << 30, size_t(4) << 30);
            }),
            "");
}

TEST(CudaBuffers, TrainProgramsPlanGradsAndOptimizerState) {
  // A trainable group of 10 f32 elements with AdamW's two slots.
  bmrt::TrainInfo train = {};
  train.groupElems = 10;
  train.gradBytes = 40;
  train.optSlots = 2;
  train.optStateBytes = 80;
  bmrt::ProgramInfo program = {};
  program.paramBytes = 10, program.stateBytes = 0, program.activationBytes = 20;
  program.train = &train;
  auto roles = bmrt::cuda::plannedRoles(program);
  ASSERT_EQ(roles.size(), 5u);
  EXPECT_EQ(roles[3].role, "grads");
  EXPECT_EQ(roles[3].bytes, 40u);
  EXPECT_EQ(roles[4].role, "optimizer state");
  EXPECT_EQ(roles[4].bytes, 80u);
  train.precision = "bf16";
  train.groupElems = 10;
  roles = bmrt::cuda::plannedRoles(program);
  ASSERT_EQ(roles.size(), 6u);
  EXPECT_EQ(roles[5].role, "low-precision params");
  EXPECT_EQ(roles[5].bytes, 20u);
}

// Under ZeRO-1 a rank holds the grads of every partition but the optimizer
// state of its own (app/role_plan.h, as the host's ProgramBuffers).
TEST(CudaBuffers, AZeroRankPlansItsPartitionOfTheOptimizerState) {
  bmrt::TrainInfo train = {};
  train.groupElems = 10;
  train.gradBytes = 40;
  train.optSlots = 2;
  train.optStateBytes = 80;
  train.zeroStage = 1;
  train.partitionAlign = 4; // partitions of ceil(10 / 2) = 5 rounded up to 8
  bmrt::ProgramInfo program = {};
  program.paramBytes = 40, program.activationBytes = 20;
  program.train = &train;
  auto roles = bmrt::cuda::plannedRoles(program, 1, 2);
  ASSERT_EQ(roles.size(), 5u);
  EXPECT_EQ(roles[0].bytes, 64u); // the group's span: 2 partitions of 8
  EXPECT_EQ(roles[3].bytes, 64u);
  EXPECT_EQ(roles[4].bytes, 64u); // 2 slots x 8 elements x 4 bytes
}

// Under ZeRO-2 a rank's grads are its partition only, and the backward
// stages one unit's gradients in a role of its own (role 6, Buffers::
// gradStaging), sized by the compiler (TrainInfo::gradStagingBytes).
TEST(CudaBuffers, AZero2RankPlansItsPartitionOfTheGradsAndTheStaging) {
  bmrt::TrainInfo train = {};
  train.groupElems = 10;
  train.gradBytes = 40;
  train.optSlots = 2;
  train.optStateBytes = 80;
  train.zeroStage = 2;
  train.gradStagingBytes = 24;
  train.partitionAlign = 4; // partitions of 8 elements
  bmrt::ProgramInfo program = {};
  program.paramBytes = 40, program.activationBytes = 20;
  program.train = &train;
  auto roles = bmrt::cuda::plannedRoles(program, 1, 2);
  ASSERT_EQ(roles.size(), 6u);
  EXPECT_EQ(roles[3].bytes, 32u); // this rank's 8 elements only
  EXPECT_EQ(roles[4].bytes, 64u);
  EXPECT_EQ(roles[5].role, "gradient staging");
  EXPECT_EQ(roles[5].slot, 6);
  EXPECT_EQ(roles[5].bytes, 24u);
}

// Under ZeRO-3 the params are the frozen ones and the rank's partition of
// the group, and the entries read the gathered params from a role of its own
// (role 7, Buffers::paramStaging), sized by the compiler
// (TrainInfo::paramStagingBytes), beside ZeRO-2's gradient staging.
TEST(CudaBuffers, AZero3RankPlansItsPartitionOfTheParamsAndTheirStaging) {
  bmrt::TrainInfo train = {};
  train.groupElems = 10;
  train.gradBytes = 40;
  train.optSlots = 2;
  train.optStateBytes = 80;
  train.zeroStage = 3;
  train.groupParamOffset = 12; // 3 frozen floats before the group
  train.gradStagingBytes = 24;
  train.paramStagingBytes = 48;
  train.partitionAlign = 4; // partitions of 8 elements
  bmrt::ProgramInfo program = {};
  program.paramBytes = 52, program.activationBytes = 20;
  program.train = &train;
  auto roles = bmrt::cuda::plannedRoles(program, 1, 2);
  ASSERT_EQ(roles.size(), 7u);
  EXPECT_EQ(roles[0].bytes, 12u + 32u); // the frozen params, then this rank's 8 elements
  EXPECT_EQ(roles[3].bytes, 32u);
  EXPECT_EQ(roles[5].role, "gradient staging");
  EXPECT_EQ(roles[5].bytes, 24u);
  EXPECT_EQ(roles[6].role, "param staging");
  EXPECT_EQ(roles[6].slot, 7);
  EXPECT_EQ(roles[6].bytes, 48u);
}

// Under zero = 3 a rank holds its partition only: the device's bf16/fp16
// weight copy follows the param staging, rounded unit by unit after each
// gather (round_unit), so the whole-group refresh does nothing there (no
// device is touched), and round_unit refuses a program whose staging or copy
// the app did not allocate before any device work.
TEST(CudaApi, ZeroThreeRoundsEachGatheredUnitInsteadOfTheWholeGroup) {
  bmrt::TrainInfo train = {};
  train.precision = "bf16";
  train.zeroStage = 3;
  train.groupElems = 16;
  train.paramStagingBytes = 48;
  EXPECT_EQ(bmrt::low_param_bytes(train), 24);
  bmrt::Buffers buf;
  buf.part.begin = buf.part.paramsFrom = 8;
  buf.part.end = 16;
  buf.part.size = buf.part.paramElems = 8;
  buf.part.total = 16;
  Context ctx; // no device: nothing may reach one
  EXPECT_EQ(errorOf([&] { bmrt::refresh_low_params(ctx, buf, train); }), "");
  EXPECT_EQ(errorOf([&] { bmrt::round_unit(ctx, bmrt::LowPrecision::BF16, buf, 0, 4); }),
            "round_unit: this zero = 3 bf16/fp16 program needs Buffers::paramStaging and "
            "Buffers::lowParams, which the app did not allocate");
}

// offload = optimizer: the optimizer state is pinned host memory that
// DeviceBuffers allocates apart, so the GPU's plan has none of it.
TEST(CudaBuffers, AnOffloadedOptimizerStateTakesNoGpuMemory) {
  bmrt::TrainInfo train = {};
  train.groupElems = 10;
  train.gradBytes = 40;
  train.optSlots = 2;
  train.optStateBytes = 80;
  train.zeroStage = 1;
  train.partitionAlign = 4;
  train.offloadOptimizer = true;
  train.offloadChunk = 4;
  bmrt::ProgramInfo program = {};
  program.paramBytes = 40, program.activationBytes = 20;
  program.train = &train;
  auto roles = bmrt::cuda::plannedRoles(program, 1, 2);
  ASSERT_EQ(roles.size(), 5u);
  EXPECT_EQ(roles[3].bytes, 64u);
  EXPECT_EQ(roles[4].bytes, 0u); // on the host: 4 slots x 8 elements x 4 bytes, pinned
}

// Shapes the device kernels refuse before launching anything.
TEST(CudaApi, ShapeRefusalsNameTheKernelAndTheLimit) {
  bmrt::cuda::Device dev;
  EXPECT_EQ(errorOf([&] {
              bmrt::cuda::rotary_forward(dev, nullptr, nullptr, nullptr, 1, 1, 1024, 1024,
                                         10000.0f);
            }),
            "rotary_forward: the cuda backend takes head dimensions up to 512 (got 1024)");
  EXPECT_EQ(errorOf([&] {
              bmrt::cuda::copy_strided_backward(dev, nullptr, nullptr, 3, 4, 2, 0);
            }),
            "copy_strided_backward: overlapping slices (stride 2 < slice 4) are not supported "
            "on the cuda backend");
  bmrt::AttentionArgs a;
  a.rows = 4, a.heads = 2, a.kvHeads = 1, a.headDim = 8, a.cacheCapacity = 8, a.start = 6;
  EXPECT_EQ(errorOf([&] {
              bmrt::cuda::attention_forward(dev, a, nullptr, nullptr, nullptr, nullptr, nullptr,
                                            nullptr);
            }),
            "attention_forward: rows [6, 10) do not fit the KV cache capacity 8");
  EXPECT_EQ(errorOf([&] {
              bmrt::cuda::layernorm_backward(dev, nullptr, nullptr, nullptr, nullptr, nullptr,
                                             nullptr, nullptr, (float *)&a, 1, 1, 1e-5f);
            }),
            "layernorm_backward: give both mean and rstd, or neither (recompute)");
}

TEST(CudaApi, AKernelWithoutAnOpenDeviceFails) {
  Context ctx; // ctx.device is null: the app opened no GPU
  EXPECT_EQ(errorOf([&] {
              bmrt::gemm<float>(ctx, 1, 1, 1, nullptr, 1, nullptr, 1, bmrt::Trans::T, nullptr,
                                1, nullptr, bmrt::Epilogue::None, nullptr);
            }),
            "a cuda kernel was called without a device (Context::device is null: the app did "
            "not open the GPU)");
}

// bmb-autocast's reduced-input attention has host kernels only: refused by
// name (before the device is looked up), not computed in fp32.
TEST(CudaApi, ReducedPrecisionAttentionIsRefused) {
  Context ctx;
  bmrt::AttentionArgs a;
  a.lowp = true;
  EXPECT_EQ(errorOf([&] {
              bmrt::attention_forward<float>(ctx, a, nullptr, nullptr, nullptr, nullptr,
                                             nullptr, nullptr);
            }),
            "attention_forward: reduced-precision attention (AttentionArgs::lowp) is not "
            "implemented on the cuda backend (bmbc keeps attention fp32 for --target=cuda)");
  EXPECT_EQ(errorOf([&] {
              bmrt::attention_backward<float>(ctx, a, nullptr, nullptr, nullptr, nullptr,
                                              nullptr, nullptr, nullptr);
            }),
            "attention_backward: reduced-precision attention (AttentionArgs::lowp) is not "
            "implemented on the cuda backend (bmbc keeps attention fp32 for --target=cuda)");
}

TEST(CudaApi, InPlaceResidualAfterAnActivationIsRefused) {
  bmrt::cuda::Device dev;
  float c[1] = {0};
  EXPECT_EQ(errorOf([&] {
              bmrt::cuda::gemm(dev, 1, 1, 1, c, 1, c, 1, bmrt::Trans::T, c, 1, nullptr,
                               bmrt::Epilogue::GeluErf, c);
            }),
            "cuda gemm: an in-place residual after an activation is not supported (the "
            "compiler emits it only without an activation)");
}

TEST(CudaNccl, DeterministicIsRefusedBeforeAnyLaunchOrGpu) {
  bmrt::cuda::Device dev;
  bmrt::CommOptions options;
  options.deterministic = true;
  EXPECT_EQ(errorOf([&] { bmrt::cuda::openNcclComm(dev, options); }),
            "--deterministic is not available on the cuda backend: NCCL does not sum in rank "
            "order (drop the flag, or run the job built with --target=host)");
}

// top_k / top_p on the device: bad settings are refused before anything is
// queued (no GPU needed), with the host Sampler's messages.
TEST(CudaSampling, SortedModesRefuseBadSettingsBeforeTheGpu) {
  bmrt::cuda::Device dev;
  bmrt::SamplingConfig config;
  config.mode = bmrt::SamplingMode::TopK;
  config.topK = 0;
  EXPECT_EQ(errorOf([&] { bmrt::cuda::sample_token(dev, config, nullptr, 10, 0); }),
            "top_k sampling needs k > 0, not 0");
  config.mode = bmrt::SamplingMode::TopP;
  config.topP = 1.5;
  EXPECT_EQ(errorOf([&] { bmrt::cuda::sample_token(dev, config, nullptr, 10, 0); }),
            "top_p sampling needs p in [0, 1], not 1.500000");
  config.topP = 0.9;
  EXPECT_EQ(errorOf([&] { bmrt::cuda::sample_token(dev, config, nullptr, 0, 0); }),
            "sampling: vocabulary of 0 tokens");
  config.temperature = 0;
  EXPECT_EQ(errorOf([&] { bmrt::cuda::sample_token(dev, config, nullptr, 10, 0); }),
            "sampling: temperature must be > 0 (got 0.000000)");
}

// $BMB_CUDA_GRAPHS: decode steps as CUDA graphs unless it says 0; any other
// value is refused naming the variable (before a GPU is needed).
TEST(CudaDecodeGraphs, TheEnvironmentSwitchIsZeroOrOne) {
  EXPECT_TRUE(bmrt::cuda::decodeGraphsWanted(nullptr));
  EXPECT_TRUE(bmrt::cuda::decodeGraphsWanted("1"));
  EXPECT_FALSE(bmrt::cuda::decodeGraphsWanted("0"));
  EXPECT_EQ(errorOf([] { bmrt::cuda::decodeGraphsWanted("yes"); }),
            "$BMB_CUDA_GRAPHS is 'yes'; it must be 1 (decode steps as CUDA graphs, the "
            "default) or 0 (launch by launch)");
}

TEST(CudaApi, ClipCoefficientIsTheHostFormula) {
  EXPECT_DOUBLE_EQ(bmrt::clip_coefficient(2.0, 1.0), 1.0 / (2.0 + 1e-6));
  EXPECT_DOUBLE_EQ(bmrt::clip_coefficient(0.5, 1.0), 1.0);
}

} // namespace
