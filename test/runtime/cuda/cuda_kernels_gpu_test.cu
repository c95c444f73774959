//===- cuda_kernels_gpu_test.cu - Device kernels against the host's -------===//
//
// Each device kernel of the CUDA backend run on random inputs and compared
// with the host kernel of libbmrt on the same inputs (the host kernels are
// checked against torch and numpy in test/runtime/host). Tolerances allow
// for other summation orders and fused multiply-adds, nothing more.
// Needs a GPU: without one every test is skipped (ctest label cuda-gpu;
// `ctest --test-dir build/test -L cuda-gpu` runs them all).
//
//===----------------------------------------------------------------------===//
#define BMRT_CUDA_BACKEND // this file's launch_map is the device skeleton
#include "bmrt/kernels.h"
#include "bmrt/kernels_backward.h"
#include "bmrt/lowp.h"
#include "bmrt/sampling.h"
#include "bmrt/skeletons.h"
#include "bmrt/training.h"
#include "cuda/device.h"
#include "gpu_test.h"
#include "cuda/kernels_cuda.h"
#include "cuda/sampling_sorted.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace {

using gpu_test::attentionArgs;
using gpu_test::DeviceVector;
using gpu_test::expectNear;
using gpu_test::randomVector;

using bmrt::Epilogue;
using bmrt::Trans;
namespace cu = bmrt::cuda;

class Gpu : public gpu_test::GpuTest {
protected:
  bmrt::Context host; // the host kernels' context
};

TEST_F(Gpu, GemmWithEveryEpilogueBiasAndResidual) {
  const int64_t m = 37, n = 53, k = 29;
  auto a = randomVector(m * k, 1), bias = randomVector(n, 3), res = randomVector(m * n, 4);
  for (Trans tb : {Trans::T, Trans::N}) {
    auto b = randomVector(n * k, 2);
    const int64_t ldb = tb == Trans::T ? k : n;
    for (Epilogue act : {Epilogue::None, Epilogue::GeluTanh, Epilogue::GeluErf, Epilogue::Relu,
                         Epilogue::Silu, Epilogue::Tanh})
      for (bool withBias : {false, true})
        for (bool withResidual : {false, true}) {
          std::vector<float> want(m * n, 0.0f);
          bmrt::gemm<float>(host, m, n, k, a.data(), k, b.data(), ldb, tb, want.data(), n,
                            withBias ? bias.data() : nullptr, act,
                            withResidual ? res.data() : nullptr);
          DeviceVector<float> da(a), db(b), dbias(bias), dres(res),
              dc(std::vector<float>(m * n, 0.0f));
          cu::gemm(dev(), m, n, k, da.p, k, db.p, ldb, tb, dc.p, n, withBias ? dbias.p : nullptr,
                   act, withResidual ? dres.p : nullptr);
          expectNear(dc.get(dev().compute), want, 1e-4f,
                     "gemm act " + std::to_string((int)act) + " bias " +
                         std::to_string(withBias) + " residual " +
                         std::to_string(withResidual) + " transB " + std::to_string((int)tb));
        }
  }
}

TEST_F(Gpu, GemmResidualInPlace) {
  const int64_t m = 8, n = 16, k = 24;
  auto a = randomVector(m * k, 5), b = randomVector(n * k, 6), c = randomVector(m * n, 7);
  std::vector<float> want = c;
  bmrt::gemm<float>(host, m, n, k, a.data(), k, b.data(), k, Trans::T, want.data(), n, nullptr,
                    Epilogue::None, want.data());
  DeviceVector<float> da(a), db(b), dc(c);
  cu::gemm(dev(), m, n, k, da.p, k, db.p, k, Trans::T, dc.p, n, nullptr, Epilogue::None, dc.p);
  expectNear(dc.get(dev().compute), want, 1e-4f, "in-place residual");
}

TEST_F(Gpu, GemmExEveryTransposeAccumulating) {
  const int64_t m = 19, n = 23, k = 31;
  for (Trans ta : {Trans::N, Trans::T})
    for (Trans tb : {Trans::N, Trans::T})
      for (bool acc : {false, true}) {
        auto a = randomVector(m * k, 8), b = randomVector(k * n, 9), c = randomVector(m * n, 10);
        const int64_t lda = ta == Trans::N ? k : m, ldb = tb == Trans::N ? n : k;
        std::vector<float> want = c;
        bmrt::gemm_ex<float>(host, ta, tb, m, n, k, a.data(), lda, b.data(), ldb, want.data(), n,
                             acc);
        DeviceVector<float> da(a), db(b), dc(c);
        cu::gemm_ex(dev(), ta, tb, m, n, k, da.p, lda, db.p, ldb, dc.p, n, acc);
        expectNear(dc.get(dev().compute), want, 1e-4f,
                   "gemm_ex " + std::to_string((int)ta) + std::to_string((int)tb) +
                       (acc ? " accumulate" : ""));
      }
}

TEST_F(Gpu, Bf16MatmulAccumulatesInFp32) {
  const int64_t m = 64, n = 48, k = 128;
  auto a = randomVector(m * k, 11), b = randomVector(n * k, 12);
  std::vector<bmrt::bf16> a16(a.size()), b16(b.size());
  std::vector<float> ar(a.size()), br(b.size()); // the bf16 values, exactly, in fp32
  for (size_t i = 0; i < a.size(); i++)
    a16[i] = bmrt::to_bf16(a[i]), ar[i] = bmrt::to_float(a16[i]);
  for (size_t i = 0; i < b.size(); i++)
    b16[i] = bmrt::to_bf16(b[i]), br[i] = bmrt::to_float(b16[i]);
  std::vector<float> want(m * n, 0.0f);
  bmrt::gemm<float>(host, m, n, k, ar.data(), k, br.data(), k, Trans::T, want.data(), n, nullptr,
                    Epilogue::None, nullptr);
  DeviceVector<bmrt::bf16> da(a16), db(b16);
  DeviceVector<float> dc(std::vector<float>(m * n, 0.0f));
  cu::Matmul mm;
  mm.transB = Trans::T;
  mm.m = m, mm.n = n, mm.k = k;
  mm.a = da.p, mm.lda = k, mm.b = db.p, mm.ldb = k, mm.c = dc.p, mm.ldc = n;
  mm.abType = CUDA_R_16BF;
  cu::matmul(dev(), mm);
  expectNear(dc.get(dev().compute), want, 1e-4f, "bf16 matmul");
}

