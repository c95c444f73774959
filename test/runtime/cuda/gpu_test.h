//===- gpu_test.h - The GPU tests' fixture and host/device vectors -------===//
//
// What every cuda-gpu test does to compare a device kernel with the host's:
// a fixture that opens the GPU once per test binary (and skips, saying why,
// where there is none), random inputs, a device copy of a host vector (freed
// with the object, read back after the stream it was written on), and a
// relative comparison. Header-only, for both the .cu tests (nvcc) and the
// .cpp ones.
//
//===----------------------------------------------------------------------===//
#ifndef BMB_TEST_GPU_TEST_H
#define BMB_TEST_GPU_TEST_H

#include "bmrt/kernels.h"
#include "cuda/device.h"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace gpu_test {

/// The base of a test suite that runs on the GPU: the device is opened by
/// the first such suite of the binary and kept; without one every test is
/// skipped with the reason (cuda-gpu tests report "Skipped" here).
class GpuTest : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    Opened &o = opened();
    if (o.device || !o.why.empty())
      return;
    try {
      o.device = bmrt::cuda::openDevice();
    } catch (const bmrt::Error &e) {
      o.why = e.what();
    }
  }
  void SetUp() override {
    if (!opened().device)
      GTEST_SKIP() << opened().why;
  }
  bmrt::cuda::Device &dev() { return *opened().device; }

private:
  struct Opened {
    std::unique_ptr<bmrt::cuda::Device> device;
    std::string why; // openDevice's message, when it failed
  };
  static Opened &opened() {
    static Opened o;
    return o;
  }
};

/// n normal samples of standard deviation `scale`, the same for a seed.
inline std::vector<float> randomVector(size_t n, unsigned seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> v(n);
  for (float &x : v)
    x = dist(rng);
  return v;
}

/// A device copy of a host vector, freed with the object.
template <class T> struct DeviceVector {
  T *p = nullptr;
  size_t n = 0;
  explicit DeviceVector(const std::vector<T> &h) : n(h.size()) {
    EXPECT_EQ(cudaMalloc(&p, n * sizeof(T)), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(p, h.data(), n * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
  }
  DeviceVector(const DeviceVector &) = delete;
  DeviceVector &operator=(const DeviceVector &) = delete;
  ~DeviceVector() { cudaFree(p); }
  /// The contents after the work queued on `stream` so far.
  std::vector<T> get(cudaStream_t stream) const {
    EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    std::vector<T> h(n);
    EXPECT_EQ(cudaMemcpy(h.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
    return h;
  }
};

/// Attention's arguments for q/k/v packed as one [batch, rows, C + 2 kv]
/// projection (the compiler's fused qkv layout), out [batch, rows, C], with
/// a KV cache of `cap` rows beside it.
inline bmrt::AttentionArgs attentionArgs(int64_t batch, int64_t rows, int64_t heads,
                                         int64_t kvHeads, int64_t hd, int64_t cap, int64_t start,
                                         bool causal) {
  bmrt::AttentionArgs a;
  a.batch = batch, a.rows = rows, a.heads = heads, a.kvHeads = kvHeads, a.headDim = hd;
  const int64_t C = heads * hd, kv = kvHeads * hd, row = C + 2 * kv;
  a.qRowStride = a.kvRowStride = row;
  a.qBatchStride = a.kvBatchStride = rows * row;
  a.outRowStride = C, a.outBatchStride = rows * C;
  a.cacheCapacity = cap, a.start = start, a.causal = causal;
  a.scale = 1.0f / std::sqrt((float)hd);
  return a;
}

/// |got - want| <= tol * (1 + |want|) element by element (NaN only where
/// the host has NaN).
inline void expectNear(const std::vector<float> &got, const std::vector<float> &want, float tol,
                       const std::string &what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); i++) {
    if (std::isnan(want[i])) {
      ASSERT_TRUE(std::isnan(got[i])) << what << " at " << i;
      continue;
    }
    ASSERT_NEAR(got[i], want[i], tol * (1.0f + std::fabs(want[i]))) << what << " at " << i;
  }
}

} // namespace gpu_test

#endif // BMB_TEST_GPU_TEST_H
