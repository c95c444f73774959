//===- BuildExecutable.h - The emitted source to an executable --*- C++ -*-===//
#ifndef BMB_COMPILER_BUILDEXECUTABLE_H
#define BMB_COMPILER_BUILDEXECUTABLE_H

#include <string>

namespace bmb {

/// Compiles the emitted program `source` (C++ text) with the host C++
/// compiler against libbmrt into the executable `output`. `argv0` locates an
/// installed bmbc's runtime (<prefix>/include, <prefix>/lib/bmb); a bmbc in
/// its build tree uses the build tree's. Prints the compiler's errors and
/// returns false on failure.
bool buildExecutable(const std::string &source, const std::string &output, const char *argv0);

/// The same for the cuda target (BuildCudaExecutable.cpp): nvcc, the CUDA
/// backend of libbmrt, cuBLASLt, cuBLAS, NCCL.
bool buildCudaExecutable(const std::string &source, const std::string &output,
                         const char *argv0);

} // namespace bmb

#endif // BMB_COMPILER_BUILDEXECUTABLE_H
