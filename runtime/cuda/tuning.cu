//===- cuda/tuning.cu - Soft embedding, mask rows, verbalizer loss on the GPU ===//
//
// bmrt/tuning.h on the device (tuning_cuda.h). Why it is shaped like this:
//  - The gathers (soft embedding, mask rows) run one thread per output
//    element, consecutive threads along a row, as embedding_forward.
//  - Their backward scatter-adds are deterministic without atomics and add
//    in the host's order: one thread per column (per example and column for
//    the mask rows) adds the rows in order, so repeated ids or positions sum
//    as on the host, bit for bit.
//  - The verbalizer loss is a few dozen logits per example: one block per
//    example, thread 0 runs the host kernel's arithmetic
//    (bmrt/verbalizer_element.h, in double, same order), the block clears
//    the example's M*V gradient rows between its forward and backward
//    (dlogits may alias logits). Nothing is summed across threads, so there
//    is no reduction to share; only the libm (exp, log) and nvcc's fused
//    multiply-adds differ from the host.
//  - Bad ids, positions, labels and label words are recorded in the
//    device's error slot (no throw in a kernel); checkDeviceErrors reports
//    them with the host kernels' messages.
//
//===----------------------------------------------------------------------===//
#include "bmrt/verbalizer_element.h"
#include "cuda/check.h"
#include "cuda/launch.cuh"
#include "cuda/tuning_cuda.h"

#include <string>

