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
#include "bmrt/kernels_backward.h"
#include "cuda/check.h"
#include "cuda/kernels_cuda.h"
#include "cuda/launch.cuh"

#include <climits>
#include <cmath>
#include <string>

namespace bmrt::cuda {
namespace {

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
  BMRT_GRID_STRIDE(e, m * n) {
    const int64_t i = e / n, j = e % n;
    float y = activate(act, c[i * ldc + j]);
    if (residual)
      y += residual[i * ldc + j];
    c[i * ldc + j] = y;
  }
}

// startDev: the decode step's position in device memory (Device::stepStart),
// read instead of `start` so a captured graph serves every step.
__global__ void positionsKernel(int32_t *out, int64_t rows, int64_t start,
                                const int64_t *startDev) {
  const int64_t first = startDev ? *startDev : start;
  BMRT_GRID_STRIDE(r, rows) { out[r] = (int32_t)(first + r); }
}

struct AdamScalars {
  float decay, b1, oneMinusB1, b2, oneMinusB2, negStepSize, bc2Sqrt, eps;
  bool decays;
};

__global__ void adamwKernel(float *params, const float *grads, float *m, float *v, int64_t n,
                            AdamScalars s) {
  BMRT_GRID_STRIDE(i, n) {
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

__global__ void actBackwardKernel(float *dx, const float *x, const float *dout, int64_t n,
                                  Epilogue act) {
  BMRT_GRID_STRIDE(i, n) {
    float d = dout[i];
    switch (act) {
    case Epilogue::GeluTanh:
      d = gelu_tanh_backward(x[i], d);
      break;
    case Epilogue::GeluErf:
      d = gelu_erf_backward(x[i], d);
      break;
    case Epilogue::Relu:
      d = relu_backward(x[i], d);
      break;
    case Epilogue::Silu:
      d = silu_backward(x[i], d);
      break;
    case Epilogue::Tanh:
      d = tanh_backward(x[i], d);
      break;
    case Epilogue::None:
      break;
    }
    dx[i] += d;
  }
}

__global__ void sgdKernel(float *params, const float *grads, float *momentumBuf, int64_t n,
                          float wd, float mu, float negLr, bool decays, bool first) {
  BMRT_GRID_STRIDE(i, n) {
    const float d = decays ? grads[i] + params[i] * wd : grads[i];
    if (!momentumBuf) {
      params[i] = params[i] + d * negLr;
      continue;
    }
    const float buf = first ? d : momentumBuf[i] * mu + d; // dampening 0
    momentumBuf[i] = buf;
    params[i] = params[i] + buf * negLr;
  }
}

__global__ void scaleKernel(float *x, int64_t n, float s) {
  BMRT_GRID_STRIDE(i, n) { x[i] *= s; }
}

__global__ void addKernel(float *x, const float *y, int64_t n) {
  BMRT_GRID_STRIDE(i, n) { x[i] = x[i] + y[i]; }
}

// partial[b] = sum of g^2 in double over block b's grid-stride elements;
// the host adds the partials in block order (a fixed grid: fixed bits).
__global__ void squaresKernel(double *partial, const float *g, int64_t n) {
  __shared__ double perThread[kThreads];
  double s = 0;
  BMRT_GRID_STRIDE(i, n) {
    const double v = (double)g[i];
    s += v * v;
  }
  perThread[threadIdx.x] = s;
  __syncthreads();
  if (threadIdx.x == 0) { // in thread order: the same bits every run
    double t = 0;
    for (int k = 0; k < kThreads; ++k)
      t += perThread[k];
    partial[blockIdx.x] = t;
  }
}

// partial[c] = sum of g^2 over chunk c = [c * chunk, min((c + 1) * chunk,
// end)) relative to g, one block per chunk, summed in thread order.
__global__ void chunkSquaresKernel(double *partial, const float *g, int64_t chunk, int64_t n) {
  __shared__ double perThread[kThreads];
  const int64_t begin = blockIdx.x * chunk;
  const int64_t end = begin + chunk < n ? begin + chunk : n;
  double s = 0;
  for (int64_t i = begin + threadIdx.x; i < end; i += kThreads) {
    const double v = (double)g[i];
    s += v * v;
  }
  perThread[threadIdx.x] = s;
  __syncthreads();
  if (threadIdx.x == 0) {
    double t = 0;
    for (int k = 0; k < kThreads; ++k)
      t += perThread[k];
    partial[blockIdx.x] = t;
  }
}

} // namespace

void chunk_squares(Device &dev, double *out, const float *grads, int64_t n, int64_t chunk) {
  if (n < 0 || chunk < 1)
    fail("chunk_squares: n " + std::to_string(n) + ", chunk " + std::to_string(chunk));
  const int64_t chunks = (n + chunk - 1) / chunk;
  if (chunks == 0)
    return;
  if (chunks > 0x7fffffff)
    fail("chunk_squares: " + std::to_string(chunks) + " chunks exceed one grid");
  double *partial = (double *)scratchOf(dev, (size_t)chunks * sizeof(double));
  chunkSquaresKernel<<<(unsigned)chunks, kThreads, 0, dev.compute>>>(partial, grads, chunk, n);
  BMRT_CUDA_CHECK_LAUNCH("chunkSquaresKernel");
  BMRT_CUDA_CHECK(cudaMemcpyAsync(out, partial, (size_t)chunks * sizeof(double),
                                  cudaMemcpyDeviceToHost, dev.compute));
  BMRT_CUDA_CHECK(cudaStreamSynchronize(dev.compute));
}

void act_backward(Device &dev, float *dx, const float *x, const float *dout, int64_t n,
                  Epilogue act) {
  if (n < 0)
    fail("act_backward: n must be >= 0 (got " + std::to_string(n) + ")");
  if ((int)act < (int)Epilogue::None || (int)act > (int)Epilogue::Tanh)
    fail("act_backward: unknown activation " + std::to_string((int)act));
  if (n == 0 || !dx)
    return;
  actBackwardKernel<<<blocksFor(n), kThreads, 0, dev.compute>>>(dx, x, dout, n, act);
  BMRT_CUDA_CHECK_LAUNCH("actBackwardKernel");
}

void sgd_update(Device &dev, float *params, const float *grads, float *momentumBuf, int64_t n,
                double lr, double momentum, double weightDecay, int64_t step) {
  if (n < 0)
    fail("sgd_update: negative element count " + std::to_string(n));
  if (step < 1)
    fail("sgd_update: step is 1-based (got " + std::to_string(step) + ")");
  if (n == 0)
    return;
  sgdKernel<<<blocksFor(n), kThreads, 0, dev.compute>>>(
      params, grads, momentum != 0.0 ? momentumBuf : nullptr, n, (float)weightDecay,
      (float)momentum, (float)-lr, weightDecay != 0.0, step == 1);
  BMRT_CUDA_CHECK_LAUNCH("sgdKernel");
}

void scale_inplace(Device &dev, float *x, int64_t n, double s) {
  if (n < 0)
    fail("scale_inplace: negative element count " + std::to_string(n));
  if (n == 0)
    return;
  scaleKernel<<<blocksFor(n), kThreads, 0, dev.compute>>>(x, n, (float)s);
  BMRT_CUDA_CHECK_LAUNCH("scaleKernel");
}

void add_inplace(Device &dev, float *x, const float *y, int64_t n) {
  if (n < 0)
    fail("add_inplace: negative element count " + std::to_string(n));
  if (n == 0)
    return;
  addKernel<<<blocksFor(n), kThreads, 0, dev.compute>>>(x, y, n);
  BMRT_CUDA_CHECK_LAUNCH("addKernel");
}

double grad_norm_squared(Device &dev, const float *grads, int64_t n) {
  if (n < 0)
    fail("grad_norm_squared: negative element count " + std::to_string(n));
  if (n == 0)
    return 0.0;
  constexpr unsigned kBlocks = 256; // fixed, so the summation order is too
  double *partial = (double *)scratchOf(dev, kBlocks * sizeof(double));
  squaresKernel<<<kBlocks, kThreads, 0, dev.compute>>>(partial, grads, n);
  BMRT_CUDA_CHECK_LAUNCH("squaresKernel");
  double host[kBlocks];
  // The norm is a host value (clipping decides on it): one synchronisation.
  BMRT_CUDA_CHECK(cudaMemcpyAsync(host, partial, sizeof host, cudaMemcpyDeviceToHost,
                                  dev.compute));
  BMRT_CUDA_CHECK(cudaStreamSynchronize(dev.compute));
  double sum = 0;
  for (double p : host)
    sum += p;
  return sum;
}

void activation_residual(Device &dev, float *c, int64_t ldc, int64_t m, int64_t n,
                         Epilogue act, const float *residual) {
  if (m <= 0 || n <= 0)
    return;
  activationResidualKernel<<<blocksFor(m * n), kThreads, 0, dev.compute>>>(c, ldc, m, n, act,
                                                                           residual);
  BMRT_CUDA_CHECK_LAUNCH("activationResidualKernel");
}

void positions_forward(Device &dev, int32_t *out, int64_t rows, int64_t start) {
  if (start < 0 || start + rows > INT32_MAX)
    fail("positions_forward: positions [" + std::to_string(start) + ", " +
         std::to_string(start + rows) + ") do not fit in int32");
  if (rows <= 0)
    return;
  positionsKernel<<<blocksFor(rows), kThreads, 0, dev.compute>>>(out, rows, start,
                                                                 dev.stepStart);
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
