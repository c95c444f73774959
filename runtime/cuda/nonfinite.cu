//===- cuda/nonfinite.cu - Whether a device buffer holds an inf or a NaN --===//
//
// kernels_cuda.h's any_nonfinite: fp16's loss scaler asks it of the rank's
// gradients once per step (app/loss_scale.cpp). One CUB device-wide
// reduction (TransformReduce: isfinite mapped to 0/1, then a maximum; the
// answer is exact, whatever order CUB reduces in) into the scratch buffer,
// then one synchronisation for the answer: the scaler decides on the host.
//
//===----------------------------------------------------------------------===//
#include "cuda/check.h"
#include "cuda/kernels_cuda.h"

#include <cub/device/device_reduce.cuh>

#include <string>

namespace bmrt::cuda {
namespace {

struct IsNonFinite {
  __device__ int operator()(float v) const { return isfinite(v) ? 0 : 1; }
};
struct MaxInt {
  __device__ int operator()(int a, int b) const { return a > b ? a : b; }
};

} // namespace

bool any_nonfinite(Device &dev, const float *x, int64_t n) {
  if (n < 0)
    fail("any_nonfinite: negative element count " + std::to_string(n));
  if (n == 0)
    return false;
  // The flag first, CUB's temporary storage after it (256-byte aligned, as
  // cudaMalloc's own pointers).
  constexpr size_t kFlagBytes = 256;
  size_t tempBytes = 0;
  BMRT_CUDA_CHECK(cub::DeviceReduce::TransformReduce(nullptr, tempBytes, x, (int *)nullptr, n,
                                                     MaxInt(), IsNonFinite(), 0,
                                                     dev.compute));
  char *scratch = (char *)scratchOf(dev, kFlagBytes + tempBytes);
  int *flag = (int *)scratch;
  BMRT_CUDA_CHECK(cub::DeviceReduce::TransformReduce(scratch + kFlagBytes, tempBytes, x, flag, n,
                                                     MaxInt(), IsNonFinite(), 0,
                                                     dev.compute));
  int host = 0;
  BMRT_CUDA_CHECK(cudaMemcpyAsync(&host, flag, sizeof host, cudaMemcpyDeviceToHost,
                                  dev.compute));
  BMRT_CUDA_CHECK(cudaStreamSynchronize(dev.compute));
  return host != 0;
}

} // namespace bmrt::cuda