TEST_F(Gpu, StridedBatchedMatmulIsOneGemmPerBatch) {
  const int64_t batch = 3, m = 10, n = 12, k = 8;
  auto a = randomVector(batch * m * k, 13), b = randomVector(batch * n * k, 14);
  std::vector<float> want(batch * m * n, 0.0f);
  for (int64_t i = 0; i < batch; i++)
    bmrt::gemm_ex<float>(host, Trans::N, Trans::T, m, n, k, a.data() + i * m * k, k,
                         b.data() + i * n * k, k, want.data() + i * m * n, n, false);
  DeviceVector<float> da(a), db(b), dc(std::vector<float>(batch * m * n, 0.0f));
  cu::Matmul mm;
  mm.transB = Trans::T;
  mm.m = m, mm.n = n, mm.k = k;
  mm.a = da.p, mm.lda = k, mm.b = db.p, mm.ldb = k, mm.c = dc.p, mm.ldc = n;
  mm.batch = batch, mm.strideA = m * k, mm.strideB = n * k, mm.strideC = m * n;
  cu::matmul(dev(), mm);
  expectNear(dc.get(dev().compute), want, 1e-4f, "strided batched");
}

TEST_F(Gpu, LayerNormSavesTheHostStatistics) {
  const int64_t rows = 7, C = 1000; // C not a multiple of the block
  auto x = randomVector(rows * C, 15, 3.0f), w = randomVector(C, 16), b = randomVector(C, 17);
  for (float &v : x)
    v += 10.0f; // a mean far from 0: the two-pass variance matters
  std::vector<float> out(rows * C), mean(rows), rstd(rows);
  bmrt::layernorm_forward_save<float>(host, out.data(), mean.data(), rstd.data(), x.data(),
                                      w.data(), b.data(), rows, C, 1e-5f);
  DeviceVector<float> dx(x), dw(w), db(b), dout(out), dmean(mean), drstd(rstd);
  cu::layernorm_forward(dev(), dout.p, dmean.p, drstd.p, dx.p, dw.p, db.p, rows, C, 1e-5f);
  expectNear(dout.get(dev().compute), out, 1e-4f, "layernorm out");
  expectNear(dmean.get(dev().compute), mean, 1e-5f, "layernorm mean");
  expectNear(drstd.get(dev().compute), rstd, 1e-4f, "layernorm rstd");
}

TEST_F(Gpu, ResidualNormsMayUpdateTheStreamInPlace) {
  const int64_t rows = 5, C = 300;
  auto a = randomVector(rows * C, 18), r = randomVector(rows * C, 19), w = randomVector(C, 20),
       b = randomVector(C, 21);
  for (bool rms : {false, true}) {
    std::vector<float> sum = a, out(rows * C);
    if (rms)
      bmrt::residual_rmsnorm_forward<float>(host, sum.data(), out.data(), sum.data(), r.data(),
                                            w.data(), rows, C, 1e-6f);
    else
      bmrt::residual_layernorm_forward<float>(host, sum.data(), out.data(), sum.data(), r.data(),
                                              w.data(), b.data(), rows, C, 1e-5f);
    DeviceVector<float> dsum(a), dr(r), dw(w), db(b), dout(out);
    if (rms)
      cu::residual_rmsnorm_forward(dev(), dsum.p, dout.p, dsum.p, dr.p, dw.p, rows, C, 1e-6f);
    else
      cu::residual_layernorm_forward(dev(), dsum.p, dout.p, dsum.p, dr.p, dw.p, db.p, rows, C,
                                     1e-5f);
    expectNear(dsum.get(dev().compute), sum, 1e-6f, rms ? "rms sum" : "ln sum");
    expectNear(dout.get(dev().compute), out, 1e-4f, rms ? "rms out" : "ln out");
  }
}

TEST_F(Gpu, RmsNormAndSoftmax) {
  const int64_t rows = 6, C = 777;
  auto x = randomVector(rows * C, 22, 4.0f), w = randomVector(C, 23);
  std::vector<float> out(rows * C), rstd(rows), sm(rows * C);
  bmrt::rmsnorm_forward_save<float>(host, out.data(), rstd.data(), x.data(), w.data(), rows, C,
                                    1e-6f);
  bmrt::softmax_forward<float>(host, sm.data(), x.data(), rows, C);
  DeviceVector<float> dx(x), dw(w), dout(out), drstd(rstd), dsm(sm);
  cu::rmsnorm_forward(dev(), dout.p, drstd.p, dx.p, dw.p, rows, C, 1e-6f);
  cu::softmax_forward(dev(), dsm.p, dx.p, rows, C);
  expectNear(dout.get(dev().compute), out, 1e-4f, "rmsnorm out");
  expectNear(drstd.get(dev().compute), rstd, 1e-4f, "rmsnorm rstd");
  expectNear(dsm.get(dev().compute), sm, 1e-4f, "softmax");
}

TEST_F(Gpu, AdamWOverThreeSteps) {
  const int64_t n = 5000;
  auto p = randomVector(n, 24), m = std::vector<float>(n, 0.0f), v = m;
  DeviceVector<float> dp(p), dm(m), dv(v);
  for (int64_t step = 1; step <= 3; step++) {
    auto g = randomVector(n, 25 + (unsigned)step);
    DeviceVector<float> dg(g);
    bmrt::adamw_update<float>(host, p.data(), g.data(), m.data(), v.data(), n, 1e-3, 0.9, 0.999,
                              1e-8, 0.1, step);
    cu::adamw_update(dev(), dp.p, dg.p, dm.p, dv.p, n, 1e-3, 0.9, 0.999, 1e-8, 0.1, step);
    // dg is freed at the end of this iteration: the update must be done with it.
    ASSERT_EQ(cudaStreamSynchronize(dev().compute), cudaSuccess);
  }
  expectNear(dp.get(dev().compute), p, 1e-5f, "adamw params");
  expectNear(dm.get(dev().compute), m, 1e-5f, "adamw m");
  expectNear(dv.get(dev().compute), v, 1e-5f, "adamw v");
}

