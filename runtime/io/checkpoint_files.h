//===- io/checkpoint_files.h - Which files a checkpoint path means (private) ===//
//
// A checkpoint is named by a path that is a .safetensors file, a sharded
// index (model.safetensors.index.json), or a directory holding one of them
// (model.safetensors first, as Hugging Face does). This resolves the path,
// maps every file, and indexes all tensors by name, so the loader never cares
// whether a checkpoint is sharded.
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_IO_CHECKPOINT_FILES_H
#define BMRT_IO_CHECKPOINT_FILES_H

#include "safetensors.h"

#include <string>
#include <unordered_map>
#include <vector>

namespace bmrt::io {

struct CheckpointFiles {
  std::vector<SafetensorsFile> files;
  struct Location {
    size_t file;   // index into files
    size_t tensor; // index into files[file].tensors()
  };
  std::unordered_map<std::string, Location> byName; // every tensor of every file

  /// The tensor `name` and the file holding it, or null if absent.
  const FileTensor *find(const std::string &name, const SafetensorsFile **file) const;
  /// "a.safetensors" or "dir/model-00001-of-00002.safetensors, ..." for reports.
  std::string describe() const;
};

/// Resolves and opens `path`; fails naming the path and the problem.
CheckpointFiles openCheckpoint(const std::string &path);

} // namespace bmrt::io

#endif // BMRT_IO_CHECKPOINT_FILES_H
