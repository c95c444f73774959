//===- app/tune_checkpoint.h - Delta-only checkpoints of a tune run -------===//
//
//   DIR/step-NNNNNNN/delta.safetensors      the trained tensors only (deltas,
//                                           @prompt.soft), pinned to the
//                                           backbone by its hash (bmrt/checkpoint.h)
//   DIR/step-NNNNNNN/optimizer.safetensors  their optimizer state
//   DIR/step-NNNNNNN/tune_state.json        step, seed, last loss, calibration,
//                                           model/job and the param table's hash
//   DIR/latest                              "step-NNNNNNN"
//
// tune_state.json is written last: a directory without it is incomplete.
// The backbone is never copied: --resume and the infer executable's
// --load-delta read it from where it was (the hash refuses another one).
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_APP_TUNE_CHECKPOINT_H
#define BMRT_APP_TUNE_CHECKPOINT_H

#include "bmrt/program.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace bmrt {

struct TuneState {
  int64_t step = 0;
  uint64_t seed = 0;
  double loss = 0;
  std::vector<double> calibration; // [M, C, W]
};

/// Writes DIR/step-N and DIR/latest; returns the step directory.
std::string saveTuneCheckpoint(const std::string &dir, const ProgramInfo &program,
                               const Buffers &buf, const TuneState &state);

/// Loads DIR/latest's deltas (over the backbone already in the params) and
/// optimizer state; none when DIR has no checkpoint. A checkpoint of another
/// program (param table hash) or backbone fails.
std::optional<TuneState> loadTuneCheckpoint(const std::string &dir, const ProgramInfo &program,
                                            const Buffers &buf, std::string *path);

} // namespace bmrt

#endif // BMRT_APP_TUNE_CHECKPOINT_H
