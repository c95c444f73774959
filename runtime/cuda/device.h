//===- cuda/device.h - The GPU a CUDA program runs on ---------------------===//
//
// One Device per process: the GPU it picked, three streams (compute for the
// kernels, copy for host<->device staging, comm for NCCL), an event to order
// one stream after another, the cuBLASLt handle and its workspace. Kernels
// take it from Context::device and launch on `compute`; nothing inside a
// training step synchronises the host (the app synchronises at the step's
// end, where it reads the loss).
//
// openDevice is where a machine without a usable GPU is told so: no driver,
// a driver older than the toolkit, no GPU, a GPU older than the
// architectures the program was built for. Each is a bmrt::Error whose
// message names the CUDA call and its error string (exit code 1 from the
// executables; docs/building.md).
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_CUDA_DEVICE_H
#define BMRT_CUDA_DEVICE_H

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace bmrt::cuda {

/// Where device kernels report a bad index they met (a token id outside the
/// vocabulary, a target outside the classes): kernels cannot throw, so the
/// first one is recorded here and checkDeviceErrors turns it into the host
/// kernels' message. Device memory, zeroed at open.
struct DeviceErrorSlot {
  int flag;              // 0: none; set once by the first reporter
  int kind;              // DeviceErrorKind
  long long index, row, limit, extra;
};
enum DeviceErrorKind : int {
  kBadTokenId = 1,
  kBadTarget = 2,
  // The tuning kernels (tuning.cu).
  kBadSoftTokenId = 3,     // index the id, row its row, limit vocab + soft tokens
  kBadMaskPosition = 4,    // index the position, row the example, limit seq
  kBadVerbalizerLabel = 5, // index the label, row the example, limit the classes
  kBadLabelWordToken = 6,  // index the token, limit the vocabulary
  kNoLabelWords = 7,       // index the class, row the mask
};

struct Device {
  int index = 0;
  std::string name;
  int major = 0, minor = 0; // compute capability
  size_t totalBytes = 0;
  cudaStream_t compute = nullptr, copy = nullptr, comm = nullptr;
  cudaEvent_t order = nullptr; // orderAfter's event (timing disabled)
  cublasLtHandle_t lt = nullptr;
  void *workspace = nullptr;   // cuBLASLt's workspace, allocated once
  size_t workspaceBytes = 0;
  DeviceErrorSlot *errors = nullptr; // device memory
  void *scratch = nullptr;           // scratchOf's buffer
  size_t scratchBytes = 0;
  uint64_t scratchGeneration = 0;    // bumped when scratchOf reallocates: a CUDA
                                     // graph holding the old pointer is stale
  // The decode step with its position in device memory (decode_graph.h):
  // while `stepStart` is set, positions_forward and attention_forward read
  // the step's first position from it, not from their host argument, and
  // the attention spans the cache's whole capacity (keys past the position
  // masked), so one captured graph serves every step. `stepCapacity` is the
  // smallest KV-cache capacity such an attention saw (the replay's bound).
  // Both count tokens: prefix tuning's prefix rows come before the position
  // (attention_keys.h).
  const int64_t *stepStart = nullptr;
  int64_t stepCapacity = 0;
  // sample_token's draw settings and result (sampling_draw.h): device memory
  // and its pinned mirror, allocated at the first draw.
  void *drawDevice = nullptr, *drawHost = nullptr;

  Device() = default;
  Device(const Device &) = delete;
  Device &operator=(const Device &) = delete;
  ~Device();
};

/// cuBLASLt's workspace: 32 MiB, what cuBLAS itself reserves per handle on
/// Hopper. Counted in the memory check of the role allocations.
constexpr size_t kWorkspaceBytes = size_t(32) << 20;

/// The GPU index this process uses: $LOCAL_RANK under torchrun,
/// $OMPI_COMM_WORLD_LOCAL_RANK under mpirun, else 0 (modulo the count).
int defaultDeviceIndex(int deviceCount);

/// Opens GPU `index` (-1: defaultDeviceIndex): checks driver and device,
/// creates the streams, the event, the cuBLASLt handle and its workspace.
/// Fails (bmrt::Error) with a message saying what is missing.
std::unique_ptr<Device> openDevice(int index = -1);

/// Makes `waiter` wait for the work queued on `producer` so far (an event,
/// no host synchronisation).
void orderAfter(Device &dev, cudaStream_t waiter, cudaStream_t producer);

/// Blocks the host until `stream` is idle (the app, at a step's end).
void synchronize(cudaStream_t stream);

/// A device buffer of at least `bytes` for a kernel's intermediates (the
/// attention's score tiles, the norms' per-chunk sums). It grows when a call
/// needs more than any before - with the compiler's fixed shapes that is the
/// first step only - waiting for the compute stream before freeing the old
/// one; afterwards no step allocates. One user at a time: kernels on the
/// compute stream run in order.
void *scratchOf(Device &dev, size_t bytes);

/// Waits for the compute stream, then fails with the message of the bad
/// index a kernel recorded, if any (and clears it). The app calls it where
/// it synchronises anyway (a step's end), so kernels never make the host
/// wait; a bad index reported there names the kernel, the value and the row
/// as the host kernels' checks do.
void checkDeviceErrors(Device &dev);

/// "CUDA 13.0" from a CUDART_VERSION-style number (13000).
std::string cudaVersionString(int version);

} // namespace bmrt::cuda

#endif // BMRT_CUDA_DEVICE_H
