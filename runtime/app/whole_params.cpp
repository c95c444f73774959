//===- app/whole_params.cpp - Whole params for files and initialisers -----===//
//
// See whole_params.h. The group's span of the temporary holds every rank's
// partition back to back (Partition::total elements, rank r's at r * size),
// so the gather is one all-gather of equal chunks in place.
//
//===----------------------------------------------------------------------===//
#include "app/whole_params.h"
#include "app/kept_params.h"

#include <algorithm>
#include <cstring>

namespace bmrt {

WholeParams::WholeParams(const ProgramInfo &program, const Buffers &host)
    : program_(program), host_(host), view_(host) {
  partitioned_ = paramsPartitioned(program, host);
  if (!partitioned_)
    whole_ = host.params;
}

void WholeParams::materialize() {
  if (whole_)
    return;
  const size_t bytes = std::max<size_t>(
      (size_t)program_.paramBytes,
      (size_t)program_.train->groupParamOffset +
          (size_t)host_.part.total * (size_t)groupElemBytes(*program_.train));
  storage_.assign(bytes, 0);
  whole_ = storage_.data();
  view_.params = whole_;
}

void *WholeParams::data() {
  materialize();
  return whole_;
}

const Buffers &WholeParams::buffers() {
  materialize();
  return view_;
}

void WholeParams::keepPartition() {
  if (!partitioned_ || storage_.empty()) // never used: nothing to keep
    return;
  const TrainInfo &train = *program_.train;
  const size_t elem = (size_t)groupElemBytes(*program_.train);
  const Partition &p = host_.part;
  std::memcpy(host_.params, whole_, (size_t)train.groupParamOffset); // the frozen params
  std::memcpy((char *)host_.params + train.groupParamOffset,
              (const char *)whole_ + train.groupParamOffset + (size_t)p.paramsFrom * elem,
              (size_t)(p.end - p.paramsFrom) * elem);
}

void WholeParams::gather(Comm &comm) {
  if (!partitioned_)
    return;
  materialize();
  const TrainInfo &train = *program_.train;
  const size_t elem = (size_t)groupElemBytes(*program_.train);
  const Partition &p = host_.part;
  if (comm.size() * p.size != p.total)
    fail("zero = 3: the params are partitioned for " + std::to_string(p.total / p.size) +
         " ranks, the communicator has " + std::to_string(comm.size()));
  char *group = (char *)whole_ + train.groupParamOffset;
  std::memcpy(whole_, host_.params, (size_t)train.groupParamOffset);
  std::memcpy(group + (size_t)comm.rank() * (size_t)p.size * elem,
              (const char *)host_.params + train.groupParamOffset, (size_t)p.size * elem);
  comm.wait(comm.allGather(group, p.size, groupDType(program_)));
}

} // namespace bmrt
