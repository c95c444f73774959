//===- cuda/attention.cu - Attention as batched GEMMs around a masked softmax ===//
//
// Why it is shaped like this:
//  - Per head, three cuBLASLt calls batched over the sequences (strided
//    batches): scores S = scale * Q K^T, then P = masked softmax(S) in one
//    kernel (causal limit, key padding mask, rows with no visible key get
//    zeros), then out = P V. GQA: head h reads kv head h / (heads/kvHeads),
//    which is only an offset into K and V, so it needs no copy.
//  - The score tile [batch, rows, keys] of one head lives in the device's
//    scratch (device.h: grown at the first call, reused by every head and
//    every later call). A fused flash-attention kernel that never writes
//    it is future work; this form is the one the issue asks to trust first.
//  - Forward over a KV cache: the new k/v rows are copied into the cache
//    (skipped when the projections were written there in place), keys are
//    the cache's [0, start + rows). The decode step captured as a CUDA graph
//    (decode_graph.h) reads start from the device (Device::stepStart), for
//    the cache write and for its attention (attention_decode.cu: one block
//    per query row and head, looping over the visible keys only), so
//    nothing in the captured launches depends on the step and the work does
//    on its length.
//  - Backward (training shapes, keys = the projections): the softmax is
//    recomputed, then dP = dOut V^T, dS = P (dP - rowsum(dP P)) in place,
//    dQ += scale dS K, dK += scale dS^T Q, dV += P^T dOut; heads of a kv
//    group add into the same dK/dV in head order (the stream orders them):
//    deterministic, no atomics. attention_backward has start = 0 (a square
//    tile); attention_backward_keys takes the R x (start + R) tile of
//    prefix tuning (attention_prefix.cu).
//  - Which keys a row sees besides its causal limit (a key mask, a prefix
//    and its gate) is attention_keys.h's rule, read by the softmax kernels.
//
//===----------------------------------------------------------------------===//
#include "cuda/attention_keys.h"
#include "cuda/block_reduce.cuh"
#include "cuda/check.h"
#include "cuda/kernels_cuda.h"
#include "host/host_common.h"

#include <cstdint>
#include <limits>
#include <string>

namespace bmrt::cuda {
namespace {

using Rows = RowReduce<float>;

// Row (b, r) of the scores ([.., keys] rows), in place: softmax over the
// visible keys j < start + rows (and j <= start + r when causal, and
// keyVisible: attention_keys.h); invisible keys and rows without any get 0.
// keys = start + rows (the decode step with its position on the device has
// a kernel of its own: attention_decode.cu).
__global__ void maskedSoftmaxKernel(float *s, int64_t rows, int64_t keys, int64_t start,
                                    bool causal, KeyVisibility vis) {
  __shared__ Rows::Storage shared;
  const int64_t b = blockIdx.x / rows, r = blockIdx.x % rows;
  float *row = s + (int64_t)blockIdx.x * keys;
  const int64_t seen = start + rows < keys ? start + rows : keys;
  const int64_t limit = causal ? (start + r + 1 < seen ? start + r + 1 : seen) : seen;
  const bool open = prefixOpen(vis);
  auto visible = [&](int64_t j) { return j < limit && keyVisible(vis, open, b, j); };
  float part = -INFINITY;
  for (int64_t j = threadIdx.x; j < keys; j += kThreads)
    if (visible(j))
      part = fmaxf(part, row[j]);
  const float m = Rows::max(part, shared);
  if (m == -INFINITY) { // nothing visible: zeros, so the output row is zero
    for (int64_t j = threadIdx.x; j < keys; j += kThreads)
      row[j] = 0.0f;
    return;
  }
  part = 0;
  for (int64_t j = threadIdx.x; j < keys; j += kThreads)
    if (visible(j))
      part += expf(row[j] - m);
  const float inv = 1.0f / Rows::sum(part, shared);
  for (int64_t j = threadIdx.x; j < keys; j += kThreads)
    row[j] = visible(j) ? expf(row[j] - m) * inv : 0.0f;
}

// dS = P (dP - sum_j dP_j P_j), row by row, written over dP.
__global__ void softmaxGradInPlaceKernel(float *dp, const float *p, int64_t keys) {
  __shared__ Rows::Storage shared;
  float *d = dp + (int64_t)blockIdx.x * keys;
  const float *pr = p + (int64_t)blockIdx.x * keys;
  float part = 0;
  for (int64_t j = threadIdx.x; j < keys; j += kThreads)
    part += d[j] * pr[j];
  const float s = Rows::sum(part, shared);
  for (int64_t j = threadIdx.x; j < keys; j += kThreads)
    d[j] = pr[j] * (d[j] - s);
}

// cache rows [start, start + rows) of sequence blockIdx.y = the new rows
// (start = *startDev + prefix when startDev is set: the decode step's
// position counts tokens, the prefix's rows come first).
__global__ void cacheWriteKernel(float *cache, const float *x, int64_t rows, int64_t kvDim,
                                 int64_t rowStride, int64_t batchStride, int64_t cap,
                                 int64_t hostStart, const int64_t *startDev, int64_t prefix) {
  const int64_t b = blockIdx.y;
  const int64_t start = startDev ? *startDev + prefix : hostStart;
  for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < rows * kvDim;
       e += (int64_t)gridDim.x * blockDim.x) {
    const int64_t r = e / kvDim, c = e % kvDim;
    cache[(b * cap + start + r) * kvDim + c] = x[b * batchStride + r * rowStride + c];
  }
}

// One strided-batched product over the sequences (kernels_cuda.h's Matmul).
void product(Device &dev, Trans ta, Trans tb, int64_t m, int64_t n, int64_t k, float alpha,
             const float *a, int64_t lda, int64_t strideA, const float *b, int64_t ldb,
             int64_t strideB, float beta, float *c, int64_t ldc, int64_t strideC,
             int64_t batch) {
  Matmul mm;
  mm.transA = ta, mm.transB = tb;
  mm.m = m, mm.n = n, mm.k = k;
  mm.a = a, mm.lda = lda, mm.strideA = strideA;
  mm.b = b, mm.ldb = ldb, mm.strideB = strideB;
  mm.c = c, mm.ldc = ldc, mm.strideC = strideC;
  mm.alpha = alpha, mm.beta = beta, mm.batch = batch;
  matmul(dev, mm);
}

unsigned rowBlocks(int64_t n) {
  if (n > std::numeric_limits<int32_t>::max())
    fail("cuda attention: " + std::to_string(n) + " score rows exceed one grid");
  return (unsigned)n;
}

} // namespace

