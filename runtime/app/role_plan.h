//===- app/role_plan.h - The sizes of a program's role allocations --------===//
//
// How many bytes each role of the memory plan takes on one rank, whatever
// the memory (the host's ProgramBuffers, the cuda backend's DeviceBuffers):
// a training program's rank holds the grads and the group's span of the
// params for every rank's partition, the optimizer state for its own only
// (docs/distributed.md); under zero = 2 the grads hold only its partition,
// plus the staging of one unit at a time; under zero = 3 the params too
// (the frozen ones and the partition), plus their staging.
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_APP_ROLE_PLAN_H
#define BMRT_APP_ROLE_PLAN_H

#include "bmrt/program.h"

#include <cstdint>

namespace bmrt {

struct RolePlan {
  /// params, state, activations, grads, optimizer state, the
  /// reduced-precision weight copy (bf16/fp16 training programs), the
  /// gradient staging (zero = 2 and 3), the param staging (zero = 3).
  int64_t bytes[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  Partition part; // training programs: this rank's (Buffers::part)
  // offload = optimizer: role 4 is host memory (pinned on a GPU) holding the
  // offloaded state's kOffloadSlots slots (bmrt/offload.h), not device memory.
  bool optStateOnHost = false;
};

/// The plan of rank `rank` of `ranks` (infer programs ignore both).
RolePlan planRoles(const ProgramInfo &program, int rank = 0, int ranks = 1);

} // namespace bmrt

#endif // BMRT_APP_ROLE_PLAN_H