TEST_F(Gpu, PositionsAndFillZero) {
  DeviceVector<int32_t> pos(std::vector<int32_t>(9, -1));
  cu::positions_forward(dev(), pos.p, 9, 5);
  std::vector<int32_t> want = {5, 6, 7, 8, 9, 10, 11, 12, 13};
  EXPECT_EQ(pos.get(dev().compute), want);
  DeviceVector<float> x(randomVector(1000, 30));
  cu::fill_zero(dev(), x.p, 1000);
  for (float f : x.get(dev().compute))
    ASSERT_EQ(f, 0.0f);
}

// What bmbc prints for a generated kernel: a functor computing element i.
struct ScaleShift {
  float *out;
  const float *in0;
  __host__ __device__ void operator()(int64_t i) const {
    out[i] = bmrt::gelu_tanh(in0[i] * 2.0f + 1.0f);
  }
};

TEST_F(Gpu, LaunchMapRunsAGeneratedKernelOnTheDevice) {
  const int64_t n = 100003;
  auto x = randomVector(n, 31);
  std::vector<float> want(n);
  for (int64_t i = 0; i < n; i++)
    ScaleShift{want.data(), x.data()}(i);
  DeviceVector<float> dx(x), dout(std::vector<float>(n, 0.0f));
  bmrt::Context ctx;
  ctx.device = &dev();
  bmrt::launch_map(ctx, n, ScaleShift{dout.p, dx.p});
  expectNear(dout.get(dev().compute), want, 1e-6f, "launch_map");
}

// What bmbc prints for a kernel whose operands are all f32 indexed by the
// element (compiler/EmitProgram.cpp's emitKernelQuad): quad() and lane()
// beside the call operator. A counter of quad calls shows which path ran.
struct AddGelu {
  float *out;
  const float *in0;
  const float *in1;
  int *quads; // device: quad() calls (test only)
  __host__ __device__ void operator()(int64_t i) const {
    float x0 = in0[i];
    float x1 = in1[i];
    out[i] = bmrt::gelu_tanh(x0 + x1);
  }
  __host__ __device__ bool aligned16() const { return bmrt::aligned16(out, in0, in1); }
  __device__ void quad(int64_t i) const {
    atomicAdd(quads, 1);
    const bmrt::Vec4 q0 = bmrt::load4(in0 + i);
    const bmrt::Vec4 q1 = bmrt::load4(in1 + i);
    bmrt::Vec4 r;
    r.x = lane(i, q0.x, q1.x);
    r.y = lane(i + 1, q0.y, q1.y);
    r.z = lane(i + 2, q0.z, q1.z);
    r.w = lane(i + 3, q0.w, q1.w);
    bmrt::store4(out + i, r);
  }
  __host__ __device__ float lane(int64_t, float x0, float x1) const {
    return bmrt::gelu_tanh(x0 + x1);
  }
};

// 16-byte accesses when every pointer is aligned (n % 4 = 3 left to the
// scalar tail), one element a thread when one is not (an operand one float
// in): both give the host's elements.
TEST_F(Gpu, LaunchMapTakesSixteenByteAccessesWhenAligned) {
  const int64_t n = 100003;
  auto a = randomVector(n + 1, 32), b = randomVector(n + 1, 33);
  bmrt::Context ctx;
  ctx.device = &dev();
  DeviceVector<int> count(std::vector<int>{0});
  for (int64_t skew : {0, 1}) {
    std::vector<float> want(n);
    for (int64_t i = 0; i < n; i++)
      want[i] = bmrt::gelu_tanh(a[i + skew] + b[i]);
    DeviceVector<float> da(a), db(b), dout(std::vector<float>(n, 0.0f));
    ASSERT_EQ(cudaMemset(count.p, 0, sizeof(int)), cudaSuccess);
    bmrt::launch_map(ctx, n, AddGelu{dout.p, da.p + skew, db.p, count.p});
    expectNear(dout.get(dev().compute), want, 1e-6f, "launch_map quad, skew " +
                                                         std::to_string(skew));
    EXPECT_EQ(count.get(dev().compute)[0], skew ? 0 : (int)(n / 4)) << "skew " << skew;
  }
}

TEST_F(Gpu, EmbeddingForwardBackwardAndABadId) {
  const int64_t vocab = 11, C = 300, rows = 9;
  auto table = randomVector(vocab * C, 40), dout = randomVector(rows * C, 41);
  std::vector<int32_t> ids = {3, 0, 10, 3, 7, 3, 1, 10, 5}; // repeated ids add in row order
  std::vector<float> out(rows * C), dtable = randomVector(vocab * C, 42);
  std::vector<float> dtableDev = dtable;
  bmrt::embedding_forward<float>(host, out.data(), ids.data(), table.data(), rows, vocab, C);
  bmrt::embedding_backward<float>(host, dtable.data(), ids.data(), dout.data(), rows, vocab, C);
  DeviceVector<int32_t> dids(ids);
  DeviceVector<float> dtab(table), dout_(dout), dres(std::vector<float>(rows * C)),
      dgrad(dtableDev);
  cu::embedding_forward(dev(), dres.p, dids.p, dtab.p, rows, vocab, C);
  cu::embedding_backward(dev(), dgrad.p, dids.p, dout_.p, rows, vocab, C);
  cu::checkDeviceErrors(dev());
  expectNear(dres.get(dev().compute), out, 0.0f, "embedding forward");
  expectNear(dgrad.get(dev().compute), dtable, 1e-6f, "embedding backward");
  std::vector<int32_t> bad = {1, 11};
  DeviceVector<int32_t> dbad(bad);
  cu::embedding_forward(dev(), dres.p, dbad.p, dtab.p, 2, vocab, C);
  std::string msg;
  try {
    cu::checkDeviceErrors(dev());
  } catch (const bmrt::Error &e) {
    msg = e.what();
  }
  EXPECT_EQ(msg, "token id 11 at row 1 is outside the vocabulary [0, 11)");
  cu::checkDeviceErrors(dev()); // reported once, then cleared
}

