//===- cuda/sampling.cu - The next token, chosen on the GPU ---------------===//
//
// bmrt/sampling.h's greedy and temperature modes over a logits row in device
// memory, so a decode step copies one token id back, not the vocabulary's
// logits. One block of 1024 threads; thread t owns the contiguous ids
// [t * per, (t + 1) * per), so every per-thread sum runs in id order and the
// block's prefix (CUB BlockScan) gives each thread where its ids start in
// the cumulative distribution:
//  - the logits are checked as the host checks them: the lowest id holding
//    NaN or +inf is reported with the host's message;
//  - greedy: the argmax, lowest id on ties (torch.argmax), via BlockReduce;
//  - temperature: p_i = exp(x_i / T - max), summed in double; the token is
//    the first id whose cumulative sum exceeds u * total, u the Philox
//    uniform at (seed, step) the host draws too (the last id with p > 0 if
//    rounding leaves none).
// The mode, temperature, seed and step are read from device memory
// (DrawParams, sampling_draw.h), so the decode step's graph replays the
// kernel for every token. top_k and top_p sort the row first:
// sampling_sorted.cu.
//
//===----------------------------------------------------------------------===//
#include "bmrt/philox.h"
#include "cuda/check.h"
#include "cuda/kernels_cuda.h"
#include "cuda/sampling_block.cuh"
#include "cuda/sampling_draw.h"

#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>

#include <limits>
#include <string>

namespace bmrt::cuda {
namespace {

constexpr int kSampleThreads = 1024;
using sampling_block::kNone;
using sampling_block::MaxLL;
using sampling_block::MinLL;

struct Best {
  float v;
  long long i;
};
struct BestOp {
  __device__ Best operator()(const Best &a, const Best &b) const {
    return (a.v > b.v || (a.v == b.v && a.i < b.i)) ? a : b;
  }
};
struct MaxD {
  __device__ double operator()(double a, double b) const { return a > b ? a : b; }
};

__global__ void sampleKernel(DrawResult *out, const float *logits, int64_t V,
                             const DrawParams *params, const DeviceErrorSlot *errors) {
  using BestReduce = cub::BlockReduce<Best, kSampleThreads>;
  using IndexReduce = cub::BlockReduce<long long, kSampleThreads>;
  using DoubleReduce = cub::BlockReduce<double, kSampleThreads>;
  using Scan = cub::BlockScan<double, kSampleThreads>;
  __shared__ union {
    BestReduce::TempStorage best;
    IndexReduce::TempStorage index;
    DoubleReduce::TempStorage dbl;
    Scan::TempStorage scan;
  } tmp;
  __shared__ long long sharedIndex;
  __shared__ double sharedDouble;

  const bool greedy = params->mode == (int32_t)SamplingMode::Greedy;
  const double temperature = params->temperature;
  const int deviceError = errors ? errors->flag : 0;
  int64_t lo, hi;
  sampling_block::threadRange<kSampleThreads>(V, lo, hi);

  const long long bad =
      sampling_block::firstBadLogit<kSampleThreads>(logits, lo, hi, tmp.index, sharedIndex);
  if (bad != kNone) {
    if (threadIdx.x == 0)
      *out = DrawResult{-1, bad, isnan(logits[bad]) ? 1 : 0, 0, 0, deviceError, 0};
    return;
  }

  if (greedy) {
    Best mine{-INFINITY, kNone};
    for (int64_t i = lo; i < hi; ++i)
      if (mine.i == kNone || logits[i] > mine.v)
        mine = Best{logits[i], (long long)i};
    Best best = BestReduce(tmp.best).Reduce(mine, BestOp());
    if (threadIdx.x == 0)
      *out = DrawResult{best.i, kNone, 0, 0, 0, deviceError, 0};
    return;
  }

  // Temperature: the maximum of x / T, then p_i = exp(x_i / T - max).
  double m = -INFINITY;
  for (int64_t i = lo; i < hi; ++i)
    m = fmax(m, (double)logits[i] / temperature);
  m = DoubleReduce(tmp.dbl).Reduce(m, MaxD());
  if (threadIdx.x == 0)
    sharedDouble = m;
  __syncthreads();
  m = sharedDouble;
  __syncthreads();
  if (m == -INFINITY) {
    if (threadIdx.x == 0)
      *out = DrawResult{-1, kNone, 0, 1, 0, deviceError, 0};
    return;
  }
  double part = 0;
  long long lastKept = -1;
  for (int64_t i = lo; i < hi; ++i) {
    const double p = exp((double)logits[i] / temperature - m);
    part += p;
    if (p > 0)
      lastKept = i;
  }
  double before, total;
  Scan(tmp.scan).ExclusiveSum(part, before, total);
  __syncthreads();
  // The host's uniform for this token (the same integer arithmetic).
  const double u = philoxUniform(params->seed, params->step, kSamplingStream);
  const double target = u * total;
  long long token = kNone;
  if (before <= target && target < before + part) { // the crossing is in my ids
    double cumulative = before;
    for (int64_t i = lo; i < hi && token == kNone; ++i) {
      const double p = exp((double)logits[i] / temperature - m);
      cumulative += p;
      if (p > 0 && cumulative > target)
        token = i;
    }
  }
  token = IndexReduce(tmp.index).Reduce(token, MinLL());
  __syncthreads();
  const long long last = IndexReduce(tmp.index).Reduce(lastKept, MaxLL());
  if (threadIdx.x == 0)
    *out = DrawResult{token != kNone ? token : last, kNone, 0, 0, 0, deviceError, 0};
}

} // namespace

void launchPlainDraw(Device &dev, const DrawParams *params, const float *logits, int64_t vocab,
                     DrawResult *result) {
  sampleKernel<<<1, kSampleThreads, 0, dev.compute>>>(result, logits, vocab, params,
                                                      dev.errors);
  BMRT_CUDA_CHECK_LAUNCH("sampleKernel");
}

} // namespace bmrt::cuda
