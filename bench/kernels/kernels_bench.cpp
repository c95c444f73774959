//===- bench/kernels/kernels_bench.cpp - Training kernels at GPT-2 small --===//
//
// Times every runtime kernel of a GPT-2 small training step (dim 768, 12
// layers, 12 heads of 64, vocab 50257, B=4 x T=256, i.e. N = 1024 rows,
// fp32) at the shapes the step calls it with, and prints per kernel:
//   ms per call (min and median of the timed calls), GFLOP/s or GB/s, the
//   calls per step and the ms per step they add up to.
// The step total covers everything but the large GEMMs (those are OpenBLAS
// and listed apart, next to a plain cblas_sgemm of the same m, n, k, to show
// whether a transposed layout is slow).
//
//   kernels_bench [NAME-SUBSTRING...]    (threads: OMP_NUM_THREADS, default 2)
//
// Output lines "kernel|<name>|<shape>|<calls>|<min ms>|<median ms>|<rate>|
// <unit>|<ms per step>" for bench.py, then a readable table. Accumulating
// kernels are called repeatedly on the same buffers: the values drift, the
// work does not.
//
//===----------------------------------------------------------------------===//
#include "bmrt/kernels.h"
#include "bmrt/kernels_backward.h"
#include "bmrt/training.h"

#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

namespace {

using namespace bmrt;

constexpr int64_t B = 4, T = 256, N = B * T, C = 768, H = 12, HD = 64, L = 12;
constexpr int64_t V = 50257, F = 4 * C;
constexpr int64_t kParams = 124439808; // GPT-2 small, tied LM head

double now() {
  using Clock = std::chrono::steady_clock;
  return std::chrono::duration<double>(Clock::now().time_since_epoch()).count();
}

// A buffer of small deterministic values, first touched by the threads that
// use it (so pages are spread as in a real run).
struct Buf {
  std::vector<float> v;
  explicit Buf(int64_t n, float scale = 1.0f) : v((size_t)n) {
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; ++i)
      v[i] = scale * ((float)((uint64_t(i) * 2654435761u) % 2001) * 1e-3f - 1.0f);
  }
  float *p() { return v.data(); }
};

struct Row {
  std::string name, shape;
  double calls, minMs, medMs, rate;
  std::string unit;
  bool inStep;
};
std::vector<Row> rows;
std::vector<std::string> filters;

bool wanted(const std::string &name) {
  if (filters.empty())
    return true;
  for (auto &f : filters)
    if (name.find(f) != std::string::npos)
      return true;
  return false;
}

// Whether any of these kernels is selected (their buffers are allocated only
// then: the optimizer's take 2 GB).
bool anyWanted(std::initializer_list<const char *> names) {
  for (const char *n : names)
    if (wanted(n))
      return true;
  return false;
}

// Times fn: 2 warm-up calls, then at least 5 calls and 0.5 s. `work` is the
// FLOPs (unit GFLOP/s) or bytes (GB/s) of one call.
void bench(const std::string &name, const std::string &shape, double calls, double work,
           const char *unit, const std::function<void()> &fn, bool inStep = true) {
  if (!wanted(name))
    return;
  fn();
  fn();
  std::vector<double> t;
  const double begin = now();
  while (t.size() < 5 || (now() - begin < 0.5 && t.size() < 200)) {
    const double s = now();
    fn();
    t.push_back(now() - s);
  }
  std::sort(t.begin(), t.end());
  Row r{name, shape, calls, t.front() * 1e3, t[t.size() / 2] * 1e3,
        work / t[t.size() / 2] * 1e-9, unit, inStep};
  std::printf("kernel|%s|%s|%g|%.4f|%.4f|%.2f|%s|%.2f\n", r.name.c_str(), r.shape.c_str(),
              r.calls, r.minMs, r.medMs, r.rate, r.unit.c_str(),
              inStep ? r.calls * r.medMs : 0.0);
  std::fflush(stdout);
  rows.push_back(r);
}

void attentionArgs(AttentionArgs &a) {
  a.batch = B;
  a.rows = T;
  a.heads = a.kvHeads = H;
  a.headDim = HD;
  a.qRowStride = 3 * C; // q | k | v in one [N, 3C] buffer
  a.qBatchStride = T * 3 * C;
  a.kvRowStride = 3 * C;
  a.kvBatchStride = T * 3 * C;
  a.outRowStride = C;
  a.outBatchStride = T * C;
  a.cacheCapacity = T;
  a.start = 0;
  a.causal = true;
  a.scale = 0.125f;
}

} // namespace