TEST_F(Gpu, CopyStridedAndItsBackward) {
  const int64_t outer = 4, inner = 5, stride = 12, offset = 3;
  auto x = randomVector(outer * stride, 43), dout = randomVector(outer * inner, 44);
  std::vector<float> out(outer * inner), dx = randomVector(outer * stride, 45);
  std::vector<float> dxDev = dx;
  bmrt::copy_strided<float>(host, out.data(), x.data(), outer, inner, stride, offset);
  bmrt::copy_strided_backward<float>(host, dx.data(), dout.data(), outer, inner, stride, offset);
  DeviceVector<float> dX(x), dO(dout), dOut(std::vector<float>(outer * inner)), dDx(dxDev);
  cu::copy_strided(dev(), dOut.p, dX.p, outer, inner, stride, offset);
  cu::copy_strided_backward(dev(), dDx.p, dO.p, outer, inner, stride, offset);
  expectNear(dOut.get(dev().compute), out, 0.0f, "copy_strided");
  expectNear(dDx.get(dev().compute), dx, 1e-6f, "copy_strided_backward");
}

TEST_F(Gpu, RotaryForwardInPlaceAndBackward) {
  const int64_t rows = 6, heads = 3, hd = 16, stride = heads * hd + 8;
  auto x = randomVector(rows * stride, 46), dx = randomVector(rows * stride, 47);
  std::vector<int32_t> pos = {0, 1, 2, 7, 100, 2047};
  std::vector<float> out = x, grad = dx;
  bmrt::rotary_forward<float>(host, out.data(), out.data(), pos.data(), rows, heads, hd, stride,
                              10000.0f);
  bmrt::rotary_backward<float>(host, grad.data(), x.data(), pos.data(), rows, heads, hd, stride,
                               10000.0f);
  DeviceVector<int32_t> dpos(pos);
  DeviceVector<float> dout(x), dx0(x), dgrad(dx);
  cu::rotary_forward(dev(), dout.p, dout.p, dpos.p, rows, heads, hd, stride, 10000.0f);
  cu::rotary_backward(dev(), dgrad.p, dx0.p, dpos.p, rows, heads, hd, stride, 10000.0f);
  expectNear(dout.get(dev().compute), out, 1e-4f, "rotary forward");
  expectNear(dgrad.get(dev().compute), grad, 1e-4f, "rotary backward");
}

TEST_F(Gpu, NormBackwardsSavedAndRecomputed) {
  const int64_t rows = 70, C = 333; // three 32-row chunks, the last short
  auto x = randomVector(rows * C, 48, 2.0f), w = randomVector(C, 49), b = randomVector(C, 50),
       dout = randomVector(rows * C, 51);
  std::vector<float> out(rows * C), mean(rows), rstd(rows);
  bmrt::layernorm_forward_save<float>(host, out.data(), mean.data(), rstd.data(), x.data(),
                                      w.data(), b.data(), rows, C, 1e-5f);
  for (bool saved : {true, false}) {
    auto dx = randomVector(rows * C, 52), dw = randomVector(C, 53), db = randomVector(C, 54);
    DeviceVector<float> ddx(dx), ddw(dw), ddb(db), dX(x), dW(w), dD(dout), dM(mean), dR(rstd);
    bmrt::layernorm_backward<float>(host, dx.data(), dw.data(), db.data(), dout.data(), x.data(),
                                    w.data(), saved ? mean.data() : nullptr,
                                    saved ? rstd.data() : nullptr, rows, C, 1e-5f);
    cu::layernorm_backward(dev(), ddx.p, ddw.p, ddb.p, dD.p, dX.p, dW.p, saved ? dM.p : nullptr,
                           saved ? dR.p : nullptr, rows, C, 1e-5f);
    expectNear(ddx.get(dev().compute), dx, 1e-4f, "layernorm dx");
    expectNear(ddw.get(dev().compute), dw, 1e-4f, "layernorm dw");
    expectNear(ddb.get(dev().compute), db, 1e-4f, "layernorm db");

    std::vector<float> rs(rows), o(rows * C);
    bmrt::rmsnorm_forward_save<float>(host, o.data(), rs.data(), x.data(), w.data(), rows, C,
                                      1e-6f);
    auto rdx = randomVector(rows * C, 55), rdw = randomVector(C, 56);
    DeviceVector<float> drdx(rdx), drdw(rdw), dRs(rs);
    bmrt::rmsnorm_backward<float>(host, rdx.data(), rdw.data(), dout.data(), x.data(), w.data(),
                                  saved ? rs.data() : nullptr, rows, C, 1e-6f);
    cu::rmsnorm_backward(dev(), drdx.p, drdw.p, dD.p, dX.p, dW.p, saved ? dRs.p : nullptr, rows, C,
                         1e-6f);
    expectNear(drdx.get(dev().compute), rdx, 1e-4f, "rmsnorm dx");
    expectNear(drdw.get(dev().compute), rdw, 1e-4f, "rmsnorm dw");
  }
}

