//===- io/safetensors.h - mmap reader and atomic writer (private) ---------===//
//
// The safetensors format: 8-byte little-endian header length N, N bytes of
// JSON {"name": {"dtype", "shape", "data_offsets": [begin, end]}, ...,
// "__metadata__": {...}}, then the data section (offsets are relative to it).
//
// The reader maps the file read-only and validates the whole header before
// anyone looks at data: a corrupt or truncated file fails in open() with the
// file name and the problem, never later with a crash. Tensors are converted
// element by element into the dtype of the param they fill (F16/BF16/F64 ->
// F32 is the common case), so callers never see file dtypes.
//
// The writer streams tensors one at a time (a tensor's bytes may be built in
// a scratch buffer, e.g. a transposed concat) into `<file>.tmp.<pid>`, then
// fsyncs and renames: a crash never leaves half a file under the final name.
//
// Private to runtime/io: checkpoint.cpp is the only user.
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_IO_SAFETENSORS_H
#define BMRT_IO_SAFETENSORS_H

#include "bmrt/program.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace bmrt::io {

/// The file dtypes we read; anything else (U8, BOOL, F8_*) is refused.
enum class FileDType { F32, F16, BF16, F64, I32, I64 };

const char *fileDTypeName(FileDType t);
size_t fileDTypeSize(FileDType t);
/// The file dtype name of one of our param dtypes ("F32", "F64", "I32").
const char *paramDTypeName(DType t);
size_t paramDTypeSize(DType t);

/// "[64, 192]"
std::string shapeString(const std::vector<int64_t> &shape);

struct FileTensor {
  std::string name;
  FileDType dtype;
  std::vector<int64_t> shape;
  uint64_t begin, end; // byte offsets into the data section
  int64_t numel;
};

/// One mapped, validated safetensors file. Move-only; unmaps on destruction.
class SafetensorsFile {
public:
  /// Maps and validates `path`; fails with "<path>: <problem>".
  static SafetensorsFile open(const std::string &path);

  SafetensorsFile(SafetensorsFile &&other) noexcept;
  SafetensorsFile &operator=(SafetensorsFile &&other) = delete;
  SafetensorsFile(const SafetensorsFile &) = delete;
  ~SafetensorsFile();

  const std::string &path() const { return path_; }
  const std::vector<FileTensor> &tensors() const { return tensors_; }
  /// The string values of __metadata__ (others are skipped).
  const std::vector<std::pair<std::string, std::string>> &metadata() const { return metadata_; }

  /// Converts `t` into `numel` elements of dtype `to` at `dst`. Float file
  /// dtypes convert to F32/F64, integer ones to I32 (range-checked); the
  /// float <-> integer direction is refused naming the tensor and `forWhat`.
  void read(const FileTensor &t, DType to, void *dst, const std::string &forWhat) const;
  /// The same for elements [first, first + count) of `t` only (a rank's
  /// piece of a param under zero = 3); its file pages are released after.
  void readRange(const FileTensor &t, DType to, int64_t first, int64_t count, void *dst,
                 const std::string &forWhat) const;
  /// Fails as read() would on the dtype direction, reading nothing: a check
  /// every rank makes whether or not it reads any of `t`.
  void checkReadable(const FileTensor &t, DType to, const std::string &forWhat) const;

private:
  SafetensorsFile() = default;
  std::string path_;
  const uint8_t *map_ = nullptr; // the whole file, PROT_READ
  size_t size_ = 0;
  const uint8_t *data_ = nullptr; // the data section inside map_
  std::vector<FileTensor> tensors_;
  std::vector<std::pair<std::string, std::string>> metadata_;
};

/// One tensor to write; `bytes` returns a pointer to its data (numel elements
/// of `dtype`), either into the caller's memory or built into `scratch`.
struct OutTensor {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  std::function<const void *(std::vector<uint8_t> &scratch)> bytes;
};

/// Writes `tensors` with __metadata__ {"format": "pt"} (and the string
/// pairs of `metadata`) atomically to `file`.
void writeSafetensors(const std::string &file, const std::vector<OutTensor> &tensors,
                      const std::vector<std::pair<std::string, std::string>> &metadata = {});

} // namespace bmrt::io

#endif // BMRT_IO_SAFETENSORS_H
