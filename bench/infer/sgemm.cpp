// bench/infer/sgemm.cpp: the machine's fp32 GEMM rate through OpenBLAS, the
// bound of prefill (nearly all of its FLOPs are matrix products).
//
//   sgemm N REPS      (threads: OPENBLAS_NUM_THREADS / OMP_NUM_THREADS)
//
// prints "sgemm GFLOP/s" for C = A B with N x N row-major matrices, one line
// per repetition after one warm-up. Built by bench.py against -lopenblas.
#include <cblas.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char **argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: sgemm N REPS\n");
    return 2;
  }
  int n = std::atoi(argv[1]), reps = std::atoi(argv[2]);
  std::vector<float> a((size_t)n * n), b((size_t)n * n), c((size_t)n * n);
  for (size_t i = 0; i < a.size(); ++i) {
    a[i] = (float)((i * 7) % 13) / 13.0f - 0.5f;
    b[i] = (float)((i * 5) % 11) / 11.0f - 0.5f;
  }
  for (int r = -1; r < reps; ++r) {
    auto t = std::chrono::steady_clock::now();
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a.data(), n, b.data(), n,
                0.0f, c.data(), n);
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
    if (r >= 0)
      std::printf("sgemm %.3f\n", 2.0 * n * n * n / s / 1e9);
  }
  std::fprintf(stderr, "sgemm: checksum %g\n", (double)c[(size_t)n * n / 2 + 1]);
  return 0;
}