TEST_F(Gpu, SumRowsSoftmaxBackwardActBackward) {
  const int64_t rows = 45, C = 129;
  auto x = randomVector(rows * C, 57), sums = randomVector(C, 58), dout = randomVector(rows * C, 59);
  std::vector<float> sm(rows * C);
  bmrt::softmax_forward<float>(host, sm.data(), x.data(), rows, C);
  auto dx = randomVector(rows * C, 60);
  DeviceVector<float> dX(x), dS(sums), dSm(sm), dD(dout), dDx(dx);
  bmrt::sum_rows<float>(host, sums.data(), x.data(), rows, C);
  bmrt::softmax_backward<float>(host, dx.data(), sm.data(), dout.data(), rows, C);
  cu::sum_rows(dev(), dS.p, dX.p, rows, C);
  cu::softmax_backward(dev(), dDx.p, dSm.p, dD.p, rows, C);
  expectNear(dS.get(dev().compute), sums, 1e-5f, "sum_rows");
  expectNear(dDx.get(dev().compute), dx, 1e-5f, "softmax_backward");
  for (Epilogue act : {Epilogue::None, Epilogue::GeluTanh, Epilogue::GeluErf, Epilogue::Relu,
                       Epilogue::Silu, Epilogue::Tanh}) {
    auto g = randomVector(rows * C, 61);
    DeviceVector<float> dG(g);
    bmrt::act_backward<float>(host, g.data(), x.data(), dout.data(), rows * C, act);
    cu::act_backward(dev(), dG.p, dX.p, dD.p, rows * C, act);
    expectNear(dG.get(dev().compute), g, 1e-5f, "act_backward " + std::to_string((int)act));
  }
}

TEST_F(Gpu, FusedClassifierInPlaceWithIgnoredRowsAndABadTarget) {
  const int64_t rows = 5, V = 1000;
  auto logits = randomVector(rows * V, 62, 3.0f);
  std::vector<int32_t> targets = {4, -100, 999, 0, 512};
  std::vector<float> losses(rows), d = logits;
  bmrt::fused_classifier_forward_backward<float>(host, losses.data(), d.data(), d.data(),
                                                 targets.data(), rows, V, -100, 0.25);
  DeviceVector<float> dl(logits), dloss(std::vector<float>(rows, 0.0f));
  DeviceVector<int32_t> dt(targets);
  cu::fused_classifier_forward_backward(dev(), dloss.p, dl.p, dl.p, dt.p, rows, V, -100, 0.25);
  cu::checkDeviceErrors(dev());
  expectNear(dloss.get(dev().compute), losses, 1e-5f, "classifier losses");
  expectNear(dl.get(dev().compute), d, 1e-6f, "classifier dlogits");
  DeviceVector<int32_t> bad(std::vector<int32_t>{1, 1000, 2, 3, 4});
  cu::fused_classifier_forward_backward(dev(), dloss.p, nullptr, dl.p, bad.p, rows, V, -100, 1);
  std::string msg;
  try {
    cu::checkDeviceErrors(dev());
  } catch (const bmrt::Error &e) {
    msg = e.what();
  }
  EXPECT_EQ(msg, "fused_classifier_forward_backward: target 1000 of row 1 is outside [0, 1000) "
                 "and is not the ignore index -100");
}

TEST_F(Gpu, AttentionForwardOverACacheWithGqaAndMask) {
  for (bool causal : {true, false}) {
    const int64_t batch = 2, rows = 5, heads = 4, kvHeads = 2, hd = 8, cap = 16, start = 3;
    auto a = attentionArgs(batch, rows, heads, kvHeads, hd, cap, start, causal);
    const int64_t row = a.qRowStride, kv = kvHeads * hd, C = heads * hd;
    auto qkv = randomVector(batch * rows * row, 63);
    auto kc = randomVector(batch * cap * kv, 64), vc = randomVector(batch * cap * kv, 65);
    std::vector<int32_t> mask(batch * cap, 1);
    mask[1] = 0, mask[cap + 6] = 0; // padding keys of each sequence
    std::vector<float> out(batch * rows * C), kcH = kc, vcH = vc;
    DeviceVector<int32_t> dmask(mask);
    a.keyMask = mask.data();
    bmrt::attention_forward<float>(host, a, out.data(), qkv.data(), qkv.data() + C,
                                   qkv.data() + C + kv, kcH.data(), vcH.data());
    DeviceVector<float> dqkv(qkv), dkc(kc), dvc(vc), dout(std::vector<float>(out.size()));
    a.keyMask = dmask.p;
    cu::attention_forward(dev(), a, dout.p, dqkv.p, dqkv.p + C, dqkv.p + C + kv, dkc.p, dvc.p);
    expectNear(dout.get(dev().compute), out, 1e-4f, causal ? "causal" : "bidirectional");
    expectNear(dkc.get(dev().compute), kcH, 0.0f, "k cache");
    expectNear(dvc.get(dev().compute), vcH, 0.0f, "v cache");
  }
}

// The decode step's kernels with the position in device memory
// (Device::stepStart, decode_graph.h): the host argument is ignored (given
// as 0 here), the attention spans the whole cache with the keys past the
// position masked, and gives the host's result at the device's position;
// positions_forward counts from it. New keys written into the cache in
// place are refused (NeedsHostPosition).
TEST_F(Gpu, DecodeKernelsReadTheirPositionFromTheDevice) {
  const int64_t start = 9;
  DeviceVector<int64_t> dstart(std::vector<int64_t>{start});
  for (bool causal : {true, false}) {
    const int64_t batch = 2, rows = 1, heads = 4, kvHeads = 2, hd = 8, cap = 16;
    auto a = attentionArgs(batch, rows, heads, kvHeads, hd, cap, start, causal);
    const int64_t row = a.qRowStride, kv = kvHeads * hd, C = heads * hd;
    auto qkv = randomVector(batch * rows * row, 83);
    auto kc = randomVector(batch * cap * kv, 84), vc = randomVector(batch * cap * kv, 85);
    std::vector<float> out(batch * rows * C), kcH = kc, vcH = vc;
    bmrt::attention_forward<float>(host, a, out.data(), qkv.data(), qkv.data() + C,
                                   qkv.data() + C + kv, kcH.data(), vcH.data());
    DeviceVector<float> dqkv(qkv), dkc(kc), dvc(vc), dout(std::vector<float>(out.size()));
    a.start = 0; // what the device must not use
    dev().stepStart = dstart.p;
    cu::attention_forward(dev(), a, dout.p, dqkv.p, dqkv.p + C, dqkv.p + C + kv, dkc.p, dvc.p);
    EXPECT_EQ(dev().stepCapacity, cap);
    std::string refused;
    try { // keys already in the cache, at a row the host's position chose
      cu::attention_forward(dev(), a, dout.p, dqkv.p, dkc.p, dqkv.p + C + kv, dkc.p, dvc.p);
    } catch (const cu::NeedsHostPosition &e) {
      refused = e.what();
    }
    dev().stepStart = nullptr;
    dev().stepCapacity = 0;
    EXPECT_NE(refused.find("rows of the KV cache"), std::string::npos) << refused;
    expectNear(dout.get(dev().compute), out, 1e-4f, causal ? "causal" : "bidirectional");
    expectNear(dkc.get(dev().compute), kcH, 0.0f, "k cache row at the device's position");
    expectNear(dvc.get(dev().compute), vcH, 0.0f, "v cache row at the device's position");
  }
  DeviceVector<int32_t> pos(std::vector<int32_t>(3, -1));
  dev().stepStart = dstart.p;
  cu::positions_forward(dev(), pos.p, 3, 0);
  dev().stepStart = nullptr;
  EXPECT_EQ(pos.get(dev().compute), (std::vector<int32_t>{9, 10, 11}));
}

