//===- cuda_nccl_gpu_test.cpp - The NCCL communicator on one GPU ----------===//
//
// One rank (a single-process bootstrap): every collective is the identity,
// so this checks the plumbing a multi-GPU run relies on - device buffers go
// through NCCL on the comm stream and wait() orders the compute stream after
// them, host buffers (the app's scalars) go through the bootstrap, and
// barrier() drains the comm stream. Needs a GPU (label cuda-gpu); several
// ranks need several GPUs and mpirun, which CI machines lack.
//
//===----------------------------------------------------------------------===//
#include "cuda/device.h"
#include "cuda/nccl_comm.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

TEST(NcclComm, OneRankCollectivesOnDeviceAndHostBuffers) {
  std::unique_ptr<bmrt::cuda::Device> dev;
  try {
    dev = bmrt::cuda::openDevice();
  } catch (const bmrt::Error &e) {
    GTEST_SKIP() << e.what();
  }
  bmrt::CommOptions options;
  auto comm = bmrt::cuda::makeNcclComm(*dev, bmrt::makeSingleComm(options), options);
  EXPECT_STREQ(comm->backend(), "nccl");
  EXPECT_EQ(comm->size(), 1);
  std::vector<float> h = {1.5f, -2.0f, 3.25f, 4.0f};
  float *d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, h.size() * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(d, h.data(), h.size() * sizeof(float), cudaMemcpyHostToDevice),
            cudaSuccess);
  comm->wait(comm->allReduce(d, 4, bmrt::DType::F32));
  comm->wait(comm->reduceScatter(d, 4, bmrt::DType::F32));
  comm->wait(comm->allGather(d, 4, bmrt::DType::F32));
  comm->wait(comm->broadcast(d, 4, bmrt::DType::F32, 0));
  const int64_t counts[] = {4}; // ZeRO-2's pieces: one rank owns the unit
  comm->wait(comm->reduceScatterv(d, counts, bmrt::DType::F32));
  comm->wait(comm->allGatherv(d, counts, bmrt::DType::F32)); // ZeRO-3's gather of a unit
  const int64_t none[] = {0}; // an empty unit: no NCCL call, still a handle to wait
  comm->wait(comm->allGatherv(d, none, bmrt::DType::F32));
  comm->barrier();
  std::vector<float> back(4);
  ASSERT_EQ(cudaStreamSynchronize(dev->compute), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(back.data(), d, 4 * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(back, h);
  EXPECT_EQ(comm->sum(2.5), 2.5); // a host scalar: through the bootstrap
  EXPECT_EQ(comm->broadcastString("ckpt/step-3", 0), "ckpt/step-3");
  cudaFree(d);
}

// Bad piece counts are refused at issue, naming the collective, before NCCL
// (as every backend's reduceScatterv and allGatherv).
TEST(NcclComm, PieceCollectivesRefuseBadCounts) {
  std::unique_ptr<bmrt::cuda::Device> dev;
  try {
    dev = bmrt::cuda::openDevice();
  } catch (const bmrt::Error &e) {
    GTEST_SKIP() << e.what();
  }
  bmrt::CommOptions options;
  auto comm = bmrt::cuda::makeNcclComm(*dev, bmrt::makeSingleComm(options), options);
  float *d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, 4 * sizeof(float)), cudaSuccess);
  const int64_t negative[] = {-1};
  try {
    comm->reduceScatterv(d, negative, bmrt::DType::F32);
    ADD_FAILURE() << "a negative piece must be refused";
  } catch (const bmrt::Error &e) {
    EXPECT_NE(std::string(e.what()).find("reduce-scatter in per-rank pieces: negative count -1"),
              std::string::npos)
        << e.what();
  }
  try {
    comm->allGatherv(d, negative, bmrt::DType::F32);
    ADD_FAILURE() << "a negative piece must be refused";
  } catch (const bmrt::Error &e) {
    EXPECT_NE(std::string(e.what()).find("all-gather in per-rank pieces: negative count -1"),
              std::string::npos)
        << e.what();
  }
  cudaFree(d);
}

} // namespace
