//===- cuda/iteration_gate.cu - A per-iteration delta's gate on the GPU ---===//
//
// bmrt/iteration_gate.h for the cuda backend (tuning_cuda.h): the gate is
// device memory that generated kernels read, so it is set by a one-thread
// kernel on the compute stream, in order with them (a host store would write
// device memory from the CPU). The value is a launch argument, so a captured
// decode graph replays the iteration's own gate.
//
//===----------------------------------------------------------------------===//
#include "cuda/check.h"
#include "cuda/tuning_cuda.h"

namespace bmrt::cuda {
namespace {

__global__ void iterationGateKernel(float *out, float value) { out[0] = value; }

} // namespace

void iteration_gate(Device &dev, float *out, bool open) {
  iterationGateKernel<<<1, 1, 0, dev.compute>>>(out, open ? 1.0f : 0.0f);
  BMRT_CUDA_CHECK_LAUNCH("iterationGateKernel");
}

} // namespace bmrt::cuda
