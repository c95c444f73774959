//===- cuda/lowp.cu - bf16/fp16 inputs, fp32 accumulation -----------------===//
//
// bmrt/lowp.h on the device. The host rounds a and b to the reduced type
// and multiplies the rounded values in fp32; here they are rounded into
// packed 16-bit panels in the device's scratch (to_bf16 / to_fp16 of
// lowp.h: the same bits as the host's) and cuBLASLt multiplies them on the
// tensor cores, accumulating in fp32. The products of two 16-bit values are
// exact in fp32 either way; only the summation order differs.
//
//===----------------------------------------------------------------------===//
#include "bmrt/lowp.h"
#include "cuda/check.h"
#include "cuda/kernels_cuda.h"
#include "cuda/launch.cuh"

#include <string>

namespace bmrt::cuda {
namespace {

__device__ uint16_t lowBits(LowPrecision p, float x) {
  return p == LowPrecision::BF16 ? to_bf16(x).bits : to_fp16(x).bits;
}

// out[r, c] (packed, row length cols) = in[r * ld + c] rounded to p.
__global__ void packKernel(uint16_t *out, const float *in, int64_t rows, int64_t cols, int64_t ld,
                           LowPrecision p) {
  BMRT_GRID_STRIDE(e, rows * cols) { out[e] = lowBits(p, in[(e / cols) * ld + e % cols]); }
}

__global__ void widenKernel(float *out, const uint16_t *in, int64_t n, LowPrecision p) {
  BMRT_GRID_STRIDE(i, n) {
    out[i] = p == LowPrecision::BF16 ? to_float(bf16{in[i]}) : to_float(fp16{in[i]});
  }
}

cudaDataType_t typeOf(LowPrecision p) {
  return p == LowPrecision::BF16 ? CUDA_R_16BF : CUDA_R_16F;
}

// A stored matrix of rows x cols (leading dimension ld) as a packed 16-bit
// panel at `out`.
void pack(Device &dev, LowPrecision p, uint16_t *out, const float *in, int64_t rows, int64_t cols,
          int64_t ld) {
  if (rows * cols == 0)
    return;
  packKernel<<<blocksFor(rows * cols), kThreads, 0, dev.compute>>>(out, in, rows, cols, ld, p);
  BMRT_CUDA_CHECK_LAUNCH("packKernel");
}

// Scratch for two panels, the second 256-byte aligned (cuBLASLt's best).
void panels(Device &dev, int64_t aElems, int64_t bElems, uint16_t *&pa, uint16_t *&pb) {
  const size_t aBytes = ((size_t)aElems * 2 + 255) / 256 * 256;
  char *s = (char *)scratchOf(dev, aBytes + (size_t)bElems * 2);
  pa = (uint16_t *)s;
  pb = (uint16_t *)(s + aBytes);
}

void checkDims(const char *what, int64_t m, int64_t n, int64_t k) {
  if (m < 0 || n < 0 || k < 0)
    fail(std::string(what) + ": negative dimension");
}

} // namespace

void gemm_lowp(Device &dev, LowPrecision p, int64_t m, int64_t n, int64_t k, const float *a,
               int64_t lda, const void *b, int64_t ldb, bool bIsLow, Trans transB, float *c,
               int64_t ldc, const float *bias, Epilogue act, const float *residual) {
  checkDims(bIsLow ? "gemm_lowp_w" : "gemm_lowp", m, n, k);
  const bool bt = transB == Trans::T;
  uint16_t *pa, *pb;
  panels(dev, m * k, bIsLow ? 0 : n * k, pa, pb);
  pack(dev, p, pa, a, m, k, lda);
  if (!bIsLow)
    pack(dev, p, pb, (const float *)b, bt ? n : k, bt ? k : n, ldb);
  Matmul mm;
  mm.transB = transB;
  mm.m = m, mm.n = n, mm.k = k;
  mm.a = pa, mm.lda = k;
  mm.b = bIsLow ? b : pb, mm.ldb = bIsLow ? ldb : (bt ? k : n);
  mm.c = c, mm.ldc = ldc, mm.bias = bias;
  mm.abType = typeOf(p);
  gemm_epilogue(dev, mm, act, residual);
}

void gemm_ex_lowp(Device &dev, LowPrecision p, Trans transA, Trans transB, int64_t m, int64_t n,
                  int64_t k, const float *a, int64_t lda, const void *b, int64_t ldb,
                  bool bIsLow, float *c, int64_t ldc, bool accumulate) {
  checkDims(bIsLow ? "gemm_ex_lowp_w" : "gemm_ex_lowp", m, n, k);
  const bool at = transA == Trans::T, bt = transB == Trans::T;
  uint16_t *pa, *pb;
  panels(dev, m * k, bIsLow ? 0 : n * k, pa, pb);
  pack(dev, p, pa, a, at ? k : m, at ? m : k, lda);
  if (!bIsLow)
    pack(dev, p, pb, (const float *)b, bt ? n : k, bt ? k : n, ldb);
  Matmul mm;
  mm.transA = transA, mm.transB = transB;
  mm.m = m, mm.n = n, mm.k = k;
  mm.a = pa, mm.lda = at ? m : k;
  mm.b = bIsLow ? b : pb, mm.ldb = bIsLow ? ldb : (bt ? k : n);
  mm.c = c, mm.ldc = ldc;
  mm.beta = accumulate ? 1.0f : 0.0f;
  mm.abType = typeOf(p);
  matmul(dev, mm);
}

void convert(Device &dev, LowPrecision p, uint16_t *out, const float *in, int64_t n) {
  if (n <= 0)
    return;
  packKernel<<<blocksFor(n), kThreads, 0, dev.compute>>>(out, in, 1, n, n, p);
  BMRT_CUDA_CHECK_LAUNCH("packKernel");
}

void convert(Device &dev, LowPrecision p, float *out, const uint16_t *in, int64_t n) {
  if (n <= 0)
    return;
  widenKernel<<<blocksFor(n), kThreads, 0, dev.compute>>>(out, in, n, p);
  BMRT_CUDA_CHECK_LAUNCH("widenKernel");
}

} // namespace bmrt::cuda
