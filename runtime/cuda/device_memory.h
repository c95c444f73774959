//===- cuda/device_memory.h - The apps' memory on a GPU -------------------===//
//
// The cuda backend of app/entry_memory.h and app/train_memory.h.
//
// Infer (device_memory.cpp): the program's roles are device
// allocations (DeviceBuffers); the params are read and written by the app in
// a pinned host copy and copied in on the copy stream; token inputs are
// filled in pinned memory (app/tensors.h's fillEntryInput, the host's rules)
// and copied in on the copy stream, the compute stream ordered after them;
// outputs are copied out once an entry's kernels are done; the next token is
// chosen on the GPU (sample_token: one id comes back, not the logits).
//
// Train (device_train_memory.cpp): the roles are device allocations of the
// rank's plan; the app's host copies of params, optimizer state and grads
// are pinned, moved by pull (device to host, after the compute stream's
// work) and push (host to device on the copy stream, the compute stream
// ordered after it); a micro-batch's inputs go in through pinned memory on
// the copy stream, ordered after the previous micro-batch's kernels and
// before the next; its losses come back once checkDeviceErrors has waited
// for its kernels (the one synchronisation of a micro-batch), and a step
// ends with checkDeviceErrors after the update.
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_CUDA_DEVICE_MEMORY_H
#define BMRT_CUDA_DEVICE_MEMORY_H

#include "app/entry_memory.h"
#include "app/train_memory.h"
#include "cuda/device.h"

#include <memory>

namespace bmrt::cuda {

/// The role allocations of an infer `program` on `dev` (DeviceBuffers'
/// memory check first), with the params' pinned staging copy.
std::unique_ptr<EntryMemory> makeDeviceEntryMemory(Device &dev, const ProgramInfo &program);

/// The roles of training `program` for rank `rank` of `ranks` on `dev`,
/// with pinned host copies of params, optimizer state and grads.
std::unique_ptr<TrainMemory> makeDeviceTrainMemory(Device &dev, const ProgramInfo &program,
                                                   int rank, int ranks);

/// The i32 elements of the largest set of inputs one entry of `program`
/// takes (the pinned input buffer's size).
int64_t largestEntryInputs(const ProgramInfo &program);

} // namespace bmrt::cuda

#endif // BMRT_CUDA_DEVICE_MEMORY_H