namespace bmrt::cuda {
namespace {

__global__ void softEmbeddingKernel(float *out, const int32_t *ids, const float *table,
                                    const float *soft, int64_t rows, int64_t num,
                                    int64_t numSoft, int64_t dim, DeviceErrorSlot *errors) {
  BMRT_GRID_STRIDE(e, rows * dim) {
    const int64_t r = e / dim, i = e % dim;
    const int32_t id = ids[r];
    if (id < 0 || id >= num + numSoft) {
      out[e] = 0.0f;
      if (i == 0)
        reportBadIndex(errors, kBadSoftTokenId, id, r, num + numSoft, 0);
      continue;
    }
    out[e] = id < num ? table[(int64_t)id * dim + i] : soft[(int64_t)(id - num) * dim + i];
  }
}

__global__ void softEmbeddingBackwardKernel(float *dtable, float *dsoft, const int32_t *ids,
                                            const float *dout, int64_t rows, int64_t num,
                                            int64_t numSoft, int64_t dim,
                                            DeviceErrorSlot *errors) {
  BMRT_GRID_STRIDE(i, dim) {
    for (int64_t r = 0; r < rows; ++r) {
      const int32_t id = ids[r];
      if (id < 0 || id >= num + numSoft) {
        if (i == 0)
          reportBadIndex(errors, kBadSoftTokenId, id, r, num + numSoft, 0);
        continue;
      }
      float *dst = id < num ? (dtable ? dtable + (int64_t)id * dim : nullptr)
                            : (dsoft ? dsoft + (int64_t)(id - num) * dim : nullptr);
      if (dst)
        dst[i] += dout[r * dim + i];
    }
  }
}

__global__ void gatherRowsKernel(float *out, const float *x, const int32_t *pos, int64_t batch,
                                 int64_t seq, int64_t masks, int64_t dim,
                                 DeviceErrorSlot *errors) {
  BMRT_GRID_STRIDE(e, batch * masks * dim) {
    const int64_t bm = e / dim, i = e % dim, b = bm / masks;
    const int32_t p = pos[bm];
    if (p < 0 || p >= seq) {
      out[e] = 0.0f;
      if (i == 0)
        reportBadIndex(errors, kBadMaskPosition, p, b, seq, 0);
      continue;
    }
    out[e] = x[(b * seq + p) * dim + i];
  }
}

__global__ void gatherRowsBackwardKernel(float *dx, const float *dout, const int32_t *pos,
                                         int64_t batch, int64_t seq, int64_t masks, int64_t dim,
                                         DeviceErrorSlot *errors) {
  BMRT_GRID_STRIDE(e, batch * dim) {
    const int64_t b = e / dim, i = e % dim;
    for (int64_t m = 0; m < masks; ++m) {
      const int32_t p = pos[b * masks + m];
      if (p < 0 || p >= seq) {
        if (i == 0)
          reportBadIndex(errors, kBadMaskPosition, p, b, seq, 0);
        continue;
      }
      dx[(b * seq + p) * dim + i] += dout[(b * masks + m) * dim + i];
    }
  }
}

// The masks' reduce modes, by value (the emitted program's array is host
// memory).
constexpr int kMaxMasks = 16;
struct Reduces {
  WordReduce v[kMaxMasks];
};

// One example's scratch: its doubles, then its argmax ints, 8-byte aligned.
struct ScratchLayout {
  int64_t doubles, ints, bytesPerExample, wordsOfBytes;
};

ScratchLayout scratchLayout(const VerbalizerShape &s) {
  ScratchLayout l;
  l.doubles = verbalizer_scratch_doubles(s);
  l.ints = s.masks * s.labels * s.words;
  l.bytesPerExample = (int64_t)sizeof(double) * (l.doubles + (l.ints + 1) / 2);
  l.wordsOfBytes = (int64_t)sizeof(int64_t) * s.masks * s.labels;
  return l;
}

__global__ void verbalizerKernel(VerbalizerShape s, Reduces reduce, float *losses, float *scores,
                                 float *wordProbs, float *dlogits, const float *logits,
                                 const int32_t *labels, const int32_t *labelWords,
                                 const float *calibration, int64_t ignoreIndex, double scale,
                                 char *scratch, ScratchLayout layout, DeviceErrorSlot *errors) {
  const int64_t b = blockIdx.x;
  __shared__ int ok;
  __shared__ double lse;
  // Every block checks (the inputs are small) into its own wordsOf; block 0
  // reports.
  int64_t *wordsOf = (int64_t *)(scratch + b * layout.wordsOfBytes);
  char *mine = scratch + (int64_t)gridDim.x * layout.wordsOfBytes + b * layout.bytesPerExample;
  const VerbalizerScratch w =
      verbalizer_scratch(s, (double *)mine, (int32_t *)((double *)mine + layout.doubles));
  if (threadIdx.x == 0) {
    const VerbalizerIssue issue = verbalizer_check(s, labels, labelWords, ignoreIndex, wordsOf);
    ok = issue.kind == VerbalizerIssueKind::None;
    if (!ok && b == 0)
      reportBadIndex(errors,
                     issue.kind == VerbalizerIssueKind::BadLabel       ? kBadVerbalizerLabel
                     : issue.kind == VerbalizerIssueKind::BadWordToken ? kBadLabelWordToken
                                                                       : kNoLabelWords,
                     issue.value, issue.at, issue.limit, 0);
    if (ok) {
      verbalizer_forward_example(s, reduce.v, b, logits, labelWords, calibration, wordsOf, w,
                                 wordProbs, scores);
      const bool counted = labels[b] != ignoreIndex;
      lse = counted ? verbalizer_lse(s, w) : 0.0;
      losses[b] = counted ? (float)(lse - w.sc[labels[b]]) : 0.0f;
    }
  }
  __syncthreads();
  if (!ok || !dlogits)
    return;
  float *drows = dlogits + b * s.masks * s.vocab; // logits' rows maybe: read above
  for (int64_t i = threadIdx.x; i < s.masks * s.vocab; i += blockDim.x)
    drows[i] = 0.0f;
  __syncthreads();
  if (threadIdx.x == 0 && labels[b] != ignoreIndex)
    verbalizer_backward_example(s, reduce.v, labels[b], lse, labelWords, calibration, wordsOf,
                                w, scale, drows);
}

void checkDims(const char *what, int64_t rows, int64_t dim) {
  if (rows < 0 || dim < 1)
    fail(std::string(what) + ": needs rows >= 0 and dim >= 1 (got rows " +
         std::to_string(rows) + ", dim " + std::to_string(dim) + ")");
}

} // namespace

void soft_embedding_forward(Device &dev, float *out, const int32_t *ids, const float *table,
                            const float *soft, int64_t rows, int64_t num, int64_t numSoft,
                            int64_t dim) {
  checkDims("soft_embedding_forward", rows, dim);
  if (rows == 0)
    return;
  softEmbeddingKernel<<<blocksFor(rows * dim), kThreads, 0, dev.compute>>>(
      out, ids, table, soft, rows, num, numSoft, dim, dev.errors);
  BMRT_CUDA_CHECK_LAUNCH("softEmbeddingKernel");
}

void soft_embedding_backward(Device &dev, float *dtable, float *dsoft, const int32_t *ids,
                             const float *dout, int64_t rows, int64_t num, int64_t numSoft,
                             int64_t dim) {
  checkDims("soft_embedding_backward", rows, dim);
  if (rows == 0 || (!dtable && !dsoft))
    return;
  softEmbeddingBackwardKernel<<<blocksFor(dim), kThreads, 0, dev.compute>>>(
      dtable, dsoft, ids, dout, rows, num, numSoft, dim, dev.errors);
  BMRT_CUDA_CHECK_LAUNCH("softEmbeddingBackwardKernel");
}

void gather_rows_forward(Device &dev, float *out, const float *x, const int32_t *pos,
                         int64_t batch, int64_t seq, int64_t masks, int64_t dim) {
  checkDims("gather_rows_forward", batch * masks, dim);
  if (batch * masks == 0)
    return;
  gatherRowsKernel<<<blocksFor(batch * masks * dim), kThreads, 0, dev.compute>>>(
      out, x, pos, batch, seq, masks, dim, dev.errors);
  BMRT_CUDA_CHECK_LAUNCH("gatherRowsKernel");
}

void gather_rows_backward(Device &dev, float *dx, const float *dout, const int32_t *pos,
                          int64_t batch, int64_t seq, int64_t masks, int64_t dim) {
  checkDims("gather_rows_backward", batch * masks, dim);
  if (batch * masks == 0 || !dx)
    return;
  gatherRowsBackwardKernel<<<blocksFor(batch * dim), kThreads, 0, dev.compute>>>(
      dx, dout, pos, batch, seq, masks, dim, dev.errors);
  BMRT_CUDA_CHECK_LAUNCH("gatherRowsBackwardKernel");
}

void verbalizer_loss_forward_backward(Device &dev, const VerbalizerShape &s,
                                      const WordReduce *reduce, float *losses, float *scores,
                                      float *wordProbs, float *dlogits, const float *logits,
                                      const int32_t *labels, const int32_t *labelWords,
                                      const float *calibration, int64_t ignoreIndex,
                                      double scale) {
  if (s.batch < 0 || s.masks < 1 || s.labels < 1 || s.words < 1 || s.wordTokens < 1 ||
      s.vocab < 1)
    fail("verbalizer_loss_forward_backward: bad shape (batch " + std::to_string(s.batch) +
         ", masks " + std::to_string(s.masks) + ", labels " + std::to_string(s.labels) +
         ", words " + std::to_string(s.words) + ", word tokens " +
         std::to_string(s.wordTokens) + ", vocab " + std::to_string(s.vocab) + ")");
  if (s.masks > kMaxMasks)
    fail("verbalizer_loss_forward_backward: the cuda backend takes up to " +
         std::to_string(kMaxMasks) + " masks per prompt (got " + std::to_string(s.masks) + ")");
  if (s.batch == 0)
    return;
  Reduces r;
  for (int64_t m = 0; m < s.masks; ++m)
    r.v[m] = reduce[m];
  const ScratchLayout layout = scratchLayout(s);
  char *scratch = (char *)scratchOf(
      dev, (size_t)(s.batch * (layout.wordsOfBytes + layout.bytesPerExample)));
  verbalizerKernel<<<(unsigned)s.batch, kThreads, 0, dev.compute>>>(
      s, r, losses, scores, wordProbs, dlogits, logits, labels, labelWords, calibration,
      ignoreIndex, scale, scratch, layout, dev.errors);
  BMRT_CUDA_CHECK_LAUNCH("verbalizerKernel");
}

} // namespace bmrt::cuda
