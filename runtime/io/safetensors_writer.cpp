//===- io/safetensors_writer.cpp - Atomic safetensors writer --------------===//
//
// Writes the header first (offsets are known from shapes alone), then each
// tensor's bytes in header order, one tensor in memory at a time. The header
// is padded with spaces to a multiple of 8 bytes, as the reference
// implementation does, so the data section of an mmapped file is 8-aligned.
// Atomicity: everything goes to `<file>.tmp.<pid>`, which is fsynced and then
// renamed over `file` (rename is atomic within a directory); on any failure
// the temp file is removed and the old `file`, if any, is untouched.
//
//===----------------------------------------------------------------------===//
#include "safetensors.h"
#include "io/atomic_file.h"

#include "bmrt/context.h"
#include "bmrt/json.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

namespace bmrt::io {

namespace {

std::string buildHeader(const std::vector<OutTensor> &tensors,
                        const std::vector<std::pair<std::string, std::string>> &metadata) {
  std::string header = "{\"__metadata__\":{\"format\":\"pt\"";
  for (const auto &[key, value] : metadata)
    header += "," + json::quote(key) + ":" + json::quote(value);
  header += "}";
  uint64_t offset = 0;
  for (const OutTensor &t : tensors) {
    uint64_t bytes = paramDTypeSize(t.dtype);
    for (int64_t d : t.shape)
      bytes *= (uint64_t)d;
    header += ',';
    header += json::quote(t.name);
    header += ":{\"dtype\":\"";
    header += paramDTypeName(t.dtype);
    header += "\",\"shape\":[";
    for (size_t k = 0; k < t.shape.size(); ++k)
      header += (k ? "," : "") + std::to_string(t.shape[k]);
    header += "],\"data_offsets\":[" + std::to_string(offset) + "," +
              std::to_string(offset + bytes) + "]}";
    offset += bytes;
  }
  header += '}';
  header.append((8 - header.size() % 8) % 8, ' ');
  return header;
}

} // namespace

void writeSafetensors(const std::string &file, const std::vector<OutTensor> &tensors,
                      const std::vector<std::pair<std::string, std::string>> &metadata) {
  std::string header = buildHeader(tensors, metadata);
  AtomicFile out(file);
  uint64_t headerBytes = header.size();
  uint8_t lengthBytes[8];
  memcpy(lengthBytes, &headerBytes, 8); // little-endian host (see safetensors.cpp)
  out.write(lengthBytes, 8);
  out.write(header.data(), header.size());
  std::vector<uint8_t> scratch;
  for (const OutTensor &t : tensors) {
    size_t bytes = paramDTypeSize(t.dtype);
    for (int64_t d : t.shape)
      bytes *= (size_t)d;
    const void *data = nullptr;
    // A failure while building a tensor's bytes removes the temp file too.
    try {
      data = t.bytes(scratch);
    } catch (const Error &e) {
      out.abandon(std::string("tensor '") + t.name + "': " + e.what());
    }
    out.write(data, bytes);
  }
  out.commit();
}

} // namespace bmrt::io
