//===- BuildExecutable.cpp - The emitted source to an executable -----------===//
//
// `bmbc FILE --job J -o exe` ends here: the emitted source goes to a
// temporary .cpp, the C++ compiler builds it against libbmrt (host backend:
// OpenMP, the OpenMP build of OpenBLAS; Open MPI for its comm backend), and
// the executable lands at `exe`.
// The runtime is found next to an installed bmbc (<prefix>/include/bmrt,
// <prefix>/lib/bmb/libbmrt.a) or, for a bmbc in its build tree, in the paths
// configured at build time. $CXX overrides the compiler.
//
//===----------------------------------------------------------------------===//
#include "compiler/BuildExecutable.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <vector>

#ifndef BMB_CXX
#define BMB_CXX "c++"
#endif
#ifndef BMB_RUNTIME_INCLUDE
#define BMB_RUNTIME_INCLUDE ""
#endif
#ifndef BMB_RUNTIME_LIBRARY
#define BMB_RUNTIME_LIBRARY ""
#endif
#ifndef BMB_OPENBLAS_LIBRARY
#define BMB_OPENBLAS_LIBRARY ""
#endif
#ifndef BMB_MPI_LIBRARY
#define BMB_MPI_LIBRARY ""
#endif

namespace {

struct RuntimePaths {
  std::string include, library;
};

RuntimePaths findRuntime(const char *argv0) {
  std::string exe = llvm::sys::fs::getMainExecutable(argv0, (void *)&findRuntime);
  if (!exe.empty()) {
    llvm::SmallString<256> prefix(llvm::sys::path::parent_path(exe));
    llvm::sys::path::append(prefix, "..");
    llvm::SmallString<256> inc(prefix), lib(prefix);
    llvm::sys::path::append(inc, "include");
    llvm::sys::path::append(lib, "lib", "bmb", "libbmrt.a");
    llvm::SmallString<256> header(inc);
    llvm::sys::path::append(header, "bmrt", "bmrt.h");
    if (llvm::sys::fs::exists(lib) && llvm::sys::fs::exists(header))
      return {std::string(inc), std::string(lib)};
  }
  return {BMB_RUNTIME_INCLUDE, BMB_RUNTIME_LIBRARY};
}

} // namespace

bool bmb::buildExecutable(const std::string &source, const std::string &output,
                          const char *argv0) {
  RuntimePaths rt = findRuntime(argv0);
  if (rt.library.empty() || !llvm::sys::fs::exists(rt.library)) {
    llvm::errs() << "bmbc: error: the runtime library libbmrt.a was not found (looked for '"
                 << rt.library << "'); build the target 'bmrt' or install bmb\n";
    return false;
  }
  llvm::SmallString<128> cpp;
  int fd;
  if (std::error_code ec = llvm::sys::fs::createTemporaryFile("bmbc", "cpp", fd, cpp)) {
    llvm::errs() << "bmbc: error: cannot create a temporary file: " << ec.message() << "\n";
    return false;
  }
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << source;
  }
  const char *envCxx = std::getenv("CXX");
  std::string cxx = envCxx && *envCxx ? envCxx : BMB_CXX;
  llvm::ErrorOr<std::string> cxxPath = llvm::sys::findProgramByName(cxx);
  if (!cxxPath) {
    llvm::errs() << "bmbc: error: the C++ compiler '" << cxx << "' was not found\n";
    llvm::sys::fs::remove(cpp);
    return false;
  }
  // BLAS and MPI (libbmrt's comm backend) by path, each with an rpath to
  // its directory: neither needs to be on the default library path.
  std::string openblas = BMB_OPENBLAS_LIBRARY;
  std::string rpath = "-Wl,-rpath," + std::string(llvm::sys::path::parent_path(openblas));
  std::string mpi = BMB_MPI_LIBRARY;
  std::string mpiRpath = "-Wl,-rpath," + std::string(llvm::sys::path::parent_path(mpi));
  std::vector<std::string> args = {*cxxPath,   "-std=c++17", "-O2",      "-march=native",
                                   "-fopenmp", "-I",         rt.include, std::string(cpp),
                                   rt.library, openblas,     rpath,      mpi,
                                   mpiRpath,   "-lm",        "-o",       output};
  std::vector<llvm::StringRef> refs(args.begin(), args.end());
  std::string err;
  int rc = llvm::sys::ExecuteAndWait(*cxxPath, refs, std::nullopt, {}, 0, 0, &err);
  llvm::sys::fs::remove(cpp);
  if (rc != 0) {
    llvm::errs() << "bmbc: error: the C++ compiler failed on the emitted program ("
                 << (err.empty() ? "exit " + std::to_string(rc) : err)
                 << "); see its messages above, and --emit=cuda for the source\n";
    return false;
  }
  return true;
}
