//===- app/whole_params.h - Whole params for the checkpoint files ---------===//
//
// zero = 3 (docs/distributed.md, "ZeRO-3"): the params allocation holds the
// frozen params and only this rank's partition of the trainable group.
// Fresh params need no whole copy (kept_params.h: each param is initialised
// whole and only the rank's piece kept). The checkpoint files still do:
// --load, --resume, --eval-only and every save read or write whole params
// in the compiled layout, so they go through a temporary whole copy: filled,
// then cut to the partition (keepPartition); or gathered from every rank's
// partition before a save (gather). It costs a whole params' worth of memory
// on every rank while it lives (475 MiB for GPT-2 small), and is allocated
// only when data(), buffers() or gather() is first called. Without
// partitioned params it is the params allocation itself, and both steps do
// nothing.
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_APP_WHOLE_PARAMS_H
#define BMRT_APP_WHOLE_PARAMS_H

#include "bmrt/comm.h"
#include "bmrt/program.h"

#include <cstdint>
#include <vector>

namespace bmrt {

class WholeParams {
public:
  /// Over the host() buffers of a training program.
  WholeParams(const ProgramInfo &program, const Buffers &host);

  /// Whole params in the compiled layout (ParamInfo::offset).
  void *data();
  /// `host` with params = data(): what the checkpoint code reads and writes.
  const Buffers &buffers();
  /// host's params := the frozen params and this rank's partition of data()
  /// (nothing when data() was never asked for).
  void keepPartition();
  /// data() := the frozen params and every rank's partition (an all-gather
  /// over `comm`, every rank taking part).
  void gather(Comm &comm);

private:
  void materialize(); // allocates the temporary on first use
  const ProgramInfo &program_;
  Buffers host_, view_;
  bool partitioned_ = false;
  std::vector<uint8_t> storage_; // the temporary, when partitioned
  void *whole_ = nullptr;
};

} // namespace bmrt

#endif // BMRT_APP_WHOLE_PARAMS_H
