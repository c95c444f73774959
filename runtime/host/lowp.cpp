//===- host/lowp.cpp - bf16/fp16 conversions and reduced-input GEMMs ------===//
//
// See bmrt/lowp.h. The reduced-input GEMMs round a and b into fp32 scratch
// panels (packed, leading dimension = row length) and call the fp32 GEMMs:
// the values are exactly those of bf16 (fp16) operands, the products of two
// such values are exact in fp32, and OpenBLAS accumulates them in fp32.
// The panels are per thread and grow to the largest GEMM seen (the weights
// of an LM head are the largest: vocab x dim floats), then are reused.
//
//===----------------------------------------------------------------------===//
#include "bmrt/lowp.h"
#include "bmrt/kernels_backward.h"
#include "host/host_common.h"

#include <string>
#include <vector>

namespace bmrt {

namespace {

template <class Out, class In, class F>
void convertAll(Context &ctx, Out *out, const In *in, int64_t n, F f) {
  if (n < 0)
    fail("convert: negative count " + std::to_string(n));
#pragma omp parallel for num_threads(host::threadCount(ctx)) schedule(static) if (n >= (1 << 16))
  for (int64_t i = 0; i < n; ++i)
    out[i] = f(in[i]);
}

// The [rows, cols] matrix at src (row stride ld) rounded to p, packed into
// `panel` (row stride cols).
const float *roundPanel(Context &ctx, LowPrecision p, std::vector<float> &panel,
                        const float *src, int64_t rows, int64_t cols, int64_t ld) {
  if (rows <= 0 || cols <= 0)
    return src;
  if (p != LowPrecision::BF16 && p != LowPrecision::FP16)
    fail("gemm_lowp: invalid precision " + std::to_string((int)p));
  if (ld < cols)
    fail("gemm_lowp: leading dimension " + std::to_string(ld) + " is less than the row length " +
         std::to_string(cols));
  panel.resize((size_t)(rows * cols));
  float *dst = panel.data();
#pragma omp parallel for num_threads(host::threadCount(ctx)) schedule(static) \
    if (rows * cols >= (1 << 16))
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < cols; ++j)
      dst[r * cols + j] = round_to(p, src[r * ld + j]);
  return dst;
}

// The scratch panels of the calling thread (the GEMMs are called from the
// generated code's one thread; OpenMP parallelism is inside).
struct Panels {
  std::vector<float> a, b;
};
Panels &panels() {
  thread_local Panels p;
  return p;
}

// The [rows, cols] matrix of reduced-type bits at src (row stride ld)
// widened to fp32 (exactly), packed into `panel`.
const float *widenPanel(Context &ctx, LowPrecision p, std::vector<float> &panel,
                        const uint16_t *src, int64_t rows, int64_t cols, int64_t ld) {
  if (rows <= 0 || cols <= 0)
    return nullptr;
  if (!src)
    fail("gemm_lowp_w: no reduced-precision weights (Buffers::lowParams is not allocated)");
  if (ld < cols)
    fail("gemm_lowp_w: leading dimension " + std::to_string(ld) +
         " is less than the row length " + std::to_string(cols));
  panel.resize((size_t)(rows * cols));
  float *dst = panel.data();
  const bool bf = p == LowPrecision::BF16;
  if (!bf && p != LowPrecision::FP16)
    fail("gemm_lowp_w: invalid precision " + std::to_string((int)p));
#pragma omp parallel for num_threads(host::threadCount(ctx)) schedule(static) \
    if (rows * cols >= (1 << 16))
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < cols; ++j) {
      const uint16_t bits = src[r * ld + j];
      dst[r * cols + j] = bf ? to_float(bf16{bits}) : to_float(fp16{bits});
    }
  return dst;
}


} // namespace

void convert(Context &ctx, bf16 *out, const float *in, int64_t n) {
  convertAll(ctx, out, in, n, [](float x) { return to_bf16(x); });
}
void convert(Context &ctx, float *out, const bf16 *in, int64_t n) {
  convertAll(ctx, out, in, n, [](bf16 x) { return to_float(x); });
}
void convert(Context &ctx, fp16 *out, const float *in, int64_t n) {
  convertAll(ctx, out, in, n, [](float x) { return to_fp16(x); });
}
void convert(Context &ctx, float *out, const fp16 *in, int64_t n) {
  convertAll(ctx, out, in, n, [](fp16 x) { return to_float(x); });
}