void attention_forward(Device &dev, const AttentionArgs &a, float *out, const float *q,
                       const float *k, const float *v, float *kc, float *vc) {
  attention_forward_keys(dev, a, plainKeys(a), out, q, k, v, kc, vc);
}

void attention_forward_keys(Device &dev, const AttentionArgs &a, const KeyVisibility &keys,
                            float *out, const float *q, const float *k, const float *v,
                            float *kc, float *vc) {
  host::checkAttentionHeads("attention_forward", a);
  if (a.start < 0 || a.start + a.rows > a.cacheCapacity)
    fail("attention_forward: rows [" + std::to_string(a.start) + ", " +
         std::to_string(a.start + a.rows) + ") do not fit the KV cache capacity " +
         std::to_string(a.cacheCapacity));
  if (a.rows == 0)
    return;
  const int64_t hd = a.headDim, kvDim = a.kvHeads * hd, cap = a.cacheCapacity;
  const int64_t group = a.heads / a.kvHeads;
  // The decode step as a graph: the position on the device
  // (Device::stepStart) decides which cache rows are written and read.
  const bool deviceStart = dev.stepStart != nullptr;
  if (a.batch > 65535)
    fail("attention_forward: batch " + std::to_string(a.batch) + " exceeds 65535 on the GPU");
  for (auto [cache, x] : {std::pair<float *, const float *>{kc, k}, {vc, v}}) {
    const uintptr_t at = (uintptr_t)x, from = (uintptr_t)cache;
    const bool inCache = at >= from && at < from + (uintptr_t)(a.batch * cap * kvDim) * 4;
    if (deviceStart && inCache)
      throw NeedsHostPosition("attention_forward: the new keys or values are rows of the KV "
                              "cache, at a place the host's position chose");
    if (x != cache + a.start * kvDim) { // else the projection wrote the cache in place
      dim3 grid(blocksFor(a.rows * kvDim), (unsigned)a.batch);
      cacheWriteKernel<<<grid, kThreads, 0, dev.compute>>>(cache, x, a.rows, kvDim,
                                                          a.kvRowStride, a.kvBatchStride, cap,
                                                          a.start, dev.stepStart, keys.prefix);
      BMRT_CUDA_CHECK_LAUNCH("cacheWriteKernel");
    }
  }
  if (deviceStart) {
    // The replay's bound counts tokens (decode_graph.cpp compares it with
    // the host's position): the prefix's rows are not theirs.
    const int64_t tokens = cap - keys.prefix;
    dev.stepCapacity =
        dev.stepCapacity > 0 && dev.stepCapacity < tokens ? dev.stepCapacity : tokens;
    attention_decode(dev, a, keys, out, q, kc, vc);
    return;
  }
  const int64_t nk = a.start + a.rows;
  float *s = (float *)scratchOf(dev, sizeof(float) * a.batch * a.rows * nk);
  for (int64_t h = 0; h < a.heads; ++h) {
    const int64_t g = h / group;
    product(dev, Trans::N, Trans::T, a.rows, nk, hd, a.scale, q + h * hd, a.qRowStride,
            a.qBatchStride, kc + g * hd, kvDim, cap * kvDim, 0.0f, s, nk, a.rows * nk,
            a.batch);
    maskedSoftmaxKernel<<<rowBlocks(a.batch * a.rows), kThreads, 0, dev.compute>>>(
        s, a.rows, nk, a.start, a.causal, keys);
    BMRT_CUDA_CHECK_LAUNCH("maskedSoftmaxKernel");
    product(dev, Trans::N, Trans::N, a.rows, hd, nk, 1.0f, s, nk, a.rows * nk, vc + g * hd,
            kvDim, cap * kvDim, 0.0f, out + h * hd, a.outRowStride, a.outBatchStride, a.batch);
  }
}

