//===- cuda/sampling_sorted.cu - top_k and top_p on the GPU ---------------===//
//
// bmrt/sampling.h's top_k and top_p over a logits row in device memory:
// the host Sampler's cut, renormalisation and draw (app/sampling.cpp) from
// the same Philox uniform at (seed, step), so the device picks the host's
// token wherever rounding does not decide. Two steps on the compute stream:
//  1. the row sorted by logit, descending, ids alongside
//     (cub::DeviceRadixSort: stable, so equal logits stay in id order, the
//     host's tie order for top_p);
//  2. one block of 1024 threads (the kernel below): the host's NaN/+inf
//     check in id order; the kept set, a prefix of the sorted row:
//       top_k: every logit >= the k-th largest (ties with it kept, as
//              TopKLogitsWarper);
//       top_p: p_j = exp(x_j / T - max) / sum in sorted order; the shortest
//              prefix whose mass reaches p (at least one token: the host's
//              loop);
//     the kept weights exp(x / T - max) scattered back to id order (0 for
//     the rest), then the temperature kernel's draw over them in id order:
//     the first id whose cumulative weight exceeds u * total.
// The mode's settings, the seed and the step (u's Philox counter) are read
// from device memory (DrawParams, sampling_draw.h): the decode step's graph
// replays these launches for every token.
// Rounding: sums run in another association than the host's sequential
// ones (~1e-16 relative), so a cumulative sum within that of p or of the
// draw's target can fall on the other side; logits whose exponentials round
// to equal doubles are ordered by logit here, by id on the host. Both are
// as rare as the draw landing on a boundary.
//
//===----------------------------------------------------------------------===//
#include "bmrt/philox.h"
#include "cuda/check.h"
#include "cuda/launch.cuh"
#include "cuda/sampling_block.cuh"
#include "cuda/sampling_draw.h"
#include "cuda/sampling_sorted.h"

#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/device/device_radix_sort.cuh>

#include <limits>
#include <string>

