//===- bmrt/checkpoint.h - Parameters from and to safetensors files -------===//
//
// Loading applies one of the program's declared name maps (or our own names)
// so that checkpoints written by Hugging Face `transformers` load unchanged;
// saving can write either layout. Every problem names the file and the tensor:
// truncated or corrupt header, unknown dtype, shape or dtype mismatch, missing
// or unexpected tensors. Writes are atomic (temp file + rename).
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_CHECKPOINT_H
#define BMRT_CHECKPOINT_H

#include "bmrt/program.h"

#include <cstdint>
#include <string>
#include <vector>

namespace bmrt {

/// Where a load puts the params it reads: the whole params allocation
/// (WholeParamsTarget), or under zero = 3 one rank's frozen params and its
/// partition of the trainable group (app/kept_params.h). A param is seen
/// in its logical layout, layer after layer (paramSliceBytes each).
class ParamTarget {
public:
  /// Bytes [from, from + n) of a param's logical layout, held at `at`.
  struct Piece {
    int64_t from, n;
    uint8_t *at;
  };
  virtual ~ParamTarget() = default;
  /// The pieces of bytes [from, from + n) of p's logical layout that this
  /// process holds, in order, into `out` (cleared first): all of them for
  /// whole params, possibly none for a trainable param under zero = 3.
  virtual void held(const ParamInfo &p, int64_t from, int64_t n,
                    std::vector<Piece> &out) const = 0;
};

/// Where a save takes the params it writes from: the whole params
/// allocation (WholeParamsSource), or under zero = 3 the ranks' partitions,
/// each param gathered in turn (app/gathered_params.h).
class ParamSource {
public:
  virtual ~ParamSource() = default;
  /// Param p's layer `layer` (every layer, in order, when -1), contiguous
  /// in its logical layout: a pointer into the params, or built in
  /// `scratch`; valid until scratch changes. May be collective (zero = 3):
  /// every rank then calls it for the same slices in the same order, and
  /// only the writing one uses the bytes (the others may get null).
  virtual const uint8_t *slice(const ParamInfo &p, int64_t layer,
                               std::vector<uint8_t> &scratch) = 0;
  /// Whether this process writes the file (rank 0). The others only walk
  /// the same slices, so that their collectives match the writer's.
  virtual bool writes() const { return true; }
};

/// The whole params allocation `params` (program.paramBytes bytes).
class WholeParamsTarget final : public ParamTarget {
public:
  explicit WholeParamsTarget(void *params) : params_((uint8_t *)params) {}
  void held(const ParamInfo &p, int64_t from, int64_t n, std::vector<Piece> &out) const override;

private:
  uint8_t *params_;
};
class WholeParamsSource final : public ParamSource {
public:
  explicit WholeParamsSource(const void *params) : params_((const uint8_t *)params) {}
  const uint8_t *slice(const ParamInfo &p, int64_t layer, std::vector<uint8_t> &scratch) override;

private:
  const uint8_t *params_;
};

struct LoadReport {
  std::string file;     // the file(s) read
  std::string nameMap;  // "" (our names) or the map's name ("hf")
  int64_t tensors = 0;  // tensors read
  std::vector<std::string> freshDeltas; // delta params the file lacks (left as they were)
};

/// `path`: a .safetensors file, or a directory holding model.safetensors (or
/// the shards listed by model.safetensors.index.json). Fills the params
/// allocation `params` (program.paramBytes bytes). The layout is detected:
/// our names, else the first name map whose every required tensor is there.
LoadReport loadCheckpoint(const std::string &path, const ProgramInfo &program, void *params);
/// The same into `target`: each tensor of the file is read only where it
/// meets the pieces the target holds (a tensor that is one param slice,
/// untransposed, straight from the file into them; others through a
/// temporary of the tensor's size). Every check that does not depend on
/// the values is made on every rank alike; a tied tensor is compared with
/// the pieces held.
LoadReport loadCheckpoint(const std::string &path, const ProgramInfo &program,
                          const ParamTarget &target);

/// Delta checkpoints (io/delta_checkpoint.cpp): only the delta params and
/// the params a training program trains (BitFit's biases), under our names,
/// with the model's name and a hash of every other param (the backbone) in
/// the metadata. Returns the bytes of tensor data written.
bool isDeltaTensor(const ParamInfo &p);
int64_t saveDeltaCheckpoint(const std::string &file, const ProgramInfo &program,
                            const void *params);
/// The same from `source` (every rank calls it when the source is collective).
int64_t saveDeltaCheckpoint(const std::string &file, const ProgramInfo &program,
                            ParamSource &source);
/// Fills the params the file holds, after checking that the backbone already
/// in `params` (from --load) hashes as the one the delta was tuned on, that
/// every tensor is a param of this shape and every delta param is there.
LoadReport loadDeltaCheckpoint(const std::string &file, const ProgramInfo &program,
                               void *params);
/// The same into `target`, which must hold the backbone whole.
LoadReport loadDeltaCheckpoint(const std::string &file, const ProgramInfo &program,
                               const ParamTarget &target);

/// The same checks, the tensors read apart from `params` (each in its
/// param's dtype, as loadDeltaCheckpoint would write them): the infer
/// executable holds several deltas and copies one in per request.
struct DeltaTensors {
  struct Tensor {
    int param;                  // index into ProgramInfo::params
    std::vector<uint8_t> bytes; // the param's bytes
  };
  std::string file;
  std::vector<Tensor> tensors;
};
DeltaTensors readDeltaCheckpoint(const std::string &file, const ProgramInfo &program,
                                 const void *params);

/// Writes every param to `file` (atomically); mapName null/"" = our names,
/// else the name map of that name (tied tensors written too).
void saveCheckpoint(const std::string &file, const ProgramInfo &program, const void *params,
                    const char *mapName);
/// The same from `source`, one tensor at a time (the largest tensor is the
/// most that is assembled at once). Only a source that writes() writes;
/// the others walk the same tensors.
void saveCheckpoint(const std::string &file, const ProgramInfo &program, ParamSource &source,
                    const char *mapName);

/// A training program's optimizer state (TrainInfo::optSlots slots over the
/// rank's partition of the trainable group, Buffers::part) as a safetensors
/// file. Whole (the partition is the whole group: one rank, or zero = 0):
/// tensor "<param>.<slot>" with the param's shape, slots named as torch's
/// optimizer state (AdamW: exp_avg, exp_avg_sq; SGD: momentum_buffer); our
/// names only.
void saveOptimizerState(const std::string &file, const ProgramInfo &program, const Buffers &buf);

/// A partition (ZeRO): one flat tensor "<slot>" of the partition's elements.
void saveOptimizerPartition(const std::string &file, const ProgramInfo &program,
                            const Buffers &buf);

/// Fills the optimizer state of buf.part from a whole-state file (any world
/// size can load it); fails naming the file and tensor if any is missing,
/// extra or of another shape, before writing anything.
void loadOptimizerState(const std::string &file, const ProgramInfo &program, const Buffers &buf);

/// Fills the optimizer state of buf.part from the partition files of a run
/// on files.size() ranks with partitions of `partitionSize` elements (file r
/// holds rank r's), whatever this run's world size; checks every file first.
void loadOptimizerPartitions(const std::vector<std::string> &files, int64_t partitionSize,
                             const ProgramInfo &program, const Buffers &buf);

} // namespace bmrt

#endif // BMRT_CHECKPOINT_H
