//===- app/kept_params.h - The bytes of each param this rank holds --------===//
//
// zero = 3 (docs/distributed.md, "ZeRO-3") keeps only this rank's partition
// of the trainable group in the params allocation; frozen params stay whole.
// KeptParams says where each byte of a param this rank holds lives: all of
// a frozen param, and of a trainable one the bytes inside the partition.
// Whatever produces params one at a time, whole or in pieces -- the
// initializers (keepParam), a checkpoint file (loadCheckpoint into a
// KeptParams target reads only those bytes of each tensor) -- fills the
// partition directly: no rank ever holds whole params. Without
// partitioned params every byte is held, where io::copyParamIn puts it.
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_APP_KEPT_PARAMS_H
#define BMRT_APP_KEPT_PARAMS_H

#include "bmrt/checkpoint.h"
#include "bmrt/program.h"

#include <cstdint>
#include <vector>

namespace bmrt {

/// Whether `host` (the host() buffers of a training program, or any
/// program's) holds only a partition of the trainable group's params.
bool paramsPartitioned(const ProgramInfo &program, const Buffers &host);

/// The params a rank holds (`host`: its host() buffers) as a load target.
class KeptParams final : public ParamTarget {
public:
  KeptParams(const ProgramInfo &program, const Buffers &host);
  void held(const ParamInfo &p, int64_t from, int64_t n, std::vector<Piece> &out) const override;

private:
  const ProgramInfo &program_;
  const Buffers &host_;
  bool partitioned_;
};

/// host's params := the bytes of param `p` this rank holds, from `whole`:
/// p in its logical layout (layer after layer, paramLayers(p) *
/// paramSliceBytes(p) bytes).
void keepParam(const ProgramInfo &program, const Buffers &host, const ParamInfo &p,
               const uint8_t *whole);

/// initParams (bmrt/program.h) into host's params, one param at a time
/// through keepParam: the same values, without a whole copy of the params.
void initKeptParams(const ProgramInfo &program, const Buffers &host, uint64_t seed);
/// initDeltaParams likewise (the delta params only).
void initKeptDeltaParams(const ProgramInfo &program, const Buffers &host, uint64_t seed);

} // namespace bmrt

#endif // BMRT_APP_KEPT_PARAMS_H
