//===- bench/gemv/gemv_bench.cpp - Batch-1 matvec against the memory bound -===//
//
// Decode at batch 1 is bound by reading the weights once per token, so the
// figure that matters is GB/s of weights read, next to what the machine can
// read at all. Prints, for the GPT-2 small shapes (fp32, W stored [n, k]):
//   bound   a read-only sum over >= 1 GiB with the same threads
//   ours    bmrt::gemm with m = 1, Trans::T (the matvec path)
//   sgemv   OpenBLAS cblas_sgemv on the same matrices
// Each shape cycles over enough distinct copies of W that > 1 GiB is read
// between two visits of the same bytes (this machine's L3 is large), so every
// figure is a DRAM figure. Then a sweep over small m (matvec_nt vs sgemm)
// that sets host::kMatvecMaxRows. Threads: OMP_NUM_THREADS (run.sh: 2).
//
//===----------------------------------------------------------------------===//
#include "bmrt/kernels.h"
#include "host/gemv.h"

#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

const size_t kMinBytes = size_t(1) << 30; // read between two visits of a byte
const int kReps = 5;                      // timed passes; the best is kept

double now() {
  using Clock = std::chrono::steady_clock;
  return std::chrono::duration<double>(Clock::now().time_since_epoch()).count();
}

// A buffer touched first by the threads that will read it, filled with small
// deterministic values (no denormals, no NaN).
float *allocFilled(size_t count) {
  float *p = (float *)std::aligned_alloc(64, (count * sizeof(float) + 63) / 64 * 64);
  if (!p) {
    std::fprintf(stderr, "error: cannot allocate %zu MiB\n", count * 4 >> 20);
    std::exit(1);
  }
#pragma omp parallel for schedule(static)
  for (size_t i = 0; i < count; i++)
    p[i] = (float)((i * 2654435761u) % 1000) * 1e-3f - 0.5f;
  return p;
}

typedef float V16 __attribute__((vector_size(64)));

// Read-only sum over (nearly all of) count floats; *read gets how many.
// Each thread reads its share as kStreams interleaved sequential streams, one
// cache line from each in turn: a single stream per core leaves memory
// parallelism unused on this machine, and the matvec reads several rows at
// once, so a one-stream sum would understate the bound.
const int kStreams = 4;
float sumAll(const float *p, size_t count, size_t *read) {
  float total = 0;
  const int threads = omp_get_max_threads();
  const size_t share = count / threads;
  const size_t part = share / kStreams / 16 * 16; // floats per stream
  *read = part * kStreams * threads;
#pragma omp parallel num_threads(threads) reduction(+ : total)
  {
    const float *base = p + share * omp_get_thread_num();
    V16 s[kStreams] = {};
    for (size_t i = 0; i < part; i += 16)
      for (int t = 0; t < kStreams; t++) {
        V16 x;
        std::memcpy(&x, base + t * part + i, 64);
        s[t] += x;
      }
    for (int t = 0; t < kStreams; t++)
      for (int l = 0; l < 16; l++)
        total += s[t][l];
  }
  return total;
}

// Best-of-kReps seconds of fn() after one warm-up call.
template <class Fn> double bestSeconds(Fn fn) {
  fn();
  double best = 1e30;
  for (int r = 0; r < kReps; r++) {
    double t0 = now();
    fn();
    best = std::min(best, now() - t0);
  }
  return best;
}

struct Shape {
  const char *name;
  int64_t n, k;
};

// GB/s of ours and sgemv at m = 1 for the GPT-2 small shapes.
void benchShapes(bmrt::Context &ctx, double bound) {
  const Shape shapes[] = {{"qkv  2304x768", 2304, 768},
                          {"fc   3072x768", 3072, 768},
                          {"proj 768x3072", 768, 3072},
                          {"lm   50257x768", 50257, 768}};
  std::printf("%-15s %6s %10s %10s %10s %10s %9s\n", "W [n, k]", "copies", "ours GB/s",
              "sgemv GB/s", "ours/bnd", "sgemv/bnd", "max|diff|");
  for (const Shape &s : shapes) {
    const size_t matCount = (size_t)(s.n * s.k);
    const int copies = (int)std::max<size_t>(2, kMinBytes / (matCount * 4) + 1);
    float *w = allocFilled(matCount * copies);
    float *x = allocFilled(s.k);
    std::vector<float> yOurs(s.n), yBlas(s.n);
    double ours = bestSeconds([&] {
      for (int c = 0; c < copies; c++)
        bmrt::gemm<float>(ctx, 1, s.n, s.k, x, s.k, w + c * matCount, s.k, bmrt::Trans::T,
                          yOurs.data(), s.n, nullptr, bmrt::Epilogue::None, nullptr);
    });
    double blas = bestSeconds([&] {
      for (int c = 0; c < copies; c++)
        cblas_sgemv(CblasRowMajor, CblasNoTrans, s.n, s.k, 1.0f, w + c * matCount, s.k, x,
                    1, 0.0f, yBlas.data(), 1);
    });
    float maxDiff = 0;
    for (int64_t j = 0; j < s.n; j++)
      maxDiff = std::max(maxDiff, std::fabs(yOurs[j] - yBlas[j]));
    const double bytes = (double)matCount * 4 * copies;
    std::printf("%-15s %6d %10.2f %10.2f %9.1f%% %9.1f%% %9.2g\n", s.name, copies,
                bytes / ours / 1e9, bytes / blas / 1e9, 100 * bytes / ours / 1e9 / bound,
                100 * bytes / blas / 1e9 / bound, maxDiff);
    std::free(w);
    std::free(x);
  }
}

