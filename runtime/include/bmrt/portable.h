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

namespace bmrt {

// Four floats moved as one 16-byte access: a generated kernel's quad()
// (bmbc prints it for element-wise kernels whose operands are all f32
// indexed by the element itself). Only the GPU's launch_map calls quad(),
// after aligned16() said every pointer allows it; on the host they compile
// and are never called.
#ifdef __CUDACC__
using Vec4 = float4;
#else
struct alignas(16) Vec4 {
  float x, y, z, w;
};
#endif
BMRT_HD Vec4 load4(const float *p) { return *reinterpret_cast<const Vec4 *>(p); }
BMRT_HD void store4(float *p, const Vec4 &v) { *reinterpret_cast<Vec4 *>(p) = v; }
template <class... T> BMRT_HD bool aligned16(const T *...p) {
  return ((reinterpret_cast<std::uintptr_t>(p) % 16 == 0) && ...);
}

} // namespace bmrt

#endif // BMRT_PORTABLE_H