namespace bmrt::cuda {
namespace {

constexpr int kBlock = 1024;
using sampling_block::kNone;
using sampling_block::MaxLL;
using sampling_block::MinLL;

__global__ void iotaKernel(int32_t *ids, int64_t n) {
  BMRT_GRID_STRIDE(i, n) { ids[i] = (int32_t)i; }
}

// The weight exp(x / T - max) the host's softmaxKept gives a kept token.
__device__ inline double weightOf(float x, double temperature, double maxScaled) {
  return exp((double)x / temperature - maxScaled);
}

__global__ void sortedDrawKernel(DrawResult *out, const float *logits, const float *sorted,
                                 const int32_t *order, double *weight, int64_t V,
                                 const DrawParams *params, const DeviceErrorSlot *errors) {
  using LLReduce = cub::BlockReduce<long long, kBlock>;
  using DoubleReduce = cub::BlockReduce<double, kBlock>;
  using Scan = cub::BlockScan<double, kBlock>;
  __shared__ union {
    LLReduce::TempStorage ll;
    DoubleReduce::TempStorage dbl;
    Scan::TempStorage scan;
  } tmp;
  __shared__ long long sharedLL;
  const bool topK = params->mode == (int32_t)SamplingMode::TopK;
  const int64_t k = params->topK;
  const double topP = params->topP, temperature = params->temperature;
  const int deviceError = errors ? errors->flag : 0;

  // Thread t owns positions [lo, hi): ids in the check and the draw, sorted
  // positions in the cut.
  int64_t lo, hi;
  sampling_block::threadRange<kBlock>(V, lo, hi);

  const long long bad = sampling_block::firstBadLogit<kBlock>(logits, lo, hi, tmp.ll, sharedLL);
  if (bad != kNone) {
    if (threadIdx.x == 0)
      *out = DrawResult{-1, bad, isnan(logits[bad]) ? 1 : 0, 0, 0, deviceError, 0};
    return;
  }
  // The largest logit is kept by either cut, so it is softmaxKept's max.
  const double maxScaled = (double)sorted[0] / temperature;
  if (maxScaled == -INFINITY) {
    if (threadIdx.x == 0)
      *out = DrawResult{-1, kNone, 0, 1, 0, deviceError, 0};
    return;
  }

  long long keep; // the kept prefix's length
  if (topK) {
    const float threshold = sorted[(k < V ? k : V) - 1];
    long long mine = 0;
    for (int64_t j = lo; j < hi; ++j)
      mine += sorted[j] >= threshold;
    keep = LLReduce(tmp.ll).Sum(mine);
  } else {
    double part = 0;
    for (int64_t j = lo; j < hi; ++j)
      part += weightOf(sorted[j], temperature, maxScaled);
    double before, total;
    Scan(tmp.scan).ExclusiveSum(part, before, total);
    __syncthreads();
    // The host: keep = the smallest count whose mass (of probabilities
    // normalised by the total) reaches p; all of them if none does.
    long long first = kNone;
    double mass = before / total;
    for (int64_t j = lo; j < hi && first == kNone; ++j) {
      mass += weightOf(sorted[j], temperature, maxScaled) / total;
      if (mass >= topP)
        first = j + 1;
    }
    first = LLReduce(tmp.ll).Reduce(first, MinLL());
    keep = first != kNone ? first : V;
  }
  if (threadIdx.x == 0)
    sharedLL = keep;
  __syncthreads();
  keep = sharedLL;

  // The kept weights in id order (ids are a permutation: every slot written).
  for (int64_t j = lo; j < hi; ++j)
    weight[order[j]] = j < keep ? weightOf(sorted[j], temperature, maxScaled) : 0.0;
  __syncthreads(); // the block's global writes are visible to it after this

  // The temperature kernel's draw over the kept weights, in id order.
  double part = 0;
  long long lastKept = -1;
  for (int64_t i = lo; i < hi; ++i) {
    part += weight[i];
    if (weight[i] > 0)
      lastKept = i;
  }
  double before, total;
  Scan(tmp.scan).ExclusiveSum(part, before, total);
  __syncthreads();
  // The host's uniform for this token (the same integer arithmetic).
  const double u = philoxUniform(params->seed, params->step, kSamplingStream);
  const double target = u * total;
  long long token = kNone;
  if (before <= target && target < before + part) {
    double cumulative = before;
    for (int64_t i = lo; i < hi && token == kNone; ++i) {
      cumulative += weight[i];
      if (weight[i] > 0 && cumulative > target)
        token = i;
    }
  }
  token = LLReduce(tmp.ll).Reduce(token, MinLL());
  __syncthreads();
  const long long last = LLReduce(tmp.ll).Reduce(lastKept, MaxLL());
  if (threadIdx.x == 0)
    *out = DrawResult{token != kNone ? token : last, kNone, 0, 0, keep, deviceError, 0};
}

size_t aligned(size_t bytes) { return (bytes + 255) / 256 * 256; }

} // namespace

void launchSortedDraw(Device &dev, const DrawParams *params, const float *logits,
                      int64_t vocab, DrawResult *result) {
  const int n = (int)vocab; // drawParamsOf checked it fits
  // Scratch: the sorted logits, ids in and out, the weights, then the sort's
  // temporary storage (each 256-byte aligned). Sized the same at every step
  // of a vocabulary, so a captured graph keeps its pointers.
  size_t sortBytes = 0;
  BMRT_CUDA_CHECK(cub::DeviceRadixSort::SortPairsDescending(
      nullptr, sortBytes, (const float *)nullptr, (float *)nullptr, (const int32_t *)nullptr,
      (int32_t *)nullptr, n, 0, 32, dev.compute));
  const size_t sortedAt = 0;
  const size_t idsInAt = sortedAt + aligned((size_t)n * sizeof(float));
  const size_t idsOutAt = idsInAt + aligned((size_t)n * sizeof(int32_t));
  const size_t weightAt = idsOutAt + aligned((size_t)n * sizeof(int32_t));
  const size_t tempAt = weightAt + aligned((size_t)n * sizeof(double));
  char *s = (char *)scratchOf(dev, tempAt + sortBytes);
  float *sorted = (float *)(s + sortedAt);
  int32_t *idsIn = (int32_t *)(s + idsInAt), *idsOut = (int32_t *)(s + idsOutAt);
  double *weight = (double *)(s + weightAt);

  iotaKernel<<<blocksFor(n), kThreads, 0, dev.compute>>>(idsIn, n);
  BMRT_CUDA_CHECK_LAUNCH("iotaKernel");
  BMRT_CUDA_CHECK(cub::DeviceRadixSort::SortPairsDescending(
      s + tempAt, sortBytes, logits, sorted, idsIn, idsOut, n, 0, 32, dev.compute));
  sortedDrawKernel<<<1, kBlock, 0, dev.compute>>>(result, logits, sorted, idsOut, weight, n,
                                                  params, dev.errors);
  BMRT_CUDA_CHECK_LAUNCH("sortedDrawKernel");
}

SortedDraw sorted_draw(Device &dev, const SamplingConfig &config, const float *logits,
                       int64_t vocab, uint64_t step) {
  if (!drawIsSorted(config.mode))
    fail("sorted_draw: top_k or top_p only (got " + std::string(samplingModeName(config.mode)) +
         ")");
  return drawToken(dev, config, logits, vocab, step);
}

} // namespace bmrt::cuda
