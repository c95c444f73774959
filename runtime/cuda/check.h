//===- cuda/check.h - Every CUDA, cuBLAS and NCCL return code checked ------===//
//
// Each library call of the CUDA backend goes through one of these macros, so
// a failure names the call as written, the library's own error string, and
// where it happened:
//   BMRT_CUDA_CHECK(cudaMalloc(&p, bytes));
//   -> "cudaMalloc(&p, bytes) failed: out of memory (cudaErrorMemoryAllocation)
//       at runtime/cuda/device_buffers.cu:42"
// They throw bmrt::Error (bmrt::fail), which the executables' main reports as
// "error: ..." with exit code 1. Kernel launches are checked with
// BMRT_CUDA_CHECK_LAUNCH(name) right after the launch (cudaGetLastError: a
// bad configuration is reported there; faults inside the kernel surface at
// the next synchronising call, which is checked too).
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_CUDA_CHECK_H
#define BMRT_CUDA_CHECK_H

#include <cublasLt.h>
#include <cublas_api.h>
#include <cuda_runtime.h>

namespace bmrt::cuda {

void checkCuda(cudaError_t status, const char *call, const char *file, int line);
void checkCublas(cublasStatus_t status, const char *call, const char *file, int line);
/// ncclResult_t as int: check.h does not pull nccl.h into every kernel file.
void checkNccl(int status, const char *call, const char *file, int line);

} // namespace bmrt::cuda

#define BMRT_CUDA_CHECK(call) ::bmrt::cuda::checkCuda((call), #call, __FILE__, __LINE__)
#define BMRT_CUBLAS_CHECK(call) ::bmrt::cuda::checkCublas((call), #call, __FILE__, __LINE__)
#define BMRT_NCCL_CHECK(call) ::bmrt::cuda::checkNccl((int)(call), #call, __FILE__, __LINE__)
#define BMRT_CUDA_CHECK_LAUNCH(kernel)                                                          \
  ::bmrt::cuda::checkCuda(cudaGetLastError(), "launch of " kernel, __FILE__, __LINE__)

#endif // BMRT_CUDA_CHECK_H
