//===- app/npy.h - Writing .npy files (numpy's array format) --------------===//
//
// `--dump` writes the outputs of each entry call as .npy so tests compare
// them with numpy directly (np.load), with no parser of ours in between.
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_APP_NPY_H
#define BMRT_APP_NPY_H

#include "bmrt/program.h"

#include <cstdint>
#include <string>

namespace bmrt {

/// Writes `data` (C order, little-endian) of `dtype` and `shape[rank]` to
/// `path` in format version 1.0. Fails naming the file on I/O errors.
void writeNpy(const std::string &path, DType dtype, const int64_t *shape, int rank,
              const void *data);

} // namespace bmrt

#endif // BMRT_APP_NPY_H
