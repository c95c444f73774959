//===- cuda/sampling_draw.h - One draw of the next token, settings on the GPU ===//
//
// sample_token (kernels_cuda.h) in two halves, so the draw can also be part
// of the decode step's CUDA graph (decode_graph.h): the graph's launches and
// their arguments are fixed at capture, so everything that changes from one
// token to the next - the mode's settings, the seed and the Philox counter
// (the token's step) - is read by the kernels from device memory
// (DrawParams), and the result is written there (DrawResult). The kernels
// compute the host's uniform philoxUniform(seed, step, kSamplingStream)
// themselves (bmrt/philox.h is __host__ __device__: the same integer
// arithmetic, the same bits).
//
// The same kernels run whether the draw is replayed from a graph, launched
// on its own after the step, or launched by sample_token after a prefill,
// so the ids are the same for the same seed.
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_CUDA_SAMPLING_DRAW_H
#define BMRT_CUDA_SAMPLING_DRAW_H

#include "bmrt/sampling.h"
#include "cuda/device.h"

#include <cstdint>

namespace bmrt::cuda {

/// One draw's settings, in device memory while the kernels run.
struct DrawParams {
  int32_t mode = 0; // SamplingMode
  int32_t unused = 0;
  double temperature = 1.0;
  int64_t topK = 0;
  double topP = 1.0;
  uint64_t seed = 0, step = 0; // the Philox key and counter of the draw
};

/// What the draw found. One copy of it back tells the app the token, the
/// host Sampler's errors, and whether a kernel of the step before it
/// recorded a bad index (Device::errors' flag).
struct DrawResult {
  long long token = -1;   // -1 on an error below
  long long badIndex = 0; // lowest NaN/+inf id, LLONG_MAX if none
  int badIsNan = 0;
  int allNegInf = 0;      // every logit is -inf
  long long kept = 0;     // top_k / top_p: the tokens the cut kept (0 otherwise)
  int deviceError = 0;    // Device::errors was set when the draw ran
  int unused = 0;
};

/// Whether `mode` draws through the sorted path (a radix sort, then the cut
/// and the draw: sampling_sorted.cu) or the one-block kernel (sampling.cu).
/// A captured graph holds one of the two.
bool drawIsSorted(SamplingMode mode);

/// The settings of the draw of token `step` from a row of `vocab` logits;
/// fails on a setting or vocabulary the host Sampler refuses, naming it.
DrawParams drawParamsOf(const SamplingConfig &config, int64_t vocab, uint64_t step);

/// Queues the draw on the compute stream: the sorted or the one-block path,
/// settings from `params`, the result to `result` (both device memory), the
/// sort's buffers in the device's scratch (scratchOf). It only launches:
/// once the scratch is large enough it neither allocates nor synchronises,
/// so a stream capture records it.
void enqueueDraw(Device &dev, bool sorted, const DrawParams *params, const float *logits,
                 int64_t vocab, DrawResult *result);

/// The one-block path's launch (sampling.cu; the sorted path's is
/// launchSortedDraw, sampling_sorted.h).
void launchPlainDraw(Device &dev, const DrawParams *params, const float *logits, int64_t vocab,
                     DrawResult *result);

/// The drawn token, or the host Sampler's error (an invalid logit, every
/// logit -inf).
int32_t tokenOf(const DrawResult &r);

/// The draw of token `step` on its own: the settings copied in, the draw
/// queued, its result copied back (one synchronisation). sample_token is
/// tokenOf of it.
DrawResult drawToken(Device &dev, const SamplingConfig &config, const float *logits,
                     int64_t vocab, uint64_t step);

} // namespace bmrt::cuda

#endif // BMRT_CUDA_SAMPLING_DRAW_H
