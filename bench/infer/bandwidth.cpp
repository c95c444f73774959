// bench/infer/bandwidth.cpp: the machine's memory bandwidth, the bound of
// batch-1 decoding (every weight is read once per token).
//
//   bandwidth THREADS GIB REPS
//
// prints, one line per repetition, "read GB/s" (a sum over one GIB-sized
// float array: read-only traffic, as decoding's weight reads are) and
// "triad GB/s" (STREAM's a = b + s*c over three such arrays, counted as
// STREAM does: 3 arrays of traffic, write-allocate not counted).
// Built by bench.py with g++ -O3 -march=native -fopenmp.
#include <omp.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

static double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Eight independent partial sums per thread keep the adds from serializing
// on one register, so the loop is bound by memory, not by add latency.
static float readAll(const float *a, size_t n) {
  float total = 0;
#pragma omp parallel reduction(+ : total)
  {
    float s[8] = {0, 0, 0, 0, 0, 0, 0, 0};
#pragma omp for schedule(static)
    for (size_t i = 0; i < n; i += 8)
      for (int j = 0; j < 8; ++j)
        s[j] += a[i + j];
    for (float x : s)
      total += x;
  }
  return total;
}

static void triad(float *a, const float *b, const float *c, size_t n, float s) {
#pragma omp parallel for schedule(static)
  for (size_t i = 0; i < n; ++i)
    a[i] = b[i] + s * c[i];
}

int main(int argc, char **argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: bandwidth THREADS GIB REPS\n");
    return 2;
  }
  omp_set_num_threads(std::atoi(argv[1]));
  size_t n = (size_t)(std::atof(argv[2]) * (1ull << 30)) / sizeof(float) / 8 * 8;
  int reps = std::atoi(argv[3]);
  // Not std::vector: its value-initialization would touch every page from
  // one thread; first touch in the same static schedule places the pages
  // where the threads that use them run.
  auto alloc = [n] { return static_cast<float *>(std::aligned_alloc(64, n * sizeof(float))); };
  float *a = alloc(), *b = alloc(), *c = alloc();
  if (!a || !b || !c) {
    std::fprintf(stderr, "bandwidth: cannot allocate 3 x %s GiB\n", argv[2]);
    return 1;
  }
#pragma omp parallel for schedule(static)
  for (size_t i = 0; i < n; ++i) {
    a[i] = 0.0f;
    b[i] = 1.0f;
    c[i] = (float)(i & 7);
  }
  double bytes = (double)n * sizeof(float);
  float sink = readAll(a, n); // warm-up
  triad(a, b, c, n, 0.5f);
  for (int r = 0; r < reps; ++r) {
    double t = now();
    sink += readAll(b, n);
    std::printf("read %.3f\n", bytes / (now() - t) / 1e9);
    t = now();
    triad(a, b, c, n, 0.5f + r);
    std::printf("triad %.3f\n", 3 * bytes / (now() - t) / 1e9);
  }
  std::fprintf(stderr, "bandwidth: checksum %g\n", (double)(sink + a[n / 2]));
  std::free(a);
  std::free(b);
  std::free(c);
  return 0;
}
