//===- app/tune_memory.h - Where a tune program's tensors live ------------===//
//
// The tune app's seam (as app/train_memory.h is the train app's): the tune
// run (app/tune_run.cpp: data, prompts, batches, calibration, metrics,
// checkpoints) is one piece of code; a backend says where the roles live.
// The roles themselves are a TrainMemory of one process (params, optimizer
// state, grads; host copies moved by pull and push); a tune entry also
// takes float inputs (the calibration) and gives several outputs (losses,
// scores, word probabilities), which go through the two calls here. On the
// host they are copies within the process's allocations; on a GPU
// (cuda/tune_memory.cpp) pinned memory on the copy stream in, and a copy
// out once the entry's kernels are done.
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_APP_TUNE_MEMORY_H
#define BMRT_APP_TUNE_MEMORY_H

#include "app/train_memory.h"
#include "bmrt/program.h"

#include <cstddef>
#include <memory>

namespace bmrt {

class TuneMemory {
public:
  virtual ~TuneMemory() = default;

  /// The roles: buffers() for the entries, host() for the app's reads and
  /// writes (checkpoints, soft-token init, --dump-grads), pull and push.
  virtual TrainMemory &roles() = 0;
  /// `bytes` bytes from `data` into the entry input `t` (its first bytes),
  /// ordered after the entries called before.
  virtual void writeInput(const TensorRef &t, const void *data, size_t bytes) = 0;
  /// The first `bytes` bytes of the entry output `t`, once the entry called
  /// last has finished (a device waits for its kernels and reports a bad
  /// index they recorded).
  virtual void readOutput(const TensorRef &t, void *data, size_t bytes) = 0;
};

/// The host backend: the process's role allocations (makeHostTrainMemory).
std::unique_ptr<TuneMemory> makeHostTuneMemory(const ProgramInfo &program);

} // namespace bmrt

#endif // BMRT_APP_TUNE_MEMORY_H
