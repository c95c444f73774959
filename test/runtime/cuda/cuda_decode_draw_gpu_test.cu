//===- cuda_decode_draw_gpu_test.cu - The draw inside the decode graph -----===//
//
// The decode step with its draw (decode_graph.h, sampling_draw.h) on one
// GPU (label cuda-gpu, skipped without one). A stand-in decode entry writes
// logits that depend on the step's position, read on the device
// (positions_forward with Device::stepStart), so a graph that baked in a
// position, a seed or a step would draw other tokens. For every sampling
// mode, over several steps:
//  - the steps as CUDA graphs with the draw inside them, the same steps
//    launched one by one ($BMB_CUDA_GRAPHS=0's path), and the step without
//    a draw followed by sample_token all draw the same ids;
//  - those ids are the host Sampler's on the step's logits copied back (the
//    kernels compute the host's Philox uniform from the seed and the step in
//    device memory).
//
//===----------------------------------------------------------------------===//
#include "bmrt/kernels.h"
#include "bmrt/sampling.h"
#include "cuda/check.h"
#include "cuda/decode_graph.h"
#include "cuda/device.h"
#include "cuda/kernels_cuda.h"
#include "cuda/sampling_draw.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

namespace {

namespace cu = bmrt::cuda;

constexpr int64_t kVocab = 3001;
constexpr int64_t kPosAt = kVocab * (int64_t)sizeof(float); // the position after the logits

__global__ void positionLogitsKernel(float *logits, const int32_t *pos, int64_t V) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < V;
       i += (int64_t)gridDim.x * blockDim.x)
    logits[i] = 3.0f * sinf(0.37f * (float)i + 1.3f * (float)pos[0]) + (i % 97 == 0 ? 2.0f : 0.0f);
}

// The stand-in decode entry: the step's position (from the device when the
// decode runs with Device::stepStart), then logits from it.
void fakeDecode(bmrt::Context &ctx, const bmrt::Buffers &buf, int64_t start, int64_t rows) {
  char *act = (char *)buf.activations;
  int32_t *pos = (int32_t *)(act + kPosAt);
  bmrt::positions_forward(ctx, pos, rows, start);
  positionLogitsKernel<<<8, 256, 0, ctx.device->compute>>>((float *)act, pos, kVocab);
  BMRT_CUDA_CHECK_LAUNCH("positionLogitsKernel");
}

class DecodeDraw : public ::testing::Test {
protected:
  void SetUp() override {
    try {
      dev_ = cu::openDevice();
    } catch (const bmrt::Error &e) {
      GTEST_SKIP() << e.what();
    }
    ctx_.device = dev_.get();
    ASSERT_EQ(cudaMalloc(&act_, kPosAt + 64), cudaSuccess);
    buf_.activations = act_;
    logits_ = {"logits", bmrt::DType::F32, 2, {1, kVocab}, 0, -1};
    entry_ = {"decode", fakeDecode, 1, nullptr, nullptr, 0, &logits_, 1};
  }
  void TearDown() override {
    if (act_)
      cudaFree(act_);
  }
  std::vector<float> logits() {
    std::vector<float> h(kVocab);
    EXPECT_EQ(cudaStreamSynchronize(dev_->compute), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(h.data(), act_, kVocab * sizeof(float), cudaMemcpyDeviceToHost),
              cudaSuccess);
    return h;
  }
  std::unique_ptr<cu::Device> dev_;
  bmrt::Context ctx_;
  void *act_ = nullptr;
  bmrt::Buffers buf_;
  bmrt::TensorRef logits_;
  bmrt::EntryPoint entry_;
};

TEST_F(DecodeDraw, GraphsLaunchesAndSampleTokenDrawTheHostsIds) {
  struct Case {
    bmrt::SamplingMode mode;
    int64_t k;
    double p, temperature;
  };
  const Case cases[] = {{bmrt::SamplingMode::Greedy, 0, 1, 1.0},
                        {bmrt::SamplingMode::Temperature, 0, 1, 0.8},
                        {bmrt::SamplingMode::TopK, 40, 1, 0.9},
                        {bmrt::SamplingMode::TopP, 0, 0.9, 1.1}};
  for (const Case &c : cases) {
    bmrt::SamplingConfig config;
    config.mode = c.mode;
    config.topK = c.k;
    config.topP = c.p;
    config.temperature = c.temperature;
    config.seed = 2024;
    const std::string what = bmrt::samplingModeName(c.mode);
    bmrt::Sampler hs = bmrt::makeSampler(config, kVocab);
    cu::DecodeGraphs graphs(*dev_, true), launches(*dev_, false), plain(*dev_, true);
    for (uint64_t step = 1; step <= 6; step++) {
      const int64_t start = 10 + (int64_t)step;
      cu::StepDraw draw;
      draw.params = cu::drawParamsOf(config, kVocab, step);
      draw.mode = c.mode;
      draw.logits = (const float *)act_;
      draw.vocab = kVocab;
      const auto viaGraph = graphs.run(ctx_, entry_, buf_, start, 1, &draw);
      ASSERT_TRUE(viaGraph.has_value());
      EXPECT_EQ(viaGraph->deviceError, 0);
      const auto viaLaunches = launches.run(ctx_, entry_, buf_, start, 1, &draw);
      ASSERT_TRUE(viaLaunches.has_value());
      EXPECT_FALSE(plain.run(ctx_, entry_, buf_, start, 1).has_value());
      const int32_t separate = cu::sample_token(*dev_, config, (const float *)act_, kVocab, step);
      std::vector<float> h = logits();
      bmrt::Context host;
      const int32_t want = bmrt::sampleToken(host, hs, h.data(), step);
      EXPECT_EQ(cu::tokenOf(*viaGraph), want) << what << " step " << step << " (graph)";
      EXPECT_EQ(cu::tokenOf(*viaLaunches), want) << what << " step " << step << " (launches)";
      EXPECT_EQ(separate, want) << what << " step " << step << " (sample_token)";
      if (c.mode == bmrt::SamplingMode::TopK)
        EXPECT_EQ(viaGraph->kept, viaLaunches->kept) << what << " step " << step;
    }
  }
}

} // namespace