void attention_backward(Device &dev, const AttentionArgs &a, float *dq, float *dk, float *dv,
                        const float *dout, const float *q, const float *k, const float *v) {
  host::checkAttentionHeads("attention_backward", a);
  if (a.start != 0)
    fail("attention_backward: start must be 0 at training shapes (got " +
         std::to_string(a.start) + ")");
  if (a.keyMask && a.cacheCapacity < a.rows)
    fail("attention_backward: the key mask's row length (cacheCapacity " +
         std::to_string(a.cacheCapacity) + ") is shorter than rows " + std::to_string(a.rows));
  if (a.rows == 0 || (!dq && !dk && !dv))
    return;
  const int64_t tiles = a.batch * a.rows * a.rows;
  float *p = (float *)scratchOf(dev, sizeof(float) * 2 * tiles);
  attention_backward_keys(dev, a, plainKeys(a), p, p + tiles, dq, dk, dv, dout, q, k, v);
}

void attention_backward_keys(Device &dev, const AttentionArgs &a, const KeyVisibility &keys,
                             float *p, float *dp, float *dq, float *dk, float *dv,
                             const float *dout, const float *q, const float *k, const float *v) {
  // R query rows against NK = start + R keys: query r is key start + r.
  const int64_t hd = a.headDim, R = a.rows, NK = a.start + a.rows, group = a.heads / a.kvHeads;
  const int64_t tile = R * NK;
  for (int64_t h = 0; h < a.heads; ++h) {
    const int64_t g = h / group;
    const float *qh = q + h * hd, *kg = k + g * hd, *vg = v + g * hd, *doh = dout + h * hd;
    // P, recomputed as the forward does.
    product(dev, Trans::N, Trans::T, R, NK, hd, a.scale, qh, a.qRowStride, a.qBatchStride, kg,
            a.kvRowStride, a.kvBatchStride, 0.0f, p, NK, tile, a.batch);
    maskedSoftmaxKernel<<<rowBlocks(a.batch * R), kThreads, 0, dev.compute>>>(
        p, R, NK, a.start, a.causal, keys);
    BMRT_CUDA_CHECK_LAUNCH("maskedSoftmaxKernel");
    if (dv) // dV_g += P^T dOut_h
      product(dev, Trans::T, Trans::N, NK, hd, R, 1.0f, p, NK, tile, doh, a.outRowStride,
              a.outBatchStride, 1.0f, dv + g * hd, a.kvRowStride, a.kvBatchStride, a.batch);
    if (!dq && !dk)
      continue;
    // dP = dOut_h V_g^T, then dS = P (dP - rowsum(dP P)) over it.
    product(dev, Trans::N, Trans::T, R, NK, hd, 1.0f, doh, a.outRowStride, a.outBatchStride, vg,
            a.kvRowStride, a.kvBatchStride, 0.0f, dp, NK, tile, a.batch);
    softmaxGradInPlaceKernel<<<rowBlocks(a.batch * R), kThreads, 0, dev.compute>>>(dp, p, NK);
    BMRT_CUDA_CHECK_LAUNCH("softmaxGradInPlaceKernel");
    if (dq) // dQ_h += scale dS K_g
      product(dev, Trans::N, Trans::N, R, hd, NK, a.scale, dp, NK, tile, kg, a.kvRowStride,
              a.kvBatchStride, 1.0f, dq + h * hd, a.qRowStride, a.qBatchStride, a.batch);
    if (dk) // dK_g += scale dS^T Q_h
      product(dev, Trans::T, Trans::N, NK, hd, R, a.scale, dp, NK, tile, qh, a.qRowStride,
              a.qBatchStride, 1.0f, dk + g * hd, a.kvRowStride, a.kvBatchStride, a.batch);
  }
}

} // namespace bmrt::cuda
