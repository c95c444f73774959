//===- cuda/attention_decode.cu - The decode step's attention over [0, pos] ===//
//
// attention_forward with its position in device memory (Device::stepStart,
// the decode step captured as a CUDA graph: decode_graph.h). The graph's
// launches must not depend on the step, yet the work should: a step at
// position 20 of a 4096-row cache should read 21 keys, not 4096. So one
// block per (sequence, query row, head), its grid sized by the arguments
// alone, reads the position on the device and loops over the visible keys
// only:
//  1. the query row into shared memory;
//  2. scores: each warp takes keys j = warp, warp + warps, ... < limit
//     (limit = start + r + 1 when causal, else start + rows), the lanes split
//     the head dimension and cub::WarpReduce adds their products; a key the
//     mask hides (or a prefix key its gate turns off: attention_keys.h)
//     scores -inf;
//  3. the softmax over [0, limit) (block max and sum: block_reduce.cuh);
//  4. out = P V: the block's threads are groups of headDim threads, group g
//     adding keys j = g, g + groups, ..., each thread one output column;
//     then the groups' partials are added in group order.
// Every sum has a fixed order, so a step gives the same bits whether its
// launches are replayed from the graph or launched one by one
// ($BMB_CUDA_GRAPHS=0): check_cuda_infer.py compares them. The scores of a
// row live in the device's scratch (batch x rows x heads x capacity floats,
// the capacity so that the pointer is the same at every step; only
// [0, limit) of each row is written or read).
//
//===----------------------------------------------------------------------===//
#include "cuda/attention_keys.h"
#include "cuda/block_reduce.cuh"
#include "cuda/check.h"
#include "cuda/kernels_cuda.h"

#include <cub/warp/warp_reduce.cuh>

#include <cstdint>
#include <string>

