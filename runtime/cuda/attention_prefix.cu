//===- cuda/attention_prefix.cu - Prefix tuning's attention on the GPU ----===//
//
// bmrt::attention_prefix_forward / _backward (host/attention_prefix.cpp,
// host/backward_attention_prefix.cpp) on the device, built on the plain
// attention's path (attention.cu) with the keys rule of attention_keys.h:
//  - forward: every call writes pk/pv into cache rows [0, P) of every
//    sequence (one small kernel: the caches need no separate
//    initialisation, as on the host), then attention_forward runs with the
//    tokens at rows P + start + r: the score tile is rows x (P + start +
//    rows), the causal limit of query r is key P + start + r. Where the
//    host widens the key mask into a new [batch, P + ...] buffer, the
//    softmax here reads the rule (prefix keys visible unless the gate is 0,
//    the tokens' mask at column j - P), so nothing is allocated, and the
//    gate is read on the device: a decode step with a prefix replays as one
//    CUDA graph (its position, in device memory, counts tokens).
//  - backward: as the host, the keys [pk; k[b]] and values [pv; v[b]] are
//    assembled into contiguous scratch (k/v may be strided parts of a fused
//    [q | k | v] buffer, and the strided-batched GEMMs want one stride per
//    sequence), attention.cu's backward products run over the R x (P + R)
//    tile with query r at key P + r into zeroed scratch dK/dV, then those
//    are split: rows [P, P + R) added into dk/dv, rows [0, P) summed over
//    the batch into dpk/dpv, one thread per element adding the sequences in
//    batch order (the host's order: no atomics, the same bits every run).
//
//===----------------------------------------------------------------------===//
#include "cuda/attention_keys.h"
#include "cuda/check.h"
#include "cuda/kernels_cuda.h"
#include "cuda/launch.cuh"
#include "host/host_common.h"

#include <cstdint>
#include <string>

