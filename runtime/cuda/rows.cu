//===- cuda/rows.cu - LayerNorm, RMSNorm and softmax on the GPU -----------===//
//
// Why it is shaped like this:
//  - One thread block per row, 256 threads striding over its C elements
//    (coalesced: consecutive threads read consecutive floats). Row sums and
//    maxima go through CUB's BlockReduce, not a hand-written tree; the
//    result is broadcast through shared memory.
//  - Two passes for LayerNorm (mean, then the variance of x - mean), as the
//    host kernel does, so a large mean does not cancel the variance.
//  - The residual forms write `sum` and normalize from the values each
//    thread just wrote (the same thread reads them back), so `sum` may alias
//    a or r as on the host.
//  - fp32 sums; each row is independent, so no atomics and no
//    cross-block order: the result does not depend on the launch.
//
//===----------------------------------------------------------------------===//
#include "cuda/check.h"
#include "cuda/block_reduce.cuh"
#include "cuda/kernels_cuda.h"


#include <string>

namespace bmrt::cuda {
namespace {

using Rows = RowReduce<float>;

// The row a norm reads: x's, or (with the fused residual, a given) the sum
// a + r, written to `sum` first.
__device__ const float *normInputRow(int64_t row, int64_t C, const float *x, float *sum,
                                     const float *a, const float *r) {
  if (!a)
    return x + row * C;
  float *s = sum + row * C;
  for (int64_t i = threadIdx.x; i < C; i += kThreads)
    s[i] = a[row * C + i] + r[row * C + i];
  return s;
}

// sum (when a is given: sum = a + r first), then out = layernorm(sum or x).
__global__ void layernormKernel(float *out, float *mean, float *rstd, const float *x,
                                float *sum, const float *a, const float *r, const float *w,
                                const float *b, int64_t C, float eps) {
  __shared__ Rows::Storage shared;
  const int64_t row = blockIdx.x;
  const float *xr = normInputRow(row, C, x, sum, a, r);
  float part = 0;
  for (int64_t i = threadIdx.x; i < C; i += kThreads)
    part += xr[i];
  const float mu = Rows::sum(part, shared) / (float)C;
  part = 0;
  for (int64_t i = threadIdx.x; i < C; i += kThreads) {
    const float d = xr[i] - mu;
    part += d * d;
  }
  const float rs = rsqrtf(Rows::sum(part, shared) / (float)C + eps);
  float *o = out + row * C;
  for (int64_t i = threadIdx.x; i < C; i += kThreads)
    o[i] = (xr[i] - mu) * rs * w[i] + (b ? b[i] : 0.0f);
  if (threadIdx.x == 0 && mean)
    mean[row] = mu;
  if (threadIdx.x == 0 && rstd)
    rstd[row] = rs;
}

__global__ void rmsnormKernel(float *out, float *rstd, const float *x, float *sum,
                              const float *a, const float *r, const float *w, int64_t C,
                              float eps) {
  __shared__ Rows::Storage shared;
  const int64_t row = blockIdx.x;
  const float *xr = normInputRow(row, C, x, sum, a, r);
  float part = 0;
  for (int64_t i = threadIdx.x; i < C; i += kThreads)
    part += xr[i] * xr[i];
  const float rs = rsqrtf(Rows::sum(part, shared) / (float)C + eps);
  float *o = out + row * C;
  for (int64_t i = threadIdx.x; i < C; i += kThreads)
    o[i] = xr[i] * rs * w[i];
  if (threadIdx.x == 0 && rstd)
    rstd[row] = rs;
}

__global__ void softmaxKernel(float *out, const float *x, int64_t C) {
  __shared__ Rows::Storage shared;
  const float *xr = x + (int64_t)blockIdx.x * C;
  float *o = out + (int64_t)blockIdx.x * C;
  float part = -INFINITY;
  for (int64_t i = threadIdx.x; i < C; i += kThreads)
    part = fmaxf(part, xr[i]);
  const float m = Rows::max(part, shared);
  part = 0;
  for (int64_t i = threadIdx.x; i < C; i += kThreads)
    part += expf(xr[i] - m);
  const float inv = 1.0f / Rows::sum(part, shared);
  for (int64_t i = threadIdx.x; i < C; i += kThreads)
    o[i] = expf(xr[i] - m) * inv;
}

// Rows are one grid dimension: at most 2^31 - 1 of them.
void checkRows(const char *what, int64_t rows, int64_t C) {
  if (rows < 0 || C < 1 || rows > 0x7fffffff)
    fail(std::string(what) + ": needs 0 <= rows < 2^31 and C >= 1 (got rows " +
         std::to_string(rows) + ", C " + std::to_string(C) + ")");
}

} // namespace

void layernorm_forward(Device &dev, float *out, float *mean, float *rstd, const float *x,
                       const float *w, const float *b, int64_t rows, int64_t C, float eps) {
  checkRows("layernorm_forward", rows, C);
  if (rows == 0)
    return;
  layernormKernel<<<(unsigned)rows, kThreads, 0, dev.compute>>>(out, mean, rstd, x, nullptr,
                                                                 nullptr, nullptr, w, b, C, eps);
  BMRT_CUDA_CHECK_LAUNCH("layernormKernel");
}

void residual_layernorm_forward(Device &dev, float *sum, float *out, const float *a,
                                const float *r, const float *w, const float *b, int64_t rows,
                                int64_t C, float eps) {
  checkRows("residual_layernorm_forward", rows, C);
  if (rows == 0)
    return;
  layernormKernel<<<(unsigned)rows, kThreads, 0, dev.compute>>>(out, nullptr, nullptr, nullptr,
                                                                 sum, a, r, w, b, C, eps);
  BMRT_CUDA_CHECK_LAUNCH("layernormKernel");
}

void rmsnorm_forward(Device &dev, float *out, float *rstd, const float *x, const float *w,
                     int64_t rows, int64_t C, float eps) {
  checkRows("rmsnorm_forward", rows, C);
  if (rows == 0)
    return;
  rmsnormKernel<<<(unsigned)rows, kThreads, 0, dev.compute>>>(out, rstd, x, nullptr, nullptr,
                                                               nullptr, w, C, eps);
  BMRT_CUDA_CHECK_LAUNCH("rmsnormKernel");
}

void residual_rmsnorm_forward(Device &dev, float *sum, float *out, const float *a,
                              const float *r, const float *w, int64_t rows, int64_t C,
                              float eps) {
  checkRows("residual_rmsnorm_forward", rows, C);
  if (rows == 0)
    return;
  rmsnormKernel<<<(unsigned)rows, kThreads, 0, dev.compute>>>(out, nullptr, nullptr, sum, a, r,
                                                               w, C, eps);
  BMRT_CUDA_CHECK_LAUNCH("rmsnormKernel");
}

void softmax_forward(Device &dev, float *out, const float *x, int64_t rows, int64_t C) {
  checkRows("softmax_forward", rows, C);
  if (rows == 0)
    return;
  softmaxKernel<<<(unsigned)rows, kThreads, 0, dev.compute>>>(out, x, C);
  BMRT_CUDA_CHECK_LAUNCH("softmaxKernel");
}

} // namespace bmrt::cuda
