//===- cuda/device.cpp - Picking the GPU, streams and library handles -----===//
#include "cuda/device.h"

#include "bmrt/context.h"
#include "bmrt/cuda_skeletons.h"
#include "cuda/check.h"

#include <cstdlib>
#include <string>

namespace bmrt::cuda {

std::string cudaVersionString(int version) {
  return "CUDA " + std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

// What every "cannot run here" message ends with: what would make it run.
static const char *kNeeds = "this program was built for the cuda target (bmbc --target=cuda) "
                            "and needs an NVIDIA GPU of compute capability 8.0 or newer with "
                            "a driver for ";

static std::string needsDriver() {
  return std::string(kNeeds) + cudaVersionString(CUDART_VERSION) +
         " or newer; bmbc --target=host builds the same job for the CPU";
}

int defaultDeviceIndex(int deviceCount) {
  for (const char *var : {"LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK"}) {
    const char *v = std::getenv(var);
    if (v && *v) {
      char *end = nullptr;
      long r = std::strtol(v, &end, 10);
      if (*end != '\0' || r < 0)
        fail(std::string("$") + var + " is '" + v + "', not a local rank (0, 1, ...)");
      return (int)(r % deviceCount);
    }
  }
  return 0;
}

std::unique_ptr<Device> openDevice(int index) {
  // The driver first: with none, or one older than the toolkit, every other
  // runtime call fails with the same less helpful error.
  int driver = 0;
  BMRT_CUDA_CHECK(cudaDriverGetVersion(&driver));
  int count = 0;
  cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    (void)cudaGetLastError();
    std::string what = std::string("cudaGetDeviceCount failed: ") + cudaGetErrorString(status) +
                       " (" + cudaGetErrorName(status) + ")";
    if (driver == 0)
      fail("no usable CUDA GPU: " + what + "; no NVIDIA driver is loaded (libcuda.so.1); " +
           needsDriver());
    if (driver < CUDART_VERSION)
      fail("no usable CUDA GPU: " + what + "; the NVIDIA driver supports " +
           cudaVersionString(driver) + ", older than this program's " +
           cudaVersionString(CUDART_VERSION) + ": update the driver; " + needsDriver());
    fail("no usable CUDA GPU: " + what + "; " + needsDriver());
  }
  if (count == 0)
    fail("no usable CUDA GPU: cudaGetDeviceCount found none; " + needsDriver());
  if (index < 0)
    index = defaultDeviceIndex(count);
  if (index >= count)
    fail("GPU " + std::to_string(index) + " was asked for, but this machine has " +
         std::to_string(count) + " (0.." + std::to_string(count - 1) + ")");

  auto dev = std::make_unique<Device>();
  dev->index = index;
  cudaDeviceProp props;
  BMRT_CUDA_CHECK(cudaGetDeviceProperties(&props, index));
  dev->name = props.name;
  dev->major = props.major;
  dev->minor = props.minor;
  dev->totalBytes = props.totalGlobalMem;
  if (props.major < 8)
    fail("GPU " + std::to_string(index) + " (" + dev->name + ") has compute capability " +
         std::to_string(props.major) + "." + std::to_string(props.minor) + "; " + kNeeds +
         cudaVersionString(CUDART_VERSION));
  BMRT_CUDA_CHECK(cudaSetDevice(index));
  BMRT_CUDA_CHECK(cudaStreamCreateWithFlags(&dev->compute, cudaStreamNonBlocking));
  BMRT_CUDA_CHECK(cudaStreamCreateWithFlags(&dev->copy, cudaStreamNonBlocking));
  BMRT_CUDA_CHECK(cudaStreamCreateWithFlags(&dev->comm, cudaStreamNonBlocking));
  BMRT_CUDA_CHECK(cudaEventCreateWithFlags(&dev->order, cudaEventDisableTiming));
  BMRT_CUBLAS_CHECK(cublasLtCreate(&dev->lt));
  BMRT_CUDA_CHECK(cudaMalloc(&dev->workspace, kWorkspaceBytes));
  dev->workspaceBytes = kWorkspaceBytes;
  BMRT_CUDA_CHECK(cudaMalloc(&dev->errors, sizeof(DeviceErrorSlot)));
  BMRT_CUDA_CHECK(cudaMemset(dev->errors, 0, sizeof(DeviceErrorSlot)));
  return dev;
}

// No checks here: a destructor may run while an error unwinds, and a failed
// release is not worth a second message.
Device::~Device() {
  if (scratch)
    cudaFree(scratch);
  if (errors)
    cudaFree(errors);
  if (drawDevice)
    cudaFree(drawDevice);
  if (drawHost)
    cudaFreeHost(drawHost);
  if (workspace)
    cudaFree(workspace);
  if (lt)
    cublasLtDestroy(lt);
  if (order)
    cudaEventDestroy(order);
  for (cudaStream_t s : {compute, copy, comm})
    if (s)
      cudaStreamDestroy(s);
}

void orderAfter(Device &dev, cudaStream_t waiter, cudaStream_t producer) {
  BMRT_CUDA_CHECK(cudaEventRecord(dev.order, producer));
  BMRT_CUDA_CHECK(cudaStreamWaitEvent(waiter, dev.order, 0));
}

void synchronize(cudaStream_t stream) { BMRT_CUDA_CHECK(cudaStreamSynchronize(stream)); }

void *scratchOf(Device &dev, size_t bytes) {
  if (bytes <= dev.scratchBytes)
    return dev.scratch;
  if (dev.scratch) {
    synchronize(dev.compute); // earlier kernels may still read it
    BMRT_CUDA_CHECK(cudaFree(dev.scratch));
    dev.scratch = nullptr;
    dev.scratchBytes = 0;
  }
  BMRT_CUDA_CHECK(cudaMalloc(&dev.scratch, bytes));
  dev.scratchBytes = bytes;
  ++dev.scratchGeneration;
  return dev.scratch;
}

void checkDeviceErrors(Device &dev) {
  synchronize(dev.compute);
  DeviceErrorSlot e;
  BMRT_CUDA_CHECK(cudaMemcpy(&e, dev.errors, sizeof e, cudaMemcpyDeviceToHost));
  if (!e.flag)
    return;
  BMRT_CUDA_CHECK(cudaMemset(dev.errors, 0, sizeof e));
  const std::string index = std::to_string(e.index), row = std::to_string(e.row),
                    limit = std::to_string(e.limit);
  if (e.kind == kBadTokenId)
    fail("token id " + index + " at row " + row + " is outside the vocabulary [0, " + limit +
         ")");
  if (e.kind == kBadTarget)
    fail("fused_classifier_forward_backward: target " + index + " of row " + row +
         " is outside [0, " + limit + ") and is not the ignore index " +
         std::to_string(e.extra));
  // The tuning kernels' (tuning.cu), worded as the host kernels' (host/tuning.cpp).
  if (e.kind == kBadSoftTokenId)
    fail("soft_embedding: id " + index + " at row " + row + " is outside [0, " + limit +
         ") (vocabulary plus soft tokens)");
  if (e.kind == kBadMaskPosition)
    fail("gather_rows: mask position " + index + " of example " + row + " is outside [0, " +
         limit + ")");
  if (e.kind == kBadVerbalizerLabel)
    fail("verbalizer_loss: label " + index + " of example " + row +
         " is not a class index in [0, " + limit + ")");
  if (e.kind == kBadLabelWordToken)
    fail("verbalizer_loss: label word token " + index + " is outside the vocabulary [0, " +
         limit + ")");
  if (e.kind == kNoLabelWords)
    fail("verbalizer_loss: class " + index + " has no label words at mask " + row);
  fail("a device kernel reported error kind " + std::to_string(e.kind));
}

// bmrt/cuda_skeletons.h's launch_map (generated kernels) needs these two.
cudaStream_t computeStream(Context &ctx) {
  if (!ctx.device)
    fail("a generated kernel was launched without a device (Context::device is null: the "
         "app did not open the GPU)");
  return ctx.device->compute;
}

void checkLaunch(const char *kernel) {
  checkCuda(cudaGetLastError(), (std::string("launch of ") + kernel).c_str(), __FILE__, __LINE__);
}

} // namespace bmrt::cuda
