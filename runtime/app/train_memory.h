//===- app/train_memory.h - Where a training program's tensors live -------===//
//
// The training app's seam (as app/entry_memory.h is the infer app's): the
// train loop, checkpoints, evaluation and the step bookkeeping are one piece
// of code (app/train_run.cpp, train_step.cpp); a backend says where the
// roles live. On the host they are the process's allocations and every call
// here is trivial; on a GPU (cuda/device_train_memory.cpp) the entries get
// device pointers, the app reads and writes pinned host copies that pull and
// push bring up to date, inputs go through pinned memory on the copy stream,
// and reading the losses waits for the step's kernels.
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_APP_TRAIN_MEMORY_H
#define BMRT_APP_TRAIN_MEMORY_H

#include "bmrt/program.h"

#include <cstdint>
#include <memory>

namespace bmrt {

class TrainMemory {
public:
  /// Roles the app moves between host() and buffers(), or-ed together.
  enum Role : unsigned { kParams = 1, kOptState = 2, kGrads = 4 };

  virtual ~TrainMemory() = default;

  /// The role allocations the train entries are called with (this rank's
  /// partition in part).
  virtual const Buffers &buffers() const = 0;
  /// The same roles in host memory, for the app's own reads and writes
  /// (checkpoints, --dump-grads): buffers() itself on the host.
  virtual const Buffers &host() const = 0;
  /// Bytes of role 0..7 (ProgramBuffers::bytes' order).
  virtual int64_t bytes(int role) const = 0;
  /// host() := buffers() for `roles` (before the app reads them).
  virtual void pull(unsigned roles) = 0;
  /// buffers() := host() for `roles` (after the app wrote them).
  virtual void push(unsigned roles) = 0;

  /// `n` i32 values into the entry input `t` (its first n elements).
  virtual void writeInput(const TensorRef &t, const int32_t *values, int64_t n) = 0;
  /// The sum of the first `rows` values of the entry output `losses`, once
  /// the entry called last has finished (a device waits for its kernels and
  /// reports a bad index they recorded).
  virtual double sumLosses(const TensorRef &losses, int64_t rows) = 0;
  /// A step's end: a device waits for the update and reports a bad index.
  virtual void finishStep() = 0;
};

/// The host backend: ProgramBuffers of rank `rank` of `ranks`.
std::unique_ptr<TrainMemory> makeHostTrainMemory(const ProgramInfo &program, int rank,
                                                 int ranks);

/// The sum of `rows` per-row losses at `at` (f32, or f64 in an fp64
/// program), in row order: what every backend reports as a batch's loss.
double sumLossRows(const void *at, DType dtype, int64_t rows);

} // namespace bmrt

#endif // BMRT_APP_TRAIN_MEMORY_H