namespace bmrt::cuda {
namespace {

// Cache rows [0, P) of sequence blockIdx.y = the prefix ([P, kv width] =
// `elems` floats); sequences are `seq` floats apart.
__global__ void prefixWriteKernel(float *kc, float *vc, const float *pk, const float *pv,
                                  int64_t elems, int64_t seq) {
  const int64_t b = blockIdx.y;
  BMRT_GRID_STRIDE(e, elems) {
    kc[b * seq + e] = pk[e];
    vc[b * seq + e] = pv[e];
  }
}

// Sequence blockIdx.y's keys [pk; k[b]] and values [pv; v[b]] as
// contiguous [nk, kvDim] rows of kc/vc (k/v rows at their strides).
__global__ void assembleKeysKernel(float *kc, float *vc, const float *pk, const float *pv,
                                   const float *k, const float *v, int64_t P, int64_t nk,
                                   int64_t kvDim, int64_t rowStride, int64_t batchStride) {
  const int64_t b = blockIdx.y;
  BMRT_GRID_STRIDE(e, nk * kvDim) {
    const int64_t j = e / kvDim, c = e % kvDim, to = b * nk * kvDim + e;
    if (j < P) {
      kc[to] = pk[e];
      vc[to] = pv[e];
    } else {
      const int64_t from = b * batchStride + (j - P) * rowStride + c;
      kc[to] = k[from];
      vc[to] = v[from];
    }
  }
}

// dk/dv (their strides) += the token rows [P, P + R) of sequence
// blockIdx.y's assembled gradients. A null dk or dv is not wanted.
__global__ void addTokenGradsKernel(float *dk, float *dv, const float *dkc, const float *dvc,
                                    int64_t P, int64_t R, int64_t kvDim, int64_t rowStride,
                                    int64_t batchStride) {
  const int64_t b = blockIdx.y;
  BMRT_GRID_STRIDE(e, R * kvDim) {
    const int64_t r = e / kvDim, c = e % kvDim;
    const int64_t from = (b * (P + R) + P + r) * kvDim + c;
    const int64_t to = b * batchStride + r * rowStride + c;
    if (dk)
      dk[to] += dkc[from];
    if (dv)
      dv[to] += dvc[from];
  }
}

// dpk[i] += the prefix rows' gradients of each sequence, in batch order
// (host/backward_attention_prefix.cpp's order, one float add at a time).
__global__ void sumPrefixGradsKernel(float *dpk, float *dpv, const float *dkc, const float *dvc,
                                     int64_t batch, int64_t elems, int64_t seq) {
  BMRT_GRID_STRIDE(i, elems) {
    float gk = dpk ? dpk[i] : 0.0f, gv = dpv ? dpv[i] : 0.0f;
    for (int64_t b = 0; b < batch; ++b) {
      gk += dkc[b * seq + i];
      gv += dvc[b * seq + i];
    }
    if (dpk)
      dpk[i] = gk;
    if (dpv)
      dpv[i] = gv;
  }
}

void checkBatch(const char *kernel, int64_t batch) {
  if (batch > 65535)
    fail(std::string(kernel) + ": batch " + std::to_string(batch) +
         " exceeds 65535 on the GPU");
}

} // namespace

void attention_prefix_forward(Device &dev, const AttentionArgs &args, int64_t prefixRows,
                              const float *pk, const float *pv, const float *gate, float *out,
                              const float *q, const float *k, const float *v, float *kc,
                              float *vc) {
  const int64_t P = prefixRows, kvDim = args.kvHeads * args.headDim, cap = args.cacheCapacity;
  host::checkAttentionHeads("attention_prefix_forward", args);
  if (P < 1 || args.start < 0 || P + args.start + args.rows > cap)
    fail("attention_prefix_forward: " + std::to_string(P) + " prefix rows and rows [" +
         std::to_string(args.start) + ", " + std::to_string(args.start + args.rows) +
         ") do not fit the KV cache capacity " + std::to_string(cap));
  checkBatch("attention_prefix_forward", args.batch);
  // Every step rewrites the prefix (P rows per sequence, cheap next to the
  // attention itself), as the host does.
  dim3 grid(blocksFor(P * kvDim), (unsigned)args.batch);
  prefixWriteKernel<<<grid, kThreads, 0, dev.compute>>>(kc, vc, pk, pv, P * kvDim, cap * kvDim);
  BMRT_CUDA_CHECK_LAUNCH("prefixWriteKernel");
  AttentionArgs a = args;
  a.start = args.start + P;
  KeyVisibility keys;
  keys.mask = args.keyMask; // [batch, cap - P]: the tokens only
  keys.maskStride = cap - P;
  keys.prefix = P;
  keys.gate = gate;
  attention_forward_keys(dev, a, keys, out, q, k, v, kc, vc);
}

void attention_prefix_backward(Device &dev, const AttentionArgs &args, int64_t prefixRows,
                               const float *pk, const float *pv, const float *gate, float *dpk,
                               float *dpv, float *dq, float *dk, float *dv, const float *dout,
                               const float *q, const float *k, const float *v) {
  const int64_t P = prefixRows, R = args.rows, B = args.batch;
  const int64_t kvDim = args.kvHeads * args.headDim, NK = P + R;
  host::checkAttentionHeads("attention_prefix_backward", args);
  if (P < 1 || args.start != 0)
    fail("attention_prefix_backward: needs prefixRows >= 1 and start 0 (got " +
         std::to_string(P) + ", " + std::to_string(args.start) + ")");
  if (args.keyMask && args.cacheCapacity < R)
    fail("attention_prefix_backward: the key mask's row length (cacheCapacity " +
         std::to_string(args.cacheCapacity) + ") is shorter than rows " + std::to_string(R));
  checkBatch("attention_prefix_backward", B);
  if (R == 0)
    return;
  // Scratch: kc, vc, dkc, dvc [B, NK, kvDim], then the P and dP tiles.
  const int64_t n = B * NK * kvDim, tiles = B * R * NK;
  float *kc = (float *)scratchOf(dev, sizeof(float) * (size_t)(4 * n + 2 * tiles));
  float *vc = kc + n, *dkc = vc + n, *dvc = dkc + n, *p = dvc + n, *dp = p + tiles;
  dim3 keysGrid(blocksFor(NK * kvDim), (unsigned)B);
  assembleKeysKernel<<<keysGrid, kThreads, 0, dev.compute>>>(
      kc, vc, pk, pv, k, v, P, NK, kvDim, args.kvRowStride, args.kvBatchStride);
  BMRT_CUDA_CHECK_LAUNCH("assembleKeysKernel");
  BMRT_CUDA_CHECK(cudaMemsetAsync(dkc, 0, sizeof(float) * (size_t)(2 * n), dev.compute));
  AttentionArgs a = args;
  a.start = P;
  a.kvRowStride = kvDim;
  a.kvBatchStride = NK * kvDim;
  a.cacheCapacity = NK;
  KeyVisibility keys;
  keys.mask = args.keyMask; // [batch, args.cacheCapacity]: the tokens only
  keys.maskStride = args.cacheCapacity;
  keys.prefix = P;
  keys.gate = gate;
  attention_backward_keys(dev, a, keys, p, dp, dq, dkc, dvc, dout, q, kc, vc);
  dim3 tokensGrid(blocksFor(R * kvDim), (unsigned)B);
  addTokenGradsKernel<<<tokensGrid, kThreads, 0, dev.compute>>>(
      dk, dv, dkc, dvc, P, R, kvDim, args.kvRowStride, args.kvBatchStride);
  BMRT_CUDA_CHECK_LAUNCH("addTokenGradsKernel");
  sumPrefixGradsKernel<<<blocksFor(P * kvDim), kThreads, 0, dev.compute>>>(
      dpk, dpv, dkc, dvc, B, P * kvDim, NK * kvDim);
  BMRT_CUDA_CHECK_LAUNCH("sumPrefixGradsKernel");
}

} // namespace bmrt::cuda
