//===- BuildCudaExecutable.cpp - The emitted source to a CUDA executable ---===//
//
// `bmbc FILE --job J --target=cuda -o exe` ends here: the same emitted
// source the host build compiles goes to a temporary .cu, nvcc compiles it
// for the configured GPU architectures with BMRT_CUDA_BACKEND defined (the
// runtime headers then give the device skeletons) and links it against the
// CUDA backend of libbmrt (libbmrt_cuda_program.a, libbmrt_cuda.a), cuBLASLt,
// cuBLAS, NCCL and Open MPI (the comm component's bootstrap).
//
// Configuration, from the environment (documented in docs/building.md):
//   $NVCC             the nvcc to use (default: the one CMake found)
//   $BMB_CUDA_ARCHS   GPU architectures, e.g. "80,90" or "80;90" (default: the build's
//                     CMAKE_CUDA_ARCHITECTURES)
//   $BMB_NVCC_FLAGS   extra nvcc flags, space-separated (CI passes its
//                     warnings-as-errors flags here)
//
//===----------------------------------------------------------------------===//
#include "compiler/BuildExecutable.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstdlib>
#include <vector>

#ifndef BMB_NVCC
#define BMB_NVCC "nvcc"
#endif
#ifndef BMB_CUDA_ARCHS
#define BMB_CUDA_ARCHS "80,90"
#endif
#ifndef BMB_RUNTIME_INCLUDE
#define BMB_RUNTIME_INCLUDE ""
#endif
#ifndef BMB_CUDA_PROGRAM_LIBRARY
#define BMB_CUDA_PROGRAM_LIBRARY ""
#endif
#ifndef BMB_CUDA_BACKEND_LIBRARY
#define BMB_CUDA_BACKEND_LIBRARY ""
#endif
#ifndef BMB_CUDA_LINK_LIBRARIES
#define BMB_CUDA_LINK_LIBRARIES ""
#endif
#ifndef BMB_MPI_LIBRARY
#define BMB_MPI_LIBRARY ""
#endif

namespace {

struct CudaRuntime {
  std::string include, programLib, backendLib;
};

// As findRuntime in BuildExecutable.cpp: an installed bmbc's prefix first.
CudaRuntime findCudaRuntime(const char *argv0) {
  std::string exe = llvm::sys::fs::getMainExecutable(argv0, (void *)&findCudaRuntime);
  if (!exe.empty()) {
    llvm::SmallString<256> prefix(llvm::sys::path::parent_path(exe));
    llvm::sys::path::append(prefix, "..");
    llvm::SmallString<256> inc(prefix), program(prefix), backend(prefix);
    llvm::sys::path::append(inc, "include");
    llvm::sys::path::append(program, "lib", "bmb", "libbmrt_cuda_program.a");
    llvm::sys::path::append(backend, "lib", "bmb", "libbmrt_cuda.a");
    if (llvm::sys::fs::exists(program) && llvm::sys::fs::exists(backend))
      return {std::string(inc), std::string(program), std::string(backend)};
  }
  return {BMB_RUNTIME_INCLUDE, BMB_CUDA_PROGRAM_LIBRARY, BMB_CUDA_BACKEND_LIBRARY};
}

std::string envOr(const char *name, const char *fallback) {
  const char *v = std::getenv(name);
  return v && *v ? v : fallback;
}

} // namespace

bool bmb::buildCudaExecutable(const std::string &source, const std::string &output,
                              const char *argv0) {
  CudaRuntime rt = findCudaRuntime(argv0);
  for (const std::string &lib : {rt.programLib, rt.backendLib})
    if (lib.empty() || !llvm::sys::fs::exists(lib)) {
      llvm::errs() << "bmbc: error: the CUDA runtime library '" << lib
                   << "' was not found; build the targets 'bmrt_cuda' and "
                      "'bmrt_cuda_program' or install bmb\n";
      return false;
    }
  std::string nvccName = envOr("NVCC", BMB_NVCC);
  llvm::ErrorOr<std::string> nvcc = llvm::sys::findProgramByName(nvccName);
  if (!nvcc) {
    llvm::errs() << "bmbc: error: nvcc ('" << nvccName << "') was not found\n";
    return false;
  }
  std::vector<std::string> args = {*nvcc, "-std=c++17", "-O2", "-DBMRT_CUDA_BACKEND"};
  llvm::SmallVector<llvm::StringRef> archs;
  std::string archList = envOr("BMB_CUDA_ARCHS", BMB_CUDA_ARCHS);
  std::replace(archList.begin(), archList.end(), ';', ',');
  llvm::StringRef(archList).split(archs, ',', -1, false);
  for (llvm::StringRef arch : archs) {
    if (arch.empty() || !llvm::all_of(arch, llvm::isDigit)) {
      llvm::errs() << "bmbc: error: $BMB_CUDA_ARCHS: '" << arch
                   << "' is not a GPU architecture number (expected e.g. \"80,90\")\n";
      return false;
    }
    args.push_back(("--generate-code=arch=compute_" + arch + ",code=[compute_" + arch +
                    ",sm_" + arch + "]")
                       .str());
  }
  if (archs.empty()) {
    llvm::errs() << "bmbc: error: $BMB_CUDA_ARCHS names no GPU architecture\n";
    return false;
  }
  llvm::SmallVector<llvm::StringRef> extra;
  std::string extraFlags = envOr("BMB_NVCC_FLAGS", "");
  llvm::StringRef(extraFlags).split(extra, ' ', -1, false);
  for (llvm::StringRef f : extra)
    args.push_back(f.str());

  llvm::SmallString<128> cu;
  int fd;
  if (std::error_code ec = llvm::sys::fs::createTemporaryFile("bmbc", "cu", fd, cu)) {
    llvm::errs() << "bmbc: error: cannot create a temporary file: " << ec.message() << "\n";
    return false;
  }
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << source;
  }
  // The two archives refer to each other (the backend's NCCL communicator
  // bootstraps over the program library's comm component): one group.
  args.insert(args.end(), {"-I", rt.include, std::string(cu), "-Xlinker=--start-group",
                           rt.programLib, rt.backendLib, "-Xlinker=--end-group"});
  // cuBLASLt, cuBLAS, NCCL and MPI by path, with rpaths to their directories.
  llvm::SmallVector<llvm::StringRef> libs;
  std::string linkLibs = std::string(BMB_CUDA_LINK_LIBRARIES) + "," + BMB_MPI_LIBRARY;
  llvm::StringRef(linkLibs).split(libs, ',', -1, false);
  for (llvm::StringRef lib : libs) {
    args.push_back(lib.str());
    args.push_back(("-Xlinker=-rpath," + llvm::sys::path::parent_path(lib)).str());
  }
  args.insert(args.end(), {"-Xcompiler=-fopenmp", "-lm", "-o", output});
  std::vector<llvm::StringRef> refs(args.begin(), args.end());
  std::string err;
  int rc = llvm::sys::ExecuteAndWait(*nvcc, refs, std::nullopt, {}, 0, 0, &err);
  llvm::sys::fs::remove(cu);
  if (rc != 0) {
    llvm::errs() << "bmbc: error: nvcc failed on the emitted program ("
                 << (err.empty() ? "exit " + std::to_string(rc) : err)
                 << "); see its messages above, and --emit=cuda for the source\n";
    return false;
  }
  return true;
}
