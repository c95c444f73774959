//===- io/atomic_file.cpp - Files that appear whole or not at all ---------===//
#include "io/atomic_file.h"

#include "bmrt/context.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

namespace bmrt::io {

namespace {

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

AtomicFile::AtomicFile(const std::string &file)
    : file_(file), temp_(file + ".tmp." + std::to_string(getpid())) {
  fd_ = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd_ < 0)
    fail(file_ + ": cannot write: cannot create " + temp_ + ": " + strerror(errno));
}

AtomicFile::~AtomicFile() {
  if (committed_)
    return;
  if (fd_ >= 0)
    ::close(fd_);
  ::unlink(temp_.c_str());
}

void AtomicFile::abandon(const std::string &problem) {
  if (fd_ >= 0)
    ::close(fd_);
  fd_ = -1;
  ::unlink(temp_.c_str());
  fail(file_ + ": cannot write: " + problem);
}

void AtomicFile::write(const void *data, size_t bytes) {
  const char *p = (const char *)data;
  while (bytes > 0) {
    ssize_t written = ::write(fd_, p, bytes);
    if (written < 0) {
      if (errno == EINTR)
        continue;
      abandon(strerror(errno));
    }
    p += written;
    bytes -= (size_t)written;
  }
}

void AtomicFile::commit() {
  if (fsync(fd_) != 0)
    abandon(std::string("fsync: ") + strerror(errno));
  int rc = ::close(fd_);
  fd_ = -1;
  if (rc != 0)
    abandon(std::string("close: ") + strerror(errno));
  if (::rename(temp_.c_str(), file_.c_str()) != 0)
    abandon("rename from " + temp_ + ": " + strerror(errno));
  committed_ = true;
  syncDirectoryOf(file_);
}

} // namespace bmrt::io