namespace bmrt::cuda {
namespace {

using Rows = RowReduce<float>;
constexpr int kWarp = 32;
constexpr int kWarps = kThreads / kWarp;
// Head dimensions the shared query row holds (48 KiB of shared memory is
// every GPU's default; this is 16 KiB).
constexpr int64_t kMaxHeadDim = 4096;

struct DecodeShape {
  int64_t rows, heads, group, hd, kvDim, cap;
  int64_t qRowStride, qBatchStride, outRowStride, outBatchStride;
  bool causal;
  float scale;
};

// Block (b * rows + r, h): query row r of sequence b, head h.
__global__ void decodeAttentionKernel(float *out, const float *q, const float *kc,
                                      const float *vc, float *scores, KeyVisibility vis,
                                      const int64_t *startDev, DecodeShape s) {
  extern __shared__ float qs[]; // the query row, s.hd floats
  __shared__ Rows::Storage shared;
  __shared__ typename cub::WarpReduce<float>::TempStorage warpTmp[kWarps];
  __shared__ float partial[kThreads];
  const int64_t b = blockIdx.x / s.rows, r = blockIdx.x % s.rows, h = blockIdx.y;
  const int64_t g = h / s.group;
  const int64_t start = *startDev + vis.prefix; // the cache row of query row 0
  const bool open = prefixOpen(vis);
  const int64_t seen = start + s.rows < s.cap ? start + s.rows : s.cap;
  const int64_t limit = s.causal ? (start + r + 1 < seen ? start + r + 1 : seen) : seen;
  float *row = scores + ((int64_t)blockIdx.x * s.heads + h) * s.cap;
  const float *qr = q + b * s.qBatchStride + r * s.qRowStride + h * s.hd;
  float *o = out + b * s.outBatchStride + r * s.outRowStride + h * s.hd;
  const float *keys = kc + b * s.cap * s.kvDim + g * s.hd;
  const float *values = vc + b * s.cap * s.kvDim + g * s.hd;
  for (int64_t d = threadIdx.x; d < s.hd; d += kThreads)
    qs[d] = qr[d];
  __syncthreads();

  // 2. Scores of the visible keys (a warp per key).
  const int warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp;
  for (int64_t j = warp; j < limit; j += kWarps) {
    const float *k = keys + j * s.kvDim;
    float dot = 0.0f;
    for (int64_t d = lane; d < s.hd; d += kWarp)
      dot += qs[d] * k[d];
    dot = cub::WarpReduce<float>(warpTmp[warp]).Sum(dot); // on lane 0
    __syncwarp(); // the warp's storage is reused by its next key
    if (lane == 0)
      row[j] = keyVisible(vis, open, b, j) ? s.scale * dot : -INFINITY;
  }
  __syncthreads();

  // 3. Softmax over [0, limit); a row with no visible key gets zeros.
  float part = -INFINITY;
  for (int64_t j = threadIdx.x; j < limit; j += kThreads)
    part = fmaxf(part, row[j]);
  const float m = Rows::max(part, shared);
  if (m == -INFINITY) {
    for (int64_t d = threadIdx.x; d < s.hd; d += kThreads)
      o[d] = 0.0f;
    return;
  }
  part = 0.0f;
  for (int64_t j = threadIdx.x; j < limit; j += kThreads)
    part += expf(row[j] - m);
  const float inv = 1.0f / Rows::sum(part, shared);
  for (int64_t j = threadIdx.x; j < limit; j += kThreads)
    row[j] = expf(row[j] - m) * inv;
  __syncthreads();

  // 4. P V: groups of hd threads over interleaved keys, then the groups'
  // partials in group order. A head wider than the block: one group, each
  // thread several columns.
  const int64_t groups = s.hd <= kThreads ? kThreads / s.hd : 1;
  if (groups == 1) {
    for (int64_t d = threadIdx.x; d < s.hd; d += kThreads) {
      float acc = 0.0f;
      for (int64_t j = 0; j < limit; ++j)
        acc += row[j] * values[j * s.kvDim + d];
      o[d] = acc;
    }
    return;
  }
  const int64_t grp = threadIdx.x / s.hd, d = threadIdx.x % s.hd;
  if (grp < groups) {
    float acc = 0.0f;
    for (int64_t j = grp; j < limit; j += groups)
      acc += row[j] * values[j * s.kvDim + d];
    partial[threadIdx.x] = acc;
  }
  __syncthreads();
  if (threadIdx.x < s.hd) {
    float acc = 0.0f;
    for (int64_t k = 0; k < groups; ++k)
      acc += partial[k * s.hd + threadIdx.x];
    o[threadIdx.x] = acc;
  }
}

} // namespace

void attention_decode(Device &dev, const AttentionArgs &a, const KeyVisibility &keys,
                      float *out, const float *q, const float *kCache, const float *vCache) {
  if (!dev.stepStart)
    fail("attention_decode: the step's position is not in device memory (Device::stepStart; "
         "a bmrt bug)");
  if (a.headDim > kMaxHeadDim)
    fail("attention_decode: the cuda backend's decode step takes head dimensions up to " +
         std::to_string(kMaxHeadDim) + " (got " + std::to_string(a.headDim) + ")");
  if (a.heads > 65535)
    fail("attention_decode: " + std::to_string(a.heads) + " heads exceed one grid");
  const int64_t blocks = a.batch * a.rows;
  if (blocks > 0x7fffffff)
    fail("attention_decode: " + std::to_string(blocks) + " query rows exceed one grid");
  DecodeShape s;
  s.rows = a.rows, s.heads = a.heads, s.group = a.heads / a.kvHeads, s.hd = a.headDim;
  s.kvDim = a.kvHeads * a.headDim, s.cap = a.cacheCapacity;
  s.qRowStride = a.qRowStride, s.qBatchStride = a.qBatchStride;
  s.outRowStride = a.outRowStride, s.outBatchStride = a.outBatchStride;
  s.causal = a.causal, s.scale = a.scale;
  float *scores =
      (float *)scratchOf(dev, sizeof(float) * (size_t)(blocks * a.heads * a.cacheCapacity));
  dim3 grid((unsigned)blocks, (unsigned)a.heads);
  decodeAttentionKernel<<<grid, kThreads, sizeof(float) * (size_t)a.headDim, dev.compute>>>(
      out, q, kCache, vCache, scores, keys, dev.stepStart, s);
  BMRT_CUDA_CHECK_LAUNCH("decodeAttentionKernel");
}

} // namespace bmrt::cuda