void gemm_lowp(Context &ctx, LowPrecision p, int64_t m, int64_t n, int64_t k, const float *a,
               int64_t lda, const float *b, int64_t ldb, Trans transB, float *c, int64_t ldc,
               const float *bias, Epilogue act, const float *residual) {
  if (m < 0 || n < 0 || k < 0)
    fail("gemm_lowp: negative dimension");
  Panels &s = panels();
  const float *ra = roundPanel(ctx, p, s.a, a, m, k, lda);
  const bool bt = transB == Trans::T;
  const float *rb = roundPanel(ctx, p, s.b, b, bt ? n : k, bt ? k : n, ldb);
  gemm<float>(ctx, m, n, k, ra, ra == a ? lda : k, rb, rb == b ? ldb : (bt ? k : n), transB, c,
              ldc, bias, act, residual);
}

void gemm_ex_lowp(Context &ctx, LowPrecision p, Trans transA, Trans transB, int64_t m,
                  int64_t n, int64_t k, const float *a, int64_t lda, const float *b,
                  int64_t ldb, float *c, int64_t ldc, bool accumulate) {
  if (m < 0 || n < 0 || k < 0)
    fail("gemm_ex_lowp: negative dimension");
  Panels &s = panels();
  const bool at = transA == Trans::T, bt = transB == Trans::T;
  const float *ra = roundPanel(ctx, p, s.a, a, at ? k : m, at ? m : k, lda);
  const float *rb = roundPanel(ctx, p, s.b, b, bt ? n : k, bt ? k : n, ldb);
  gemm_ex<float>(ctx, transA, transB, m, n, k, ra, ra == a ? lda : (at ? m : k), rb,
                 rb == b ? ldb : (bt ? k : n), c, ldc, accumulate);
}

void gemm_lowp_w(Context &ctx, LowPrecision p, int64_t m, int64_t n, int64_t k, const float *a,
                 int64_t lda, const uint16_t *b, int64_t ldb, Trans transB, float *c,
                 int64_t ldc, const float *bias, Epilogue act, const float *residual) {
  if (m < 0 || n < 0 || k < 0)
    fail("gemm_lowp_w: negative dimension");
  Panels &s = panels();
  const float *ra = roundPanel(ctx, p, s.a, a, m, k, lda);
  const bool bt = transB == Trans::T;
  const float *wb = widenPanel(ctx, p, s.b, b, bt ? n : k, bt ? k : n, ldb);
  gemm<float>(ctx, m, n, k, ra, ra == a ? lda : k, wb, bt ? k : n, transB, c, ldc, bias, act,
              residual);
}

void gemm_ex_lowp_w(Context &ctx, LowPrecision p, Trans transA, Trans transB, int64_t m,
                    int64_t n, int64_t k, const float *a, int64_t lda, const uint16_t *b,
                    int64_t ldb, float *c, int64_t ldc, bool accumulate) {
  if (m < 0 || n < 0 || k < 0)
    fail("gemm_ex_lowp_w: negative dimension");
  Panels &s = panels();
  const bool at = transA == Trans::T, bt = transB == Trans::T;
  const float *ra = roundPanel(ctx, p, s.a, a, at ? k : m, at ? m : k, lda);
  const float *wb = widenPanel(ctx, p, s.b, b, bt ? n : k, bt ? k : n, ldb);
  gemm_ex<float>(ctx, transA, transB, m, n, k, ra, ra == a ? lda : (at ? m : k), wb,
                 bt ? k : n, c, ldc, accumulate);
}

void refresh_low_params(Context &ctx, const Buffers &buf, const TrainInfo &train) {
  LowPrecision p;
  if (!lowPrecisionOf(train, p) || train.zeroStage == 3)
    return; // zero = 3: round_unit fills it, unit by unit, after each gather
  if (!buf.lowParams)
    fail("refresh_low_params: a " + std::string(train.precision) +
         " program needs Buffers::lowParams (the app did not allocate it)");
  const float *master = (const float *)((const char *)buf.params + train.groupParamOffset);
  if (p == LowPrecision::BF16)
    convert(ctx, (bf16 *)buf.lowParams, master, train.groupElems);
  else
    convert(ctx, (fp16 *)buf.lowParams, master, train.groupElems);
}

void round_unit(Context &ctx, LowPrecision p, const Buffers &buf, int64_t at, int64_t n) {
  checkRoundUnit(p, buf, at, n);
  ProfileScope profile(ctx, KernelKind::Copy); // --profile: with the other copies
  const float *staged = (const float *)buf.paramStaging + at;
  if (p == LowPrecision::BF16)
    convert(ctx, (bf16 *)buf.lowParams + at, staged, n);
  else
    convert(ctx, (fp16 *)buf.lowParams + at, staged, n);
}

} // namespace bmrt
