//===- host/gemv.h - The matrix-vector path and the shared epilogue -------===//
//
// Private to runtime/host (not part of the bmrt API). Batch-1 decode spends
// nearly all its time in c[1, n] = x[1, k] . W[n, k]^T: a stream over W that
// OpenBLAS sgemm handles poorly (it packs W first; about 3x slower than the
// memory bound at m = 1 here) and sgemv handles without the fused epilogue.
// matvec_nt is the hand-written bandwidth-bound kernel gemm() routes small m
// to; the bench (bench/gemv) calls it directly to measure the threshold.
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_HOST_GEMV_H
#define BMRT_HOST_GEMV_H

#include "bmrt/context.h"
#include "bmrt/elementwise.h"
#include "bmrt/kernels.h"

#include <cmath>
#include <cstdint>

namespace bmrt {
namespace host {

/// Largest m gemm() sends to matvec_nt when B is [n, k]. matvec_nt streams B
/// once and re-reads each block of B rows from L1/L2 for every two rows of
/// a; sgemm packs B first. Measured with `bench/gemv/run.sh <dir> sweep`
/// (W 3072x768 fp32, 2 threads, us per call, matvec_nt vs sgemm): W from DRAM
/// m=1 388 vs 1161, m=16 739 vs 1211, m=32 1091 vs 1430, m=40 1282 vs 1719;
/// W in L3 m=16 499 vs 729, m=32 815 vs 961, m=48 1142 vs 1093. So the cut is
/// at 32, below the measured crossover (~40-48) in both cases.
constexpr int64_t kMatvecMaxRows = 32;

/// The epilogue of one element: act(acc + bias) + residual, in the order
/// kernels.h declares. Epilogue::Tanh has no element function in
/// bmrt/elementwise.h (tanh needs none), so it calls tanh directly.
template <class T> inline T activate(Epilogue act, T x) {
  switch (act) {
  case Epilogue::None:
    return x;
  case Epilogue::GeluTanh:
    return gelu_tanh(x);
  case Epilogue::GeluErf:
    return gelu_erf(x);
  case Epilogue::Relu:
    return relu(x);
  case Epilogue::Silu:
    return silu(x);
  case Epilogue::Tanh:
    return std::tanh(x);
  }
  return x; // unreachable: gemm() validated act
}

/// c[i, j] = act(a[i, :] . b[j, :] + bias[j]) + residual[i, j], i < m, j < n.
///   a        [m, k], row stride lda
///   b        [n, k], row stride ldb (Trans::T: our weight layout)
///   c        [m, n], row stride ldc
///   bias     [n] or null; residual [m, n] with stride ldc, or null, may alias c
/// Rows of b are split across ctx.numThreads threads; b is read from memory
/// once.
template <class T>
void matvec_nt(const Context &ctx, int64_t m, int64_t n, int64_t k, const T *a,
               int64_t lda, const T *b, int64_t ldb, T *c, int64_t ldc, const T *bias,
               Epilogue act, const T *residual);

} // namespace host
} // namespace bmrt

#endif // BMRT_HOST_GEMV_H