int main(int argc, char **argv) {
  for (int i = 1; i < argc; ++i)
    filters.push_back(argv[i]);
  Context ctx;
  ctx.numThreads = omp_get_max_threads();
  std::printf("threads %d\n", ctx.numThreads);

  // Causal attention: per (sequence, head) T(T+1)/2 visible (query, key)
  // pairs, 2*HD FLOPs per pair and product: 2 products forward, 5 backward
  // (the backward recomputes the scores: S, dP, dV, dQ, dK).
  const double pairs = double(B * H) * T * (T + 1) / 2;
  if (anyWanted({"attention_forward", "attention_backward"})) {
    Buf qkv(N * 3 * C, 0.5f), out(N * C), dout(N * C, 0.1f), dqkv(N * 3 * C);
    Buf kc(B * T * C), vc(B * T * C);
    AttentionArgs a;
    attentionArgs(a);
    bench("attention_forward", "B4 T256 H12 d64 causal", L, pairs * 2 * 2 * HD, "GFLOP/s",
          [&] {
            attention_forward<float>(ctx, a, out.p(), qkv.p(), qkv.p() + C, qkv.p() + 2 * C,
                                     kc.p(), vc.p());
          });
    bench("attention_backward", "B4 T256 H12 d64 causal", L, pairs * 5 * 2 * HD, "GFLOP/s",
          [&] {
            attention_backward<float>(ctx, a, dqkv.p(), dqkv.p() + C, dqkv.p() + 2 * C,
                                      dout.p(), qkv.p(), qkv.p() + C, qkv.p() + 2 * C);
          });
  }
  if (anyWanted({"layernorm_forward", "residual_layernorm_forward", "layernorm_backward"})) {
    // Norms: 25 per step (2 per layer + the final one); the first is a plain
    // layernorm, the others follow a residual add.
    Buf x(N * C), r(N * C), sum(N * C), out(N * C), w(C), b(C), dout(N * C, 0.1f);
    Buf dx(N * C), dw(C), db(C);
    const double rc = double(N * C) * 4;
    bench("layernorm_forward", "1024x768", 1, 2 * rc, "GB/s",
          [&] { layernorm_forward<float>(ctx, out.p(), x.p(), w.p(), b.p(), N, C, 1e-5f); });
    bench("residual_layernorm_forward", "1024x768", 2 * L, 4 * rc, "GB/s", [&] {
      residual_layernorm_forward<float>(ctx, sum.p(), out.p(), x.p(), r.p(), w.p(), b.p(), N,
                                        C, 1e-5f);
    });
    // Reads x, dout, dx; writes dx.
    bench("layernorm_backward", "1024x768 stats recomputed", 2 * L + 1, 4 * rc, "GB/s", [&] {
      layernorm_backward<float>(ctx, dx.p(), dw.p(), db.p(), dout.p(), x.p(), w.p(), nullptr,
                                nullptr, N, C, 1e-5f);
    });
  }
  if (anyWanted({"act_backward", "sum_rows", "softmax_backward"})) {
    Buf x(N * F), dout(N * F, 0.1f), dx(N * F), out(N * F), sums(F);
    const double rc = double(N * F) * 4;
    bench("act_backward", "gelu_tanh 1024x3072", L, 4 * rc, "GB/s", [&] {
      act_backward<float>(ctx, dx.p(), x.p(), dout.p(), N * F, Epilogue::GeluTanh);
    });
    // Bias gradients: widths 3C (qkv), C (attn proj), 4C (fc), C (mlp proj)
    // per layer, counted here as their sum over one 4C-wide call.
    bench("sum_rows", "1024x3072", L * (3.0 + 1 + 4 + 1) / 4, rc, "GB/s",
          [&] { sum_rows<float>(ctx, sums.p(), x.p(), N, F); });
    // Not in GPT-2's step (attention has its own softmax): for reference.
    bench("softmax_backward", "1024x3072", 0, 4 * rc, "GB/s",
          [&] { softmax_backward<float>(ctx, dx.p(), out.p(), dout.p(), N, F); }, false);
  }
  if (wanted("embedding_backward")) {
    Buf wte(V * C), dout(N * C, 0.1f);
    std::vector<int32_t> ids(N);
    for (int64_t i = 0; i < N; ++i)
      ids[i] = int32_t((i * 7919) % V);
    // Token and position tables (the second is smaller: counted alike).
    bench("embedding_backward", "1024 rows of 768, vocab 50257", 2, 3.0 * N * C * 4, "GB/s",
          [&] { embedding_backward<float>(ctx, wte.p(), ids.data(), dout.p(), N, V, C); });
  }
  if (wanted("fused_classifier")) {
    Buf logits(N * V, 2.0f), losses(N);
    std::vector<int32_t> targets(N);
    for (int64_t i = 0; i < N; ++i)
      targets[i] = int32_t((i * 104729) % V);
    // In place (dlogits = logits), as the step calls it: reads and writes
    // the logits once each (at least).
    bench("fused_classifier", "1024x50257 in place", 1, 2.0 * N * V * 4, "GB/s", [&] {
      fused_classifier_forward_backward<float>(ctx, losses.p(), logits.p(), logits.p(),
                                               targets.data(), N, V, -100, 1.0 / N);
    });
  }
  if (anyWanted({"adamw_update", "grad_norm_squared"})) {
    Buf p(kParams, 0.02f), g(kParams, 0.01f), m(kParams, 0.0f), v(kParams, 0.0f);
    int64_t step = 1;
    // Reads p, g, m, v; writes p, m, v.
    bench("adamw_update", "124M params", 1, 7.0 * kParams * 4, "GB/s", [&] {
      adamw_update<float>(ctx, p.p(), g.p(), m.p(), v.p(), kParams, 1e-4, 0.9, 0.999, 1e-8,
                          0.0, step++);
    });
    double sink = 0;
    bench("grad_norm_squared", "124M params", 1, 1.0 * kParams * 4, "GB/s",
          [&] { sink += grad_norm_squared<float>(ctx, g.p(), kParams); });
    if (sink < 0)
      std::printf("%g\n", sink);
  }
  if (anyWanted({"gemm_fwd_xWt", "gemm_dX_fc", "gemm_dW_fc", "gemm_dX_proj", "gemm_dW_proj"})) {
    // The linear layers' GEMMs at the MLP shape (fc: W [3072, 768]; proj:
    // W [768, 3072]); each next to cblas_sgemm NN of the same m, n, k.
    Buf x(N * F), w(N * F), dy(N * F), c(N * F); // w: big enough for every B
    struct Form {
      const char *name, *shape;
      Trans ta, tb;
      int64_t m, n, k;
    } forms[] = {
        {"gemm_fwd_xWt", "y[1024,3072] = x[1024,768] W^T", Trans::N, Trans::T, N, F, C},
        {"gemm_dX_fc", "dX[1024,768] += dY[1024,3072] W[3072,768]", Trans::N, Trans::N, N, C,
         F},
        {"gemm_dW_fc", "dW[3072,768] += dY^T X", Trans::T, Trans::N, F, C, N},
        {"gemm_dX_proj", "dX[1024,3072] += dY[1024,768] W[768,3072]", Trans::N, Trans::N, N, F,
         C},
        {"gemm_dW_proj", "dW[768,3072] += dY^T X", Trans::T, Trans::N, C, F, N},
    };
    for (const Form &f : forms) {
      const double flops = 2.0 * f.m * f.n * f.k;
      const int64_t lda = f.ta == Trans::T ? f.m : f.k, ldb = f.tb == Trans::T ? f.k : f.n;
      bench(f.name, f.shape, 0, flops, "GFLOP/s", [&] {
        gemm_ex<float>(ctx, f.ta, f.tb, f.m, f.n, f.k, dy.p(), lda, w.p(), ldb, c.p(), f.n,
                       true);
      }, false);
      bench(std::string(f.name) + "_sgemmNN", "same m, n, k, both NN", 0, flops, "GFLOP/s",
            [&] {
              cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, f.m, f.n, f.k, 1.0f,
                          dy.p(), f.k, w.p(), f.n, 1.0f, c.p(), f.n);
            }, false);
    }
  }

  double total = 0;
  std::printf("\n%-28s %-44s %6s %9s %9s %10s %9s\n", "kernel", "shape", "calls", "min ms",
              "med ms", "rate", "ms/step");
  for (const Row &r : rows) {
    const double step = r.inStep ? r.calls * r.medMs : 0;
    total += step;
    std::printf("%-28s %-44s %6.1f %9.3f %9.3f %6.1f %-8s %7.1f\n", r.name.c_str(),
                r.shape.c_str(), r.calls, r.minMs, r.medMs, r.rate, r.unit.c_str(), step);
  }
  std::printf("%-28s %-44s %6s %9s %9s %10s %9.1f\n", "total (non-GEMM, per step)", "", "",
              "", "", "", total);
  return 0;
}
