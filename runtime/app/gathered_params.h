//===- app/gathered_params.h - Params for a save, gathered one at a time --===//
//
// zero = 3 (docs/distributed.md, "ZeRO-3"): the checkpoint files hold whole
// params, but each rank holds only its partition of the trainable group.
// A save walks the file's tensors in order on every rank; for each
// trainable param slice the ranks gather just that slice (one allGatherv
// of their pieces of it, in place: the pieces of a slice of the group lie
// back to back in rank order, as Comm::allGatherv wants them), and rank 0
// writes it. So the most a save holds beside the partition is the largest
// tensor of the file on rank 0 and the largest single layer of a param on
// the others (for GPT-2 small both are the tied embedding, 147 MiB), for
// the length of its gather. Frozen params are whole on every rank and need
// no gather; without partitioned params nothing is gathered at all.
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_APP_GATHERED_PARAMS_H
#define BMRT_APP_GATHERED_PARAMS_H

#include "bmrt/checkpoint.h"
#include "bmrt/comm.h"
#include "bmrt/program.h"

#include <cstdint>
#include <vector>

namespace bmrt {

/// The ranks' params (`host`: this rank's host() buffers) as a save's
/// source; rank 0 writes. Every rank of `comm` must save with it.
class GatheredParams final : public ParamSource {
public:
  GatheredParams(const ProgramInfo &program, const Buffers &host, Comm &comm);
  const uint8_t *slice(const ParamInfo &p, int64_t layer, std::vector<uint8_t> &scratch) override;
  bool writes() const override { return comm_.rank() == 0; }

private:
  const ProgramInfo &program_;
  const Buffers &host_;
  Comm &comm_;
  bool partitioned_;
  WholeParamsSource local_; // what this rank holds whole
};

} // namespace bmrt

#endif // BMRT_APP_GATHERED_PARAMS_H
