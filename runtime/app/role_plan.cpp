//===- app/role_plan.cpp - The sizes of a program's role allocations ------===//
#include "app/role_plan.h"
#include "bmrt/lowp.h"
#include "bmrt/offload.h"

#include <algorithm>

namespace bmrt {

RolePlan planRoles(const ProgramInfo &program, int rank, int ranks) {
  RolePlan plan;
  plan.bytes[0] = program.paramBytes;
  if (const TrainInfo *train = program.train) {
    // The rank's partition decides the sizes (docs/distributed.md): grads
    // and the group's span of the params hold every rank's partition, the
    // optimizer state only this rank's.
    plan.part = partitionOf(*train, rank, ranks);
    const int64_t elem = groupElemBytes(*train);
    // zero = 3: only this rank's partition of the group (paramElems).
    plan.bytes[0] = train->zeroStage == 3
                        ? train->groupParamOffset + plan.part.paramElems * elem
                        : std::max(program.paramBytes,
                                   train->groupParamOffset + plan.part.total * elem);
    plan.bytes[3] = plan.part.gradElems * elem;
    plan.bytes[4] = train->optSlots * plan.part.optStride * elem;
    // offload = optimizer: m, v, the fp32 master and the gradient staging,
    // in host memory (bmrt/offload.h).
    if (train->offloadOptimizer) {
      plan.bytes[4] = kOffloadSlots * plan.part.optStride * elem;
      plan.optStateOnHost = true;
    }
    plan.bytes[5] = low_param_bytes(*train); // every rank reads all weights
    plan.bytes[6] = train->gradStagingBytes;
    plan.bytes[7] = train->paramStagingBytes;
  }
  plan.bytes[1] = program.stateBytes;
  plan.bytes[2] = program.activationBytes;
  return plan;
}

} // namespace bmrt
