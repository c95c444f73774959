//===- cuda/device_buffers.h - One cudaMalloc per role, pinned staging ----===//
//
// A program's memory on the GPU is what the compiler planned (ProgramInfo's
// paramBytes, stateBytes, activationBytes; for training also TrainInfo's
// gradBytes and optStateBytes): one cudaMalloc per role, made once before
// the first step, never inside one. Before allocating, the total (plus
// cuBLASLt's workspace) is checked against cudaMemGetInfo so that a plan
// that does not fit says how much it needs, how much is free, and which job
// setting sizes the largest role, instead of a bare out-of-memory.
//
// Host<->device traffic (token ids in, logits and losses out) goes through
// one pinned host buffer on the copy stream.
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_CUDA_DEVICE_BUFFERS_H
#define BMRT_CUDA_DEVICE_BUFFERS_H

#include "bmrt/program.h"
#include "cuda/device.h"

#include <cstddef>
#include <string>
#include <vector>

namespace bmrt::cuda {

/// One role of the memory plan: its name ("params"), its size, and the job
/// setting that sizes it (for the message when the plan does not fit).
struct RoleSize {
  std::string role;
  size_t bytes = 0;
  std::string sizedBy;
  int slot = -1; // which of Buffers' pointers (role 0..7, ProgramBuffers' order)
};

/// The roles of `program` on rank `rank` of `ranks` (app/role_plan.h: train
/// programs add grads and optimizer state, bf16/fp16 ones the 16-bit copy of
/// the trainable group, zero = 2 and 3 the staging of one unit's gradients,
/// zero = 3 the staging of the params gathered for the entries), in
/// the order of Buffers' fields; empty optional roles are left out.
std::vector<RoleSize> plannedRoles(const ProgramInfo &program, int rank = 0, int ranks = 1);

/// Fails unless `roles` plus the workspace fit in `freeBytes`; the message
/// lists the roles, the free and total memory, and what would make it fit.
void checkFits(const Device &dev, const std::vector<RoleSize> &roles, size_t freeBytes,
               size_t totalBytes);

/// The role allocations of one program on one device. Buffers::params etc.
/// are device pointers.
class DeviceBuffers {
public:
  /// Checks the plan of rank `rank` of `ranks` against the free memory,
  /// then one cudaMalloc per non-empty role (zero-filled on the compute
  /// stream). Buffers::part is the rank's partition.
  DeviceBuffers(Device &dev, const ProgramInfo &program, int rank = 0, int ranks = 1);
  ~DeviceBuffers();
  DeviceBuffers(const DeviceBuffers &) = delete;
  DeviceBuffers &operator=(const DeviceBuffers &) = delete;

  const Buffers &get() const { return buf_; }
  size_t totalBytes() const { return total_; }
  /// Bytes of role 0..7 (ProgramBuffers::bytes' order; role 6 is zero = 2
  /// and 3's gradient staging, role 7 zero = 3's param staging).
  int64_t bytes(int role) const { return bytes_[role]; }

private:
  Buffers buf_;
  size_t total_ = 0;
  int64_t bytes_[8] = {0, 0, 0, 0, 0, 0, 0, 0};
};

/// Page-locked host memory for the copy stream (cudaMallocHost), so
/// host<->device copies are asynchronous and at full bus speed.
class PinnedBuffer {
public:
  explicit PinnedBuffer(size_t bytes);
  ~PinnedBuffer();
  PinnedBuffer(const PinnedBuffer &) = delete;
  PinnedBuffer &operator=(const PinnedBuffer &) = delete;
  void *data() const { return data_; }
  size_t size() const { return bytes_; }

private:
  void *data_ = nullptr;
  size_t bytes_ = 0;
};

} // namespace bmrt::cuda

#endif // BMRT_CUDA_DEVICE_BUFFERS_H
