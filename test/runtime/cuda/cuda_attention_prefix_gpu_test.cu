//===- cuda_attention_prefix_gpu_test.cu - Prefix attention on the GPU vs host ===//
//
// The device forms of prefix tuning's attention (runtime/cuda/
// attention_prefix.cu) on random inputs against libbmrt's host kernels
// (host/attention_prefix.cpp and backward_attention_prefix.cpp, themselves
// checked against transformers' past_key_values by test/e2e/check_delta.py
// prefix):
//  - forward over a cache: GQA, a token mask, causal and not, a start past
//    0, the gate open, closed and absent; the cache rows (the prefix's and
//    the tokens') are copies, so equal bit for bit; the output within 1e-4
//    relative: the same fp32 products and softmax summed in another order
//    (cuBLASLt's and CUB's) and contracted into FMAs, over at most 24 keys
//    of O(1) values, where one rounding is 6e-8;
//  - the decode step with its position in device memory (the host's start
//    given as 0): the host's result at the device's position, the cache
//    rows past it NaN (never read), and the replay bound in token rows;
//  - backward: dq | dk | dv of a fused buffer and dpk, dpv, accumulated
//    into non-zero values, within 1e-4 of the host's (the same products;
//    dpk sums 3 sequences), with a mask and the gate open and closed.
// Needs a GPU: skipped without one (ctest label cuda-gpu).
//
//===----------------------------------------------------------------------===//
#include "bmrt/kernels.h"
#include "bmrt/kernels_backward.h"
#include "cuda/device.h"
#include "cuda/kernels_cuda.h"
#include "gpu_test.h"

#include <gtest/gtest.h>

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

namespace cu = bmrt::cuda;

class PrefixGpu : public gpu_test::GpuTest {
protected:
  bmrt::Context host;
};

// The gate of a layer: absent (nullptr), open (1) or closed (0).
enum class Gate { None, Open, Closed };
const char *gateName(Gate g) { return g == Gate::None ? "no gate" : g == Gate::Open ? "open" : "closed"; }

TEST_F(PrefixGpu, ForwardOverACacheWithGqaMaskAndGate) {
  const int64_t batch = 2, rows = 5, heads = 4, kvHeads = 2, hd = 8, P = 3, cap = 24;
  for (int64_t start : {0, 4})
    for (bool causal : {true, false})
      for (Gate gate : {Gate::None, Gate::Open, Gate::Closed}) {
        auto a = attentionArgs(batch, rows, heads, kvHeads, hd, cap, start, causal);
        const int64_t row = a.qRowStride, kv = kvHeads * hd, C = heads * hd;
        auto qkv = randomVector(batch * rows * row, 11);
        auto pk = randomVector(P * kv, 12), pv = randomVector(P * kv, 13);
        auto kc = randomVector(batch * cap * kv, 14), vc = randomVector(batch * cap * kv, 15);
        std::vector<int32_t> mask(batch * (cap - P), 1); // the tokens' keys only
        mask[1] = 0, mask[(cap - P) + start + 2] = 0;
        const std::vector<float> gateValue{gate == Gate::Closed ? 0.0f : 1.0f};
        std::vector<float> out(batch * rows * C), kcH = kc, vcH = vc;
        a.keyMask = mask.data();
        bmrt::attention_prefix_forward<float>(
            host, a, P, pk.data(), pv.data(), gate == Gate::None ? nullptr : gateValue.data(),
            out.data(), qkv.data(), qkv.data() + C, qkv.data() + C + kv, kcH.data(), vcH.data());
        DeviceVector<float> dqkv(qkv), dpk(pk), dpv(pv), dkc(kc), dvc(vc), dgate(gateValue),
            dout(std::vector<float>(out.size()));
        DeviceVector<int32_t> dmask(mask);
        a.keyMask = dmask.p;
        cu::attention_prefix_forward(dev(), a, P, dpk.p, dpv.p,
                                     gate == Gate::None ? nullptr : dgate.p, dout.p, dqkv.p,
                                     dqkv.p + C, dqkv.p + C + kv, dkc.p, dvc.p);
        const std::string what = "start " + std::to_string(start) +
                                  (causal ? ", causal, " : ", bidirectional, ") + gateName(gate);
        expectNear(dout.get(dev().compute), out, 1e-4f, what);
        expectNear(dkc.get(dev().compute), kcH, 0.0f, what + ": k cache");
        expectNear(dvc.get(dev().compute), vcH, 0.0f, what + ": v cache");
      }
}

