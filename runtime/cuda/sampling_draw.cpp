//===- cuda/sampling_draw.cpp - One draw of the next token, settings on the GPU ===//
//
// sampling_draw.h has the why. The settings are checked here, on the host,
// with the host Sampler's messages, before anything is queued; the kernels
// (sampling.cu, sampling_sorted.cu) trust them.
//
//===----------------------------------------------------------------------===//
#include "cuda/sampling_draw.h"
#include "cuda/check.h"
#include "cuda/kernels_cuda.h"
#include "cuda/sampling_sorted.h"

#include <limits>
#include <string>

namespace bmrt::cuda {
namespace {

constexpr long long kNoBadIndex = std::numeric_limits<long long>::max();

// drawToken's settings and result: device memory and its pinned mirror,
// allocated at the first draw (never inside a graph capture: the decode
// graph has slots of its own) and freed with the device.
struct DrawSlot {
  DrawParams params;
  DrawResult result;
};

void ensureDrawSlot(Device &dev) {
  if (dev.drawDevice)
    return;
  BMRT_CUDA_CHECK(cudaMalloc(&dev.drawDevice, sizeof(DrawSlot)));
  BMRT_CUDA_CHECK(cudaMallocHost(&dev.drawHost, sizeof(DrawSlot)));
}

} // namespace

bool drawIsSorted(SamplingMode mode) {
  return mode == SamplingMode::TopK || mode == SamplingMode::TopP;
}

DrawParams drawParamsOf(const SamplingConfig &config, int64_t vocab, uint64_t step) {
  if (vocab < 1 || vocab > std::numeric_limits<int32_t>::max())
    fail("sampling: vocabulary of " + std::to_string(vocab) + " tokens");
  const bool greedy = config.mode == SamplingMode::Greedy;
  if (!greedy && !(config.temperature > 0))
    fail("sampling: temperature must be > 0 (got " + std::to_string(config.temperature) + ")");
  if (config.mode == SamplingMode::TopK && config.topK < 1)
    fail("top_k sampling needs k > 0, not " + std::to_string(config.topK));
  if (config.mode == SamplingMode::TopP && !(config.topP >= 0 && config.topP <= 1))
    fail("top_p sampling needs p in [0, 1], not " + std::to_string(config.topP));
  DrawParams p;
  p.mode = (int32_t)config.mode;
  p.temperature = config.temperature;
  p.topK = config.topK;
  p.topP = config.topP;
  p.seed = config.seed;
  p.step = step;
  return p;
}

void enqueueDraw(Device &dev, bool sorted, const DrawParams *params, const float *logits,
                 int64_t vocab, DrawResult *result) {
  if (sorted)
    launchSortedDraw(dev, params, logits, vocab, result);
  else
    launchPlainDraw(dev, params, logits, vocab, result);
}

int32_t tokenOf(const DrawResult &r) {
  if (r.badIndex != kNoBadIndex)
    fail(std::string("the model produced an invalid logit (") + (r.badIsNan ? "nan" : "inf") +
         ") for token " + std::to_string(r.badIndex));
  if (r.allNegInf)
    fail("every logit is -inf: there is no token to sample");
  return (int32_t)r.token;
}

DrawResult drawToken(Device &dev, const SamplingConfig &config, const float *logits,
                     int64_t vocab, uint64_t step) {
  const DrawParams params = drawParamsOf(config, vocab, step); // before the GPU is touched
  ensureDrawSlot(dev);
  DrawSlot *host = (DrawSlot *)dev.drawHost, *device = (DrawSlot *)dev.drawDevice;
  // The last draw's copies finished before it returned: the pinned slot is free.
  host->params = params;
  BMRT_CUDA_CHECK(cudaMemcpyAsync(&device->params, &host->params, sizeof(DrawParams),
                                  cudaMemcpyHostToDevice, dev.compute));
  enqueueDraw(dev, drawIsSorted(config.mode), &device->params, logits, vocab, &device->result);
  // The token is needed on the host (to stream it, to stop at EOS).
  BMRT_CUDA_CHECK(cudaMemcpyAsync(&host->result, &device->result, sizeof(DrawResult),
                                  cudaMemcpyDeviceToHost, dev.compute));
  BMRT_CUDA_CHECK(cudaStreamSynchronize(dev.compute));
  return host->result;
}

int32_t sample_token(Device &dev, const SamplingConfig &config, const float *logits,
                     int64_t vocab, uint64_t step) {
  return tokenOf(drawToken(dev, config, logits, vocab, step));
}

} // namespace bmrt::cuda