// The decode step's attention (attention_decode.cu) reads the keys [0,
// start + rows) only: the cache rows past them are NaN here, which any read
// of them (even a masked one, 0 * NaN) would spread into the output. It
// gives the host's result with GQA, a key mask, several query rows, and a
// head wider than the block (one group of threads, several columns each);
// and the same step over a cache of four times the capacity (the same
// rows, more NaN after them) gives the same bits: the work and the result
// do not depend on the capacity.
TEST_F(Gpu, DecodeAttentionReadsOnlyTheKeysUpToThePosition) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  struct Case {
    int64_t rows, heads, kvHeads, hd;
  };
  for (Case c : {Case{1, 4, 2, 8}, Case{3, 4, 1, 64}, Case{1, 2, 2, 300}})
    for (bool causal : {true, false}) {
      const int64_t batch = 2, cap = 32, start = 11;
      auto a = attentionArgs(batch, c.rows, c.heads, c.kvHeads, c.hd, cap, start, causal);
      const int64_t row = a.qRowStride, kv = c.kvHeads * c.hd, C = c.heads * c.hd;
      auto qkv = randomVector(batch * c.rows * row, 91);
      auto kc = randomVector(batch * cap * kv, 92), vc = randomVector(batch * cap * kv, 93);
      for (int64_t b = 0; b < batch; b++)
        for (int64_t j = start + c.rows; j < cap; j++)
          for (int64_t e = 0; e < kv; e++)
            kc[(b * cap + j) * kv + e] = vc[(b * cap + j) * kv + e] = nan;
      std::vector<int32_t> mask(batch * cap, 1);
      mask[2] = 0, mask[cap + 7] = 0;
      std::vector<float> out(batch * c.rows * C), kcH = kc, vcH = vc;
      a.keyMask = mask.data();
      bmrt::attention_forward<float>(host, a, out.data(), qkv.data(), qkv.data() + C,
                                     qkv.data() + C + kv, kcH.data(), vcH.data());
      const std::string what = "rows " + std::to_string(c.rows) + ", head dim " +
                               std::to_string(c.hd) + (causal ? ", causal" : "");
      // The same sequences in a cache of 4 x the capacity, NaN past the keys.
      const int64_t big = 4 * cap;
      std::vector<float> kBig(batch * big * kv, nan), vBig(batch * big * kv, nan);
      std::vector<int32_t> maskBig(batch * big, 1);
      for (int64_t b = 0; b < batch; b++) {
        std::copy(kc.begin() + b * cap * kv, kc.begin() + (b + 1) * cap * kv,
                  kBig.begin() + b * big * kv);
        std::copy(vc.begin() + b * cap * kv, vc.begin() + (b + 1) * cap * kv,
                  vBig.begin() + b * big * kv);
        std::copy(mask.begin() + b * cap, mask.begin() + (b + 1) * cap,
                  maskBig.begin() + b * big);
      }
      DeviceVector<int64_t> dstart(std::vector<int64_t>{start});
      DeviceVector<float> dqkv(qkv), dout(std::vector<float>(out.size()));
      std::vector<float> got[2];
      for (int k = 0; k < 2; k++) {
        const bool large = k == 1;
        DeviceVector<float> dkc(large ? kBig : kc), dvc(large ? vBig : vc);
        DeviceVector<int32_t> dmask(large ? maskBig : mask);
        bmrt::AttentionArgs d = a;
        d.cacheCapacity = large ? big : cap;
        d.keyMask = dmask.p;
        d.start = 0; // what the device must not use
        dev().stepStart = dstart.p;
        cu::attention_forward(dev(), d, dout.p, dqkv.p, dqkv.p + C, dqkv.p + C + kv, dkc.p,
                              dvc.p);
        dev().stepStart = nullptr;
        dev().stepCapacity = 0;
        got[k] = dout.get(dev().compute);
      }
      expectNear(got[0], out, 1e-4f, what);
      EXPECT_EQ(0, std::memcmp(got[0].data(), got[1].data(), got[0].size() * sizeof(float)))
          << what << ": the result depends on the cache's capacity";
    }
}

TEST_F(Gpu, AttentionBackwardRecomputesTheSoftmax) {
  const int64_t batch = 2, rows = 7, heads = 4, kvHeads = 2, hd = 8;
  auto a = attentionArgs(batch, rows, heads, kvHeads, hd, rows, 0, true);
  const int64_t row = a.qRowStride, kv = kvHeads * hd, C = heads * hd;
  auto qkv = randomVector(batch * rows * row, 66), dout = randomVector(batch * rows * C, 67);
  auto grad = randomVector(batch * rows * row, 68); // accumulated into: start non-zero
  std::vector<float> gradDev = grad;
  bmrt::attention_backward<float>(host, a, grad.data(), grad.data() + C, grad.data() + C + kv,
                                  dout.data(), qkv.data(), qkv.data() + C, qkv.data() + C + kv);
  DeviceVector<float> dqkv(qkv), dd(dout), dg(gradDev);
  cu::attention_backward(dev(), a, dg.p, dg.p + C, dg.p + C + kv, dd.p, dqkv.p, dqkv.p + C,
                         dqkv.p + C + kv);
  expectNear(dg.get(dev().compute), grad, 1e-4f, "dq|dk|dv");
}