// Microseconds per call of matvec_nt and sgemm over small m, W cold and
// warm: where does sgemm (which packs W) catch up with streaming W once?
void benchSweep(const bmrt::Context &ctx) {
  const Shape sweep = {"fc   3072x768", 3072, 768};
  const size_t matCount = (size_t)(sweep.n * sweep.k);
  const int copies = (int)(kMinBytes / (matCount * 4) + 1);
  float *w = allocFilled(matCount * copies);
  float *a = allocFilled(64 * sweep.k);
  std::vector<float> c(64 * sweep.n);
  std::printf("\nsmall m, W %s, microseconds per call (kMatvecMaxRows = %lld)\n",
              sweep.name, (long long)bmrt::host::kMatvecMaxRows);
  std::printf("%3s %12s %12s %12s %12s\n", "m", "matvec_nt", "sgemm", "matvec warm",
              "sgemm warm");
  for (int64_t m : {1, 2, 4, 8, 16, 24, 32, 40, 48, 64}) {
    // cold: a different copy of W each call (DRAM); warm: the same W (L3).
    auto matvec = [&](const float *wc) {
      bmrt::host::matvec_nt<float>(ctx, m, sweep.n, sweep.k, a, sweep.k, wc, sweep.k,
                                   c.data(), sweep.n, nullptr, bmrt::Epilogue::None,
                                   nullptr);
    };
    auto sgemm = [&](const float *wc) {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, sweep.n, sweep.k, 1.0f, a,
                  sweep.k, wc, sweep.k, 0.0f, c.data(), sweep.n);
    };
    auto cold = [&](auto fn) {
      return bestSeconds([&] {
               for (int i = 0; i < copies; i++)
                 fn(w + i * matCount);
             }) /
             copies;
    };
    auto warm = [&](auto fn) {
      return bestSeconds([&] {
               for (int i = 0; i < copies; i++)
                 fn(w);
             }) /
             copies;
    };
    std::printf("%3lld %12.1f %12.1f %12.1f %12.1f\n", (long long)m, 1e6 * cold(matvec),
                1e6 * cold(sgemm), 1e6 * warm(matvec), 1e6 * warm(sgemm));
  }
  std::free(w);
  std::free(a);
}

} // namespace

int main(int argc, char **argv) {
  // Optional argument: "shapes" or "sweep" runs only that part.
  const char *only = argc > 1 ? argv[1] : "";
  const bool runShapes = std::strcmp(only, "sweep") != 0;
  const bool runSweep = std::strcmp(only, "shapes") != 0;
  if (argc > 2 || (*only && runShapes && runSweep)) {
    std::fprintf(stderr, "usage: gemv_bench [shapes|sweep]\n");
    return 2;
  }
  bmrt::Context ctx;
  ctx.numThreads = omp_get_max_threads();
  std::printf("threads %d, %d repetitions (best kept), > %zu MiB read per pass\n",
              ctx.numThreads, kReps, kMinBytes >> 20);
  if (runShapes) {
    // The bound is measured before and after the shapes: on a shared machine
    // a large difference between the two says the figures are noisy.
    const size_t boundCount = 2 * kMinBytes / sizeof(float);
    float *boundBuf = allocFilled(boundCount);
    volatile float sink = 0;
    size_t boundRead = 0;
    auto boundGBs = [&] {
      double sec =
          bestSeconds([&] { sink = sink + sumAll(boundBuf, boundCount, &boundRead); });
      return boundRead * sizeof(float) / sec / 1e9;
    };
    const double bound = boundGBs();
    std::printf("bound: read-only sum over %zu MiB: %.2f GB/s\n\n", boundRead * 4 >> 20,
                bound);
    benchShapes(ctx, bound);
    std::printf("bound again after the shapes: %.2f GB/s (the ratios use the first)\n",
                boundGBs());
    std::free(boundBuf);
  }
  if (runSweep)
    benchSweep(ctx);
  return 0;
}
