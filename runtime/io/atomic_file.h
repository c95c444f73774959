//===- io/atomic_file.h - Files that appear whole or not at all -*- C++ -*-===//
//
// Checkpoints and token files are written so that a crash never leaves a
// half file under the final name: everything goes to `<file>.tmp.<pid>`,
// which is fsynced, closed and renamed over `file` (rename is atomic within
// a directory), then the directory is synced so the rename itself survives a
// crash. On any failure the temp file is removed, an existing `file` is left
// untouched, and bmrt::fail reports "<file>: cannot write: <problem>".
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_IO_ATOMIC_FILE_H
#define BMRT_IO_ATOMIC_FILE_H

#include <cstddef>
#include <string>

namespace bmrt::io {

class AtomicFile {
public:
  /// Creates the temp file next to `file`.
  explicit AtomicFile(const std::string &file);
  /// Removes the temp file unless commit() succeeded.
  ~AtomicFile();
  AtomicFile(const AtomicFile &) = delete;
  AtomicFile &operator=(const AtomicFile &) = delete;

  void write(const void *data, size_t bytes);
  /// fsync, close, rename over the final name, sync the directory.
  void commit();
  /// Fails with `problem` after removing the temp file.
  [[noreturn]] void abandon(const std::string &problem);

private:
  std::string file_, temp_;
  int fd_ = -1;
  bool committed_ = false;
};

} // namespace bmrt::io

#endif // BMRT_IO_ATOMIC_FILE_H
