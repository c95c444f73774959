//===- app/kept_params.h - One whole param into the rank's params ---------===//
//
// zero = 3 (docs/distributed.md, "ZeRO-3") keeps only this rank's partition
// of the trainable group in the params allocation; frozen params stay whole.
// Code that produces params one at a time, whole -- the initializers --
// hands each to keepParam, which keeps the bytes this rank holds: all of a
// frozen param, and of a trainable one the bytes inside the partition. So
// no rank ever holds more than one whole param beside its partition (the
// largest, GPT-2's tied embedding, is 147 MiB; all of GPT-2 small is 475).
// Without partitioned params every byte is kept: io::copyParamIn.
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_APP_KEPT_PARAMS_H
#define BMRT_APP_KEPT_PARAMS_H

#include "bmrt/program.h"

#include <cstdint>

namespace bmrt {

/// Whether `host` (the host() buffers of a training program, or any
/// program's) holds only a partition of the trainable group's params.
bool paramsPartitioned(const ProgramInfo &program, const Buffers &host);

/// host's params := the bytes of param `p` this rank holds, from `whole`:
/// p in its logical layout (layer after layer, paramLayers(p) *
/// paramSliceBytes(p) bytes).
void keepParam(const ProgramInfo &program, const Buffers &host, const ParamInfo &p,
               const uint8_t *whole);

/// initParams (bmrt/program.h) into host's params, one param at a time
/// through keepParam: the same values, without a whole copy of the params.
void initKeptParams(const ProgramInfo &program, const Buffers &host, uint64_t seed);

} // namespace bmrt

#endif // BMRT_APP_KEPT_PARAMS_H
