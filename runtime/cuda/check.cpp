//===- cuda/check.cpp - The messages of failed CUDA, cuBLAS and NCCL calls -===//
#include "cuda/check.h"

#include "bmrt/context.h"

#include <nccl.h>

#include <string>

namespace bmrt::cuda {

static std::string where(const char *file, int line) {
  return " at " + std::string(file) + ":" + std::to_string(line);
}

void checkCuda(cudaError_t status, const char *call, const char *file, int line) {
  if (status == cudaSuccess)
    return;
  // Clear a sticky-free error so the next check does not report it again.
  (void)cudaGetLastError();
  fail(std::string(call) + " failed: " + cudaGetErrorString(status) + " (" +
       cudaGetErrorName(status) + ")" + where(file, line));
}

void checkCublas(cublasStatus_t status, const char *call, const char *file, int line) {
  if (status == CUBLAS_STATUS_SUCCESS)
    return;
  fail(std::string(call) + " failed: " + cublasLtGetStatusString(status) + " (" +
       cublasLtGetStatusName(status) + ")" + where(file, line));
}

void checkNccl(int status, const char *call, const char *file, int line) {
  if (status == ncclSuccess)
    return;
  fail(std::string(call) + " failed: " + ncclGetErrorString((ncclResult_t)status) + " (nccl " +
       std::to_string(status) + ")" + where(file, line));
}

} // namespace bmrt::cuda
