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

/// Delta checkpoints (io/delta_checkpoint.cpp): only the delta params and
/// the params a training program trains (BitFit's biases), under our names,
/// with the model's name and a hash of every other param (the backbone) in
/// the metadata. Returns the bytes of tensor data written.
bool isDeltaTensor(const ParamInfo &p);
int64_t saveDeltaCheckpoint(const std::string &file, const ProgramInfo &program,
                            const void *params);
/// Fills the params the file holds, after checking that the backbone already
/// in `params` (from --load) hashes as the one the delta was tuned on, that
/// every tensor is a param of this shape and every delta param is there.
LoadReport loadDeltaCheckpoint(const std::string &file, const ProgramInfo &program,
                               void *params);

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