TEST_F(Gpu, SgdScaleAndGradientNorms) {
  const int64_t n = 70000;
  auto p = randomVector(n, 69), g = randomVector(n, 70), m = randomVector(n, 71);
  DeviceVector<float> dp(p), dg(g), dm(m);
  for (int64_t step = 1; step <= 2; step++) {
    bmrt::sgd_update<float>(host, p.data(), g.data(), m.data(), n, 0.1, 0.9, 0.01, step);
    cu::sgd_update(dev(), dp.p, dg.p, dm.p, n, 0.1, 0.9, 0.01, step);
  }
  expectNear(dp.get(dev().compute), p, 1e-5f, "sgd params");
  expectNear(dm.get(dev().compute), m, 1e-5f, "sgd momentum");
  const double want = bmrt::grad_norm_squared<float>(host, g.data(), n);
  EXPECT_NEAR(cu::grad_norm_squared(dev(), dg.p, n), want, 1e-9 * want);
  std::vector<double> chunks(3);
  cu::chunk_squares(dev(), chunks.data(), dg.p, n, 32768);
  EXPECT_NEAR(chunks[0] + chunks[1] + chunks[2], want, 1e-9 * want);
  EXPECT_NEAR(chunks[2], bmrt::grad_norm_squared<float>(host, g.data() + 65536, n - 65536),
              1e-9 * want);
  bmrt::scale_inplace<float>(host, g.data(), n, 0.5);
  cu::scale_inplace(dev(), dg.p, n, 0.5);
  expectNear(dg.get(dev().compute), g, 0.0f, "scale_inplace");
}

// fp16's loss scaler: the overflow check (a CUB reduction) answers as the
// host's for finite buffers, one inf or one NaN anywhere (the last element
// too: the reduction covers the tail), and nothing at all.
TEST_F(Gpu, AnyNonFiniteAnswersAsTheHost) {
  const int64_t n = 300001;
  auto g = randomVector(n, 79, 1e4f);
  for (int64_t at : {(int64_t)-1, (int64_t)0, (int64_t)123457, n - 1}) {
    for (float bad : {INFINITY, -INFINITY, NAN}) {
      auto x = g;
      if (at >= 0)
        x[at] = bad;
      DeviceVector<float> dx(x);
      EXPECT_EQ(cu::any_nonfinite(dev(), dx.p, n), bmrt::any_nonfinite<float>(host, x.data(), n))
          << "bad value at " << at;
      EXPECT_EQ(cu::any_nonfinite(dev(), dx.p, n), at >= 0) << "bad value at " << at;
      if (at < 0)
        break;
    }
  }
  DeviceVector<float> one(std::vector<float>{1.0f});
  EXPECT_FALSE(cu::any_nonfinite(dev(), one.p, 0));
}

// ZeRO-2's add_unit_grads: the summed piece added into the partition, the
// host's float addition exactly.
TEST_F(Gpu, AddInplaceIsTheHostsAddition) {
  const int64_t n = 70001;
  auto x = randomVector(n, 80), y = randomVector(n, 81);
  DeviceVector<float> dx(x), dy(y);
  cu::add_inplace(dev(), dx.p, dy.p, n);
  for (int64_t i = 0; i < n; i++)
    x[i] = x[i] + y[i];
  expectNear(dx.get(dev().compute), x, 0.0f, "add_inplace");
}

TEST_F(Gpu, ReducedPrecisionGemmsMatchTheHostsRoundedProducts) {
  const int64_t m = 33, n = 40, k = 72;
  auto a = randomVector(m * k, 72), b = randomVector(n * k, 73), bias = randomVector(n, 74),
       res = randomVector(m * n, 75);
  for (bmrt::LowPrecision p : {bmrt::LowPrecision::BF16, bmrt::LowPrecision::FP16}) {
    std::vector<float> want(m * n), wantEx = res;
    bmrt::gemm_lowp(host, p, m, n, k, a.data(), k, b.data(), k, Trans::T, want.data(), n,
                    bias.data(), Epilogue::GeluTanh, res.data());
    // The weight as 16-bit bits (the program's lowParams), transposed use.
    std::vector<uint16_t> b16(b.size());
    for (size_t i = 0; i < b.size(); i++)
      b16[i] = p == bmrt::LowPrecision::BF16 ? bmrt::to_bf16(b[i]).bits
                                             : bmrt::to_fp16(b[i]).bits;
    bmrt::gemm_ex_lowp_w(host, p, Trans::N, Trans::N, m, n, k, a.data(), k, b16.data(), n,
                         wantEx.data(), n, true);
    DeviceVector<float> da(a), db(b), dbias(bias), dres(res), dc(std::vector<float>(m * n)),
        dcEx(res);
    DeviceVector<uint16_t> db16(b16);
    cu::gemm_lowp(dev(), p, m, n, k, da.p, k, db.p, k, false, Trans::T, dc.p, n, dbias.p,
                  Epilogue::GeluTanh, dres.p);
    cu::gemm_ex_lowp(dev(), p, Trans::N, Trans::N, m, n, k, da.p, k, db16.p, n, true, dcEx.p, n,
                     true);
    expectNear(dc.get(dev().compute), want, 1e-4f, "gemm_lowp");
    expectNear(dcEx.get(dev().compute), wantEx, 1e-4f, "gemm_ex_lowp_w");
    // Conversions: the same bits as the host's.
    std::vector<uint16_t> bits(b.size());
    DeviceVector<uint16_t> dbits(bits);
    cu::convert(dev(), p, dbits.p, db.p, (int64_t)b.size());
    EXPECT_EQ(dbits.get(dev().compute), b16);
  }
}

