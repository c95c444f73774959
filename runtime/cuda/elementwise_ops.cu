//===- cuda/elementwise_ops.cu - Element-wise device kernels --------------===//
//
// Grid-stride loops, 256 threads a block, consecutive threads on consecutive
// elements (coalesced). The math is bmrt/elementwise.h's (the same functions
// the host epilogues and the host tests run); AdamW is training.h's
// contract with the per-parameter scalars computed on the host in double,
// as the host kernel does.
//
//===----------------------------------------------------------------------===//
#include "bmrt/elementwise.h"
#include "cuda/check.h"
#include "cuda/kernels_cuda.h"

#include <cmath>
#include <string>

namespace bmrt::cuda {
namespace {

constexpr int kThreads = 256;

// Enough blocks to cover n, capped: a grid-stride loop does the rest.
unsigned blocksFor(int64_t n) {
  int64_t b = (n + kThreads - 1) / kThreads;
  return (unsigned)(b < 65536 ? b : 65536);
}

__device__ float activate(Epilogue act, float x) {
  switch (act) {
  case Epilogue::GeluTanh:
    return gelu_tanh(x);
  case Epilogue::GeluErf:
    return gelu_erf(x);
  case Epilogue::Relu:
    return relu(x);
  case Epilogue::Silu:
    return silu(x);
  case Epilogue::Tanh:
    return tanh_fast(x);
  case Epilogue::None:
    break;
  }
  return x;
}

__global__ void activationResidualKernel(float *c, int64_t ldc, int64_t m, int64_t n,
                                         Epilogue act, const float *residual) {
  const int64_t total = m * n;
  for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < total;
       e += (int64_t)gridDim.x * blockDim.x) {
    const int64_t i = e / n, j = e % n;
    float y = activate(act, c[i * ldc + j]);
    if (residual)
      y += residual[i * ldc + j];
    c[i * ldc + j] = y;
  }
}

__global__ void positionsKernel(int32_t *out, int64_t rows, int64_t start) {
  for (int64_t r = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; r < rows;
       r += (int64_t)gridDim.x * blockDim.x)
    out[r] = (int32_t)(start + r);
}

struct AdamScalars {
  float decay, b1, oneMinusB1, b2, oneMinusB2, negStepSize, bc2Sqrt, eps;
  bool decays;
};

__global__ void adamwKernel(float *params, const float *grads, float *m, float *v, int64_t n,
                            AdamScalars s) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    float p = params[i];
    if (s.decays)
      p = p * s.decay;
    const float g = grads[i];
    const float mi = m[i] * s.b1 + g * s.oneMinusB1;
    const float vi = v[i] * s.b2 + (g * g) * s.oneMinusB2;
    const float denom = sqrtf(vi) / s.bc2Sqrt + s.eps;
    params[i] = p + s.negStepSize * (mi / denom);
    m[i] = mi;
    v[i] = vi;
  }
}

} // namespace

void activation_residual(Device &dev, float *c, int64_t ldc, int64_t m, int64_t n,
                         Epilogue act, const float *residual) {
  if (m <= 0 || n <= 0)
    return;
  activationResidualKernel<<<blocksFor(m * n), kThreads, 0, dev.compute>>>(c, ldc, m, n, act,
                                                                           residual);
  BMRT_CUDA_CHECK_LAUNCH("activationResidualKernel");
}

void positions_forward(Device &dev, int32_t *out, int64_t rows, int64_t start) {
  if (rows <= 0)
    return;
  positionsKernel<<<blocksFor(rows), kThreads, 0, dev.compute>>>(out, rows, start);
  BMRT_CUDA_CHECK_LAUNCH("positionsKernel");
}

void fill_zero(Device &dev, float *x, int64_t n) {
  if (n < 0)
    fail("fill_zero: negative element count " + std::to_string(n));
  if (n > 0)
    BMRT_CUDA_CHECK(cudaMemsetAsync(x, 0, (size_t)n * sizeof(float), dev.compute));
}

void adamw_update(Device &dev, float *params, const float *grads, float *m, float *v, int64_t n,
                  double lr, double beta1, double beta2, double eps, double weightDecay,
                  int64_t step) {
  if (n < 0)
    fail("adamw_update: negative element count " + std::to_string(n));
  if (step < 1)
    fail("adamw_update: step is 1-based (got " + std::to_string(step) + ")");
  if (n == 0)
    return;
  // The scalars torch computes in Python (double), rounded to float once
  // each: the host kernel's (host/optimizers.cpp).
  AdamScalars s;
  s.decay = (float)(1.0 - lr * weightDecay);
  s.b1 = (float)beta1, s.oneMinusB1 = (float)(1.0 - beta1);
  s.b2 = (float)beta2, s.oneMinusB2 = (float)(1.0 - beta2);
  const double bc1 = 1.0 - std::pow(beta1, (double)step);
  const double bc2 = 1.0 - std::pow(beta2, (double)step);
  s.negStepSize = (float)(-(lr / bc1));
  s.bc2Sqrt = (float)std::sqrt(bc2);
  s.eps = (float)eps;
  s.decays = weightDecay != 0.0;
  adamwKernel<<<blocksFor(n), kThreads, 0, dev.compute>>>(params, grads, m, v, n, s);
  BMRT_CUDA_CHECK_LAUNCH("adamwKernel");
}

} // namespace bmrt::cuda
