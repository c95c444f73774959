//===- cuda/rows_backward.cu - Norm and softmax backward, the classifier --===//
//
// Why it is shaped like this:
//  - One block per row for everything that needs a row's sums (dx of the
//    norms, softmax backward, the fused classifier), CUB reductions
//    (block_reduce.cuh); the row's elements are strided over the threads.
//  - Weight gradients (dw, db) and sum_rows add over rows without atomics,
//    as the host does: partial sums per chunk of 32 rows (one thread per
//    column and chunk), then the chunks added in order. The bits do not
//    depend on the launch; the chunking is the host's, the order within a
//    chunk too.
//  - Norm statistics not saved by the forward are recomputed into scratch
//    with the forward's arithmetic (rows.cu's two passes).
//  - The classifier sums exponentials in double, as the host kernel does,
//    and may write dlogits over logits: every thread reads its elements
//    (and the target's logit) before the reductions that precede the
//    writes.
//
//===----------------------------------------------------------------------===//
#include "cuda/block_reduce.cuh"
#include "cuda/check.h"
#include "cuda/kernels_cuda.h"

#include <string>

namespace bmrt::cuda {
namespace {

using Rows = RowReduce<float>;
using RowsD = RowReduce<double>;

constexpr int64_t kRowChunk = 32; // rows per partial sum, as the host's

// mean and rstd of row blockIdx.x (layernorm), or rstd only (rmsnorm).
__global__ void normStatsKernel(float *mean, float *rstd, const float *x, int64_t C, float eps,
                                bool rms) {
  __shared__ Rows::Storage shared;
  const float *xr = x + (int64_t)blockIdx.x * C;
  float part = 0, mu = 0;
  if (!rms) {
    for (int64_t i = threadIdx.x; i < C; i += kThreads)
      part += xr[i];
    mu = Rows::sum(part, shared) / (float)C;
    part = 0;
  }
  for (int64_t i = threadIdx.x; i < C; i += kThreads) {
    const float d = xr[i] - mu;
    part += d * d;
  }
  const float rs = rsqrtf(Rows::sum(part, shared) / (float)C + eps);
  if (threadIdx.x == 0) {
    if (mean)
      mean[blockIdx.x] = mu;
    rstd[blockIdx.x] = rs;
  }
}

// dx += rstd (dnorm - mean(dnorm) - xhat mean(dnorm xhat)), dnorm = dout w,
// xhat = (x - mean) rstd; rmsnorm: mean = 0 and no mean(dnorm) term.
__global__ void normDxKernel(float *dx, const float *dout, const float *x, const float *w,
                             const float *mean, const float *rstd, int64_t C) {
  __shared__ Rows::Storage shared;
  const int64_t r = blockIdx.x;
  const float *xr = x + r * C, *dr = dout + r * C;
  const float m = mean ? mean[r] : 0.0f, s = rstd[r];
  float partA = 0, partB = 0;
  for (int64_t i = threadIdx.x; i < C; i += kThreads) {
    const float dnorm = dr[i] * w[i];
    partA += dnorm;
    partB += dnorm * ((xr[i] - m) * s);
  }
  const float dnormMean = mean ? Rows::sum(partA, shared) / (float)C : 0.0f;
  const float dnormNormMean = Rows::sum(partB, shared) / (float)C;
  float *dxr = dx + r * C;
  for (int64_t i = threadIdx.x; i < C; i += kThreads) {
    const float xhat = (xr[i] - m) * s;
    dxr[i] += s * (dr[i] * w[i] - dnormMean - xhat * dnormNormMean);
  }
}

// partial[chunk, i] = sum over the chunk's rows r of f(r, i), in row order:
//   a: dout (db, sum_rows), b: dout * xhat (dw).
__global__ void chunkColumnSumsKernel(float *partA, float *partB, const float *dout,
                                      const float *x, const float *mean, const float *rstd,
                                      int64_t rows, int64_t C) {
  const int64_t chunk = blockIdx.y;
  BMRT_GRID_STRIDE(i, C) {
    float a = 0, b = 0;
    const int64_t end = (chunk + 1) * kRowChunk < rows ? (chunk + 1) * kRowChunk : rows;
    for (int64_t r = chunk * kRowChunk; r < end; ++r) {
      const float d = dout[r * C + i];
      a += d;
      if (partB)
        b += d * ((x[r * C + i] - (mean ? mean[r] : 0.0f)) * rstd[r]);
    }
    if (partA)
      partA[chunk * C + i] = a;
    if (partB)
      partB[chunk * C + i] = b;
  }
}

// out[i] += sum of partial[chunk, i] over chunks, in chunk order.
__global__ void addChunksKernel(float *out, const float *partial, int64_t chunks, int64_t C) {
  BMRT_GRID_STRIDE(i, C) {
    float s = 0;
    for (int64_t c = 0; c < chunks; ++c)
      s += partial[c * C + i];
    out[i] += s;
  }
}

__global__ void softmaxBackwardKernel(float *dx, const float *out, const float *dout,
                                      int64_t C) {
  __shared__ Rows::Storage shared;
  const int64_t r = blockIdx.x;
  const float *o = out + r * C, *d = dout + r * C;
  float part = 0;
  for (int64_t i = threadIdx.x; i < C; i += kThreads)
    part += d[i] * o[i];
  const float s = Rows::sum(part, shared);
  for (int64_t i = threadIdx.x; i < C; i += kThreads)
    dx[r * C + i] += o[i] * (d[i] - s);
}

__global__ void classifierKernel(float *losses, float *dlogits, const float *logits,
                                 const int32_t *targets, int64_t V, int64_t ignoreIndex,
                                 double dlossScale, DeviceErrorSlot *errors) {
  __shared__ RowsD::Storage sharedD;
  __shared__ Rows::Storage shared;
  const int64_t r = blockIdx.x;
  const float *x = logits + r * V;
  float *d = dlogits ? dlogits + r * V : nullptr;
  const int64_t t = targets[r];
  if (t == ignoreIndex || t < 0 || t >= V) {
    if (t != ignoreIndex && threadIdx.x == 0)
      reportBadIndex(errors, kBadTarget, t, r, V, ignoreIndex);
    if (threadIdx.x == 0)
      losses[r] = 0.0f;
    if (d)
      for (int64_t i = threadIdx.x; i < V; i += kThreads)
        d[i] = 0.0f;
    return;
  }
  const float xt = x[t]; // before any write to d (which may be x)
  float part = -INFINITY;
  for (int64_t i = threadIdx.x; i < V; i += kThreads)
    part = fmaxf(part, x[i]);
  const float mx = Rows::max(part, shared);
  double sumPart = 0;
  for (int64_t i = threadIdx.x; i < V; i += kThreads)
    sumPart += (double)expf(x[i] - mx);
  const double sum = RowsD::sum(sumPart, sharedD); // synchronises: all reads are done
  if (threadIdx.x == 0)
    losses[r] = (float)(log(sum) - ((double)xt - (double)mx));
  if (!d)
    return;
  const double s = dlossScale / sum;
  for (int64_t i = threadIdx.x; i < V; i += kThreads) {
    const double e = (double)expf(x[i] - mx);
    d[i] = (float)(i == t ? (e / sum - 1.0) * dlossScale : e * s);
  }
}

// Rows are a grid dimension (< 2^31) and so are their chunks (< 2^16).
// One block: loss = sum((pred - target)^2) / n in double, dpred alongside
// (each thread reads pred[i] before writing dpred[i], which may alias it).
__global__ void mseKernel(float *loss, float *dpred, const float *pred, const float *target,
                          int64_t n, double gradScale) {
  __shared__ RowsD::Storage shared;
  double part = 0;
  for (int64_t i = threadIdx.x; i < n; i += kThreads) {
    const double diff = (double)pred[i] - (double)target[i];
    part += diff * diff;
    if (dpred)
      dpred[i] = (float)(diff * gradScale);
  }
  const double sum = RowsD::sum(part, shared);
  if (threadIdx.x == 0)
    *loss = (float)(sum / (double)n);
}

void checkShape(const char *what, int64_t rows, int64_t C) {
  if (rows < 0 || C < 1 || rows >= 65535 * kRowChunk)
    fail(std::string(what) + ": needs 0 <= rows < 2097120 and C >= 1 (got rows " +
         std::to_string(rows) + ", C " + std::to_string(C) + ")");
}

// dw/db (either may be null) += column sums of the chunks; scratch holds
// the partials after `offset` floats.
void weightGradients(Device &dev, float *dw, float *db, const float *dout, const float *x,
                     const float *mean, const float *rstd, int64_t rows, int64_t C,
                     float *partials) {
  const int64_t chunks = (rows + kRowChunk - 1) / kRowChunk;
  float *partA = db ? partials : nullptr, *partB = dw ? partials + chunks * C : nullptr;
  dim3 grid(blocksFor(C), (unsigned)chunks);
  chunkColumnSumsKernel<<<grid, kThreads, 0, dev.compute>>>(partA, partB, dout, x, mean, rstd,
                                                           rows, C);
  BMRT_CUDA_CHECK_LAUNCH("chunkColumnSumsKernel");
  if (db) {
    addChunksKernel<<<blocksFor(C), kThreads, 0, dev.compute>>>(db, partA, chunks, C);
    BMRT_CUDA_CHECK_LAUNCH("addChunksKernel");
  }
  if (dw) {
    addChunksKernel<<<blocksFor(C), kThreads, 0, dev.compute>>>(dw, partB, chunks, C);
    BMRT_CUDA_CHECK_LAUNCH("addChunksKernel");
  }
}

// The norms' backward: statistics (given or recomputed), dx, dw/db.
void normBackward(Device &dev, const char *what, float *dx, float *dw, float *db,
                  const float *dout, const float *x, const float *w, const float *mean,
                  const float *rstd, int64_t rows, int64_t C, float eps, bool rms) {
  checkShape(what, rows, C);
  if (rows == 0)
    return;
  const int64_t chunks = (rows + kRowChunk - 1) / kRowChunk;
  const bool recompute = rstd == nullptr;
  float *scratch = (float *)scratchOf(
      dev, sizeof(float) * ((recompute ? 2 * rows : 0) + ((dw || db) ? 2 * chunks * C : 0)));
  float *partials = scratch;
  if (recompute) {
    float *m = rms ? nullptr : scratch, *s = scratch + rows;
    normStatsKernel<<<(unsigned)rows, kThreads, 0, dev.compute>>>(m, s, x, C, eps, rms);
    BMRT_CUDA_CHECK_LAUNCH("normStatsKernel");
    mean = m, rstd = s;
    partials = scratch + 2 * rows;
  }
  if (dx) {
    normDxKernel<<<(unsigned)rows, kThreads, 0, dev.compute>>>(dx, dout, x, w,
                                                              rms ? nullptr : mean, rstd, C);
    BMRT_CUDA_CHECK_LAUNCH("normDxKernel");
  }
  if (dw || db)
    weightGradients(dev, dw, db, dout, x, rms ? nullptr : mean, rstd, rows, C, partials);
}

} // namespace

void layernorm_backward(Device &dev, float *dx, float *dw, float *db, const float *dout,
                        const float *x, const float *w, const float *mean, const float *rstd,
                        int64_t rows, int64_t C, float eps) {
  if ((mean == nullptr) != (rstd == nullptr))
    fail("layernorm_backward: give both mean and rstd, or neither (recompute)");
  normBackward(dev, "layernorm_backward", dx, dw, db, dout, x, w, mean, rstd, rows, C, eps,
               false);
}

void rmsnorm_backward(Device &dev, float *dx, float *dw, const float *dout, const float *x,
                      const float *w, const float *rstd, int64_t rows, int64_t C, float eps) {
  normBackward(dev, "rmsnorm_backward", dx, dw, nullptr, dout, x, w, nullptr, rstd, rows, C,
               eps, true);
}

void sum_rows(Device &dev, float *out, const float *x, int64_t rows, int64_t C) {
  checkShape("sum_rows", rows, C);
  if (rows == 0 || !out)
    return;
  const int64_t chunks = (rows + kRowChunk - 1) / kRowChunk;
  float *partials = (float *)scratchOf(dev, sizeof(float) * chunks * C);
  dim3 grid(blocksFor(C), (unsigned)chunks);
  chunkColumnSumsKernel<<<grid, kThreads, 0, dev.compute>>>(partials, nullptr, x, nullptr,
                                                           nullptr, nullptr, rows, C);
  BMRT_CUDA_CHECK_LAUNCH("chunkColumnSumsKernel");
  addChunksKernel<<<blocksFor(C), kThreads, 0, dev.compute>>>(out, partials, chunks, C);
  BMRT_CUDA_CHECK_LAUNCH("addChunksKernel");
}

void softmax_backward(Device &dev, float *dx, const float *out, const float *dout, int64_t rows,
                      int64_t C) {
  checkShape("softmax_backward", rows, C);
  if (rows == 0 || !dx)
    return;
  softmaxBackwardKernel<<<(unsigned)rows, kThreads, 0, dev.compute>>>(dx, out, dout, C);
  BMRT_CUDA_CHECK_LAUNCH("softmaxBackwardKernel");
}

void fused_classifier_forward_backward(Device &dev, float *losses, float *dlogits,
                                       const float *logits, const int32_t *targets,
                                       int64_t rows, int64_t V, int64_t ignoreIndex,
                                       double dlossScale) {
  if (rows < 0 || V < 1 || rows > 0x7fffffff)
    fail("fused_classifier_forward_backward: needs rows >= 0 and V >= 1 (got rows " +
         std::to_string(rows) + ", V " + std::to_string(V) + ")");
  if (rows == 0)
    return;
  if (!losses || !logits || !targets)
    fail("fused_classifier_forward_backward: null losses, logits or targets");
  classifierKernel<<<(unsigned)rows, kThreads, 0, dev.compute>>>(
      losses, dlogits, logits, targets, V, ignoreIndex, dlossScale, dev.errors);
  BMRT_CUDA_CHECK_LAUNCH("classifierKernel");
}

void mse_forward_backward(Device &dev, float *loss, float *dpred, const float *pred,
                          const float *target, int64_t n, double dlossScale) {
  if (n < 1)
    fail("mse_forward_backward: needs n >= 1 (got " + std::to_string(n) + ")");
  if (!loss || !pred || !target)
    fail("mse_forward_backward: null loss, pred or target");
  mseKernel<<<1, kThreads, 0, dev.compute>>>(loss, dpred, pred, target, n,
                                             2.0 * dlossScale / (double)n);
  BMRT_CUDA_CHECK_LAUNCH("mseKernel");
}

} // namespace bmrt::cuda