// A decode step with a prefix as the graph runs it: the position (token
// count) in device memory, the host argument 0. Cache rows past P + start +
// rows are NaN: a read of them would spread into the output.
TEST_F(PrefixGpu, DecodeStepReadsItsPositionFromTheDevice) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const int64_t batch = 1, rows = 1, heads = 4, kvHeads = 2, hd = 8, P = 4, cap = P + 16;
  const int64_t start = 6;
  for (Gate gate : {Gate::Open, Gate::Closed}) {
    auto a = attentionArgs(batch, rows, heads, kvHeads, hd, cap, start, true);
    const int64_t row = a.qRowStride, kv = kvHeads * hd, C = heads * hd;
    auto qkv = randomVector(batch * rows * row, 21);
    auto pk = randomVector(P * kv, 22), pv = randomVector(P * kv, 23);
    auto kc = randomVector(batch * cap * kv, 24), vc = randomVector(batch * cap * kv, 25);
    for (int64_t e = (P + start + rows) * kv; e < cap * kv; e++)
      kc[e] = vc[e] = nan;
    const std::vector<float> gateValue{gate == Gate::Closed ? 0.0f : 1.0f};
    std::vector<float> out(batch * rows * C), kcH = kc, vcH = vc;
    bmrt::attention_prefix_forward<float>(host, a, P, pk.data(), pv.data(), gateValue.data(),
                                          out.data(), qkv.data(), qkv.data() + C,
                                          qkv.data() + C + kv, kcH.data(), vcH.data());
    DeviceVector<float> dqkv(qkv), dpk(pk), dpv(pv), dkc(kc), dvc(vc), dgate(gateValue),
        dout(std::vector<float>(out.size()));
    DeviceVector<int64_t> dstart(std::vector<int64_t>{start});
    a.start = 0; // what the device must not use
    dev().stepStart = dstart.p;
    dev().stepCapacity = 0;
    cu::attention_prefix_forward(dev(), a, P, dpk.p, dpv.p, dgate.p, dout.p, dqkv.p, dqkv.p + C,
                                 dqkv.p + C + kv, dkc.p, dvc.p);
    const int64_t bound = dev().stepCapacity;
    dev().stepStart = nullptr;
    dev().stepCapacity = 0;
    EXPECT_EQ(bound, cap - P) << "the replay's bound counts token rows";
    expectNear(dout.get(dev().compute), out, 1e-4f, gateName(gate));
    expectNear(dkc.get(dev().compute), kcH, 0.0f, std::string(gateName(gate)) + ": k cache");
    expectNear(dvc.get(dev().compute), vcH, 0.0f, std::string(gateName(gate)) + ": v cache");
  }
}

TEST_F(PrefixGpu, BackwardSplitsTheKeyGradientsIntoTokensAndPrefix) {
  const int64_t batch = 3, rows = 7, heads = 4, kvHeads = 2, hd = 8, P = 4;
  for (bool masked : {false, true})
    for (Gate gate : {Gate::None, Gate::Closed}) {
      auto a = attentionArgs(batch, rows, heads, kvHeads, hd, rows, 0, true);
      const int64_t row = a.qRowStride, kv = kvHeads * hd, C = heads * hd;
      auto qkv = randomVector(batch * rows * row, 31), dout = randomVector(batch * rows * C, 32);
      auto pk = randomVector(P * kv, 33), pv = randomVector(P * kv, 34);
      // Accumulated into: start non-zero.
      auto grad = randomVector(batch * rows * row, 35);
      auto dpk = randomVector(P * kv, 36), dpv = randomVector(P * kv, 37);
      std::vector<int32_t> mask(batch * rows, 1);
      mask[2] = 0, mask[rows + 0] = 0, mask[2 * rows + 5] = 0;
      const std::vector<float> gateValue{0.0f};
      DeviceVector<float> dqkv(qkv), ddout(dout), dpkIn(pk), dpvIn(pv), dg(grad), ddpk(dpk),
          ddpv(dpv), dgate(gateValue);
      DeviceVector<int32_t> dmask(mask);
      a.keyMask = masked ? mask.data() : nullptr;
      bmrt::attention_prefix_backward<float>(
          host, a, P, pk.data(), pv.data(), gate == Gate::None ? nullptr : gateValue.data(),
          dpk.data(), dpv.data(), grad.data(), grad.data() + C, grad.data() + C + kv,
          dout.data(), qkv.data(), qkv.data() + C, qkv.data() + C + kv);
      a.keyMask = masked ? dmask.p : nullptr;
      cu::attention_prefix_backward(dev(), a, P, dpkIn.p, dpvIn.p,
                                    gate == Gate::None ? nullptr : dgate.p, ddpk.p, ddpv.p, dg.p,
                                    dg.p + C, dg.p + C + kv, ddout.p, dqkv.p, dqkv.p + C,
                                    dqkv.p + C + kv);
      const std::string what = std::string(masked ? "masked, " : "") + gateName(gate);
      expectNear(dg.get(dev().compute), grad, 1e-4f, what + ": dq|dk|dv");
      expectNear(ddpk.get(dev().compute), dpk, 1e-4f, what + ": d prefix keys");
      expectNear(ddpv.get(dev().compute), dpv, 1e-4f, what + ": d prefix values");
    }
}

} // namespace