TEST_F(Gpu, SamplingGreedyAndTemperatureDrawTheHostsTokens) {
  const int64_t V = 5003;
  auto logits = randomVector(V, 76, 2.0f);
  logits[4000] = logits[17] = 9.0f; // a tie for the argmax: the lower id wins
  DeviceVector<float> dl(logits);
  bmrt::SamplingConfig greedy;
  bmrt::Sampler hs = bmrt::makeSampler(greedy, V);
  EXPECT_EQ(cu::sample_token(dev(), greedy, dl.p, V, 0),
            bmrt::sampleToken(host, hs, logits.data(), 0));
  EXPECT_EQ(cu::sample_token(dev(), greedy, dl.p, V, 0), 17);
  bmrt::SamplingConfig warm;
  warm.mode = bmrt::SamplingMode::Temperature;
  warm.temperature = 1.5;
  warm.seed = 1234;
  bmrt::Sampler ws = bmrt::makeSampler(warm, V);
  for (uint64_t step = 0; step < 20; step++)
    EXPECT_EQ(cu::sample_token(dev(), warm, dl.p, V, step),
              bmrt::sampleToken(host, ws, logits.data(), step))
        << "step " << step;
  logits[77] = NAN;
  logits[3000] = INFINITY;
  DeviceVector<float> bad(logits);
  std::string msg;
  try {
    cu::sample_token(dev(), warm, bad.p, V, 0);
  } catch (const bmrt::Error &e) {
    msg = e.what();
  }
  EXPECT_EQ(msg, "the model produced an invalid logit (nan) for token 77");
}

// top_k and top_p: the device's cut keeps the host Sampler's tokens
// (filterDistribution's count) and its draw picks the host's id at every
// step of a seed. Ties at the k-th logit are all kept (TopKLogitsWarper);
// -inf logits are never drawn; k beyond the vocabulary keeps everything;
// p = 0 keeps the most likely token only, p = 1 every token with mass.
// (Not yet run: no GPU where this was written.)
TEST_F(Gpu, SamplingTopKAndTopPCutAndDrawAsTheHost) {
  const int64_t V = 5003;
  auto logits = randomVector(V, 82, 2.0f);
  logits[10] = logits[4001] = logits[2500] = 4.5f; // a tie that straddles k = 2
  logits[11] = 5.0f;
  logits[12] = -INFINITY;
  DeviceVector<float> dl(logits);
  struct Case {
    bmrt::SamplingMode mode;
    int64_t k;
    double p, temperature;
  };
  const Case cases[] = {{bmrt::SamplingMode::TopK, 2, 1, 1.0},
                        {bmrt::SamplingMode::TopK, 50, 1, 0.7},
                        {bmrt::SamplingMode::TopK, V + 10, 1, 1.3},
                        {bmrt::SamplingMode::TopP, 0, 0.9, 1.0},
                        {bmrt::SamplingMode::TopP, 0, 0.5, 2.0},
                        {bmrt::SamplingMode::TopP, 0, 0.0, 1.0},
                        {bmrt::SamplingMode::TopP, 0, 1.0, 1.0}};
  for (const Case &c : cases) {
    bmrt::SamplingConfig config;
    config.mode = c.mode;
    config.topK = c.k;
    config.topP = c.p;
    config.temperature = c.temperature;
    config.seed = 99;
    bmrt::Sampler hs = bmrt::makeSampler(config, V);
    const int64_t kept = bmrt::filterDistribution(hs, logits.data());
    const std::string what = std::string(bmrt::samplingModeName(c.mode)) + " k " +
                             std::to_string(c.k) + " p " + std::to_string(c.p);
    // The cut alone, through the draw's report.
    const cu::SortedDraw first = cu::sorted_draw(dev(), config, dl.p, V, 0);
    // The host counts tokens with mass; the device's cut may also hold the
    // one -inf token (weight 0, never drawn), when it keeps the whole row.
    EXPECT_EQ(first.kept - (first.kept == V ? 1 : 0), kept) << what;
    if (c.mode == bmrt::SamplingMode::TopK && c.k == 2)
      EXPECT_EQ(kept, 4) << "the tie at the 2nd logit is kept whole";
    for (uint64_t step = 0; step < 40; step++) {
      const int32_t want = bmrt::sampleToken(host, hs, logits.data(), step);
      EXPECT_EQ(cu::sample_token(dev(), config, dl.p, V, step), want) << what << " step " << step;
      EXPECT_NE(want, 12) << "a -inf logit was drawn";
    }
  }
  logits[77] = NAN;
  DeviceVector<float> bad(logits);
  bmrt::SamplingConfig topK;
  topK.mode = bmrt::SamplingMode::TopK;
  topK.topK = 5;
  std::string msg;
  try {
    cu::sample_token(dev(), topK, bad.p, V, 0);
  } catch (const bmrt::Error &e) {
    msg = e.what();
  }
  EXPECT_EQ(msg, "the model produced an invalid logit (nan) for token 77");
  std::vector<float> none(V, -INFINITY);
  DeviceVector<float> dnone(none);
  msg.clear();
  try {
    cu::sample_token(dev(), topK, dnone.p, V, 0);
  } catch (const bmrt::Error &e) {
    msg = e.what();
  }
  EXPECT_EQ(msg, "every logit is -inf: there is no token to sample");
}

TEST_F(Gpu, MseLossAndGradientInPlace) {
  const int64_t n = 3001;
  auto pred = randomVector(n, 77), target = randomVector(n, 78);
  std::vector<float> d = pred, loss(1);
  bmrt::mse_forward_backward<float>(host, loss.data(), d.data(), d.data(), target.data(), n, 0.5);
  DeviceVector<float> dp(pred), dt(target), dl(std::vector<float>(1, 0.0f));
  cu::mse_forward_backward(dev(), dl.p, dp.p, dp.p, dt.p, n, 0.5);
  expectNear(dl.get(dev().compute), loss, 1e-6f, "mse loss");
  expectNear(dp.get(dev().compute), d, 1e-6f, "mse dpred");
}

} // namespace
