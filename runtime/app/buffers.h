//===- app/buffers.h - The role allocations of one program ----------------===//
//
// One allocation per role (params, state, activations, and for training
// programs grads and optimizer state; DESIGN decision 3), sized by the
// compiler's memory plan. They are anonymous mappings: page
// aligned (more than the 64 bytes kernels want), zero without touching the
// pages (so peak RSS shows what a run uses, not the plan), and large ones are
// offered to transparent huge pages (fewer TLB misses on weights).
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_APP_BUFFERS_H
#define BMRT_APP_BUFFERS_H

#include "bmrt/program.h"

namespace bmrt {

/// Owns the allocations of `program`; unmapped on destruction.
class ProgramBuffers {
public:
  /// A training program's allocations are those of rank `rank` of `ranks`
  /// (its Partition, Buffers::part); infer programs ignore both.
  explicit ProgramBuffers(const ProgramInfo &program, int rank = 0, int ranks = 1);
  ~ProgramBuffers();
  ProgramBuffers(const ProgramBuffers &) = delete;
  ProgramBuffers &operator=(const ProgramBuffers &) = delete;

  const Buffers &get() const { return buf_; }
  /// Bytes of role 0..7: params, state, activations, grads, optimizer state,
  /// the reduced-precision weight copy (bf16/fp16 training programs), the
  /// gradient staging (zero = 2 and 3), the param staging (zero = 3).
  int64_t bytes(int role) const;

private:
  void release();

  Buffers buf_;
  int64_t bytes_[8] = {0, 0, 0, 0, 0, 0, 0, 0}; // params, state, activations, grads, optState,
                                                // lowParams, gradStaging, paramStaging
};

} // namespace bmrt

#endif // BMRT_APP_BUFFERS_H
