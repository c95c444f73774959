//===- bmrt/portable.h - What lets one source build for CPU and GPU -------===//
//
// Emitted programs are CUDA C++ with no backend #if (DESIGN: "One source, two
// backends"). Under nvcc the CUDA keywords mean what they say; under a plain
// C++ compiler this header defines them away, so a generated
// `__host__ __device__` element function is an ordinary inline function that
// the host skeletons (OpenMP loops) call.
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_PORTABLE_H
#define BMRT_PORTABLE_H

#include <cstdint>

#ifndef __CUDACC__
#ifndef __host__
#define __host__
#endif
#ifndef __device__
#define __device__
#endif
#ifndef __global__
#define __global__
#endif
#endif

#define BMRT_HD __host__ __device__ inline

#endif // BMRT_PORTABLE_H
