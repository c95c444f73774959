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

#include "bmrt/context.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

namespace bmrt::io {

namespace {

// Tensor names are ASCII in practice, but a name is user data: escape it.
void appendJsonString(std::string &out, const std::string &s) {
  out += '"';
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += (char)c;
    } else if (c < 0x20) {
      char buf[8];
      snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += (char)c;
    }
  }
  out += '"';
}

std::string buildHeader(const std::vector<OutTensor> &tensors) {
  std::string header = "{\"__metadata__\":{\"format\":\"pt\"}";
  uint64_t offset = 0;
  for (const OutTensor &t : tensors) {
    uint64_t bytes = paramDTypeSize(t.dtype);
    for (int64_t d : t.shape)
      bytes *= (uint64_t)d;
    header += ',';
    appendJsonString(header, t.name);
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

// write(2) until done; false (errno set) on failure.
bool writeAll(int fd, const void *data, size_t n) {
  const char *p = (const char *)data;
  while (n > 0) {
    ssize_t written = ::write(fd, p, n);
    if (written < 0) {
      if (errno == EINTR)
        continue;
      return false;
    }
    p += written;
    n -= (size_t)written;
  }
  return true;
}

// Makes the rename itself durable. Best effort: some file systems refuse
// fsync on directories, and the file's own data is already synced.
void syncDirectoryOf(const std::string &file) {
  size_t slash = file.rfind('/');
  std::string dir = slash == std::string::npos ? "." : file.substr(0, slash + 1);
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    (void)fsync(fd);
    ::close(fd);
  }
}

} // namespace

void writeSafetensors(const std::string &file, const std::vector<OutTensor> &tensors) {
  std::string header = buildHeader(tensors);
  std::string temp = file + ".tmp." + std::to_string(getpid());
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0)
    fail(file + ": cannot write: cannot create " + temp + ": " + strerror(errno));

  // Any failure below (including one thrown while building a tensor's bytes)
  // removes the temp file before reporting.
  auto abandon = [&](const std::string &problem) {
    ::close(fd);
    ::unlink(temp.c_str());
    fail(file + ": cannot write: " + problem);
  };
  uint64_t headerBytes = header.size();
  uint8_t lengthBytes[8];
  memcpy(lengthBytes, &headerBytes, 8); // little-endian host (see safetensors.cpp)
  if (!writeAll(fd, lengthBytes, 8) || !writeAll(fd, header.data(), header.size()))
    abandon(strerror(errno));
  std::vector<uint8_t> scratch;
  for (const OutTensor &t : tensors) {
    size_t bytes = paramDTypeSize(t.dtype);
    for (int64_t d : t.shape)
      bytes *= (size_t)d;
    const void *data = nullptr;
    try {
      data = t.bytes(scratch);
    } catch (const Error &e) {
      abandon(std::string("tensor '") + t.name + "': " + e.what());
    }
    if (!writeAll(fd, data, bytes))
      abandon(strerror(errno));
  }
  if (fsync(fd) != 0)
    abandon(std::string("fsync: ") + strerror(errno));
  if (::close(fd) != 0) {
    ::unlink(temp.c_str());
    fail(file + ": cannot write: close: " + strerror(errno));
  }
  if (::rename(temp.c_str(), file.c_str()) != 0) {
    int err = errno;
    ::unlink(temp.c_str());
    fail(file + ": cannot write: rename from " + temp + ": " + strerror(err));
  }
  syncDirectoryOf(file);
}

} // namespace bmrt::io
