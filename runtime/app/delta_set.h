//===- app/delta_set.h - Several deltas over one loaded backbone ----------===//
//
// `--delta NAME=FILE` (repeatable) lets one infer process serve several
// delta-tuned tasks: every file is read and checked against the backbone
// (model, names, shapes, backbone hash) at start-up and held apart from the
// params allocation; a request selects one by name ("none": the backbone
// alone) and its tensors are copied into the params only when it differs
// from the delta applied now.
//
// Switching is exact, never incremental: the delta's tensors (and, for the
// tensors another delta holds but this one does not, the backbone's values)
// are copied in, and merged LoRA weights are restored from a pristine copy
// and merged again (W = W0 + scale B A, never W - old + new, which would
// drift by rounding). So a request computes bit for bit what a run with
// `--load BACKBONE --delta FILE` alone computes.
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_APP_DELTA_SET_H
#define BMRT_APP_DELTA_SET_H

#include "app/flags.h"
#include "bmrt/checkpoint.h"
#include "bmrt/program.h"

#include <cstdint>
#include <string>
#include <vector>

namespace bmrt {

class DeltaSet {
public:
  /// `params` holds the loaded backbone. Sets every delta param to its
  /// declared initializer (the backbone alone; LoRA's B and adapters' up
  /// projection are zeros), reads and checks every file, and keeps the
  /// pristine values of what switching overwrites. Nothing is applied yet.
  DeltaSet(const ProgramInfo &program, void *params, const std::vector<DeltaFlag> &deltas);

  /// Makes `name` (a --delta name, or kNoDelta) the one the params hold:
  /// a no-op when it already is. `merge`: fold LoRA into the weights (the
  /// program's merges); false for --save, which keeps them apart. An
  /// unknown name is a bmrt::Error listing the known ones. Returns whether
  /// it wrote the params (a device copies them in then).
  bool apply(const std::string &name, bool merge = true);

  /// Bytes held besides the params allocation: the deltas' tensors, and the
  /// pristine copies (tensors some delta overwrites, merged weights).
  int64_t deltaBytes() const { return deltaBytes_; }
  int64_t pristineBytes() const { return pristineBytes_; }
  size_t size() const { return deltas_.size(); }

private:
  struct Named {
    std::string name;
    DeltaTensors data;
  };
  const DeltaTensors::Tensor *find(const Named *delta, int param) const;
  std::string knownNames() const;

  const ProgramInfo &program_;
  uint8_t *params_;
  std::vector<Named> deltas_;
  // Values before any delta: every param some state overwrites (the delta
  // params at their initializers, BitFit's biases as loaded), then every
  // weight a merge writes (as loaded).
  std::vector<DeltaTensors::Tensor> pristine_;
  size_t numOverwritten_ = 0; // pristine_[0, numOverwritten_): the former
  std::string current_;       // "" = none applied (or applied unmerged)
  int64_t deltaBytes_ = 0, pristineBytes_ = 0;
};

} // namespace bmrt

#endif // BMRT_APP_DELTA_SET_H
