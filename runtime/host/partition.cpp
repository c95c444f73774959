//===- host/partition.cpp - The optimizer step over a rank's partition ----===//
//
// See training.h ("The optimizer step of generated code") and
// docs/distributed.md. The flat trainable group is the same byte layout in
// the params allocation (from groupParamOffset) and the grads allocation
// (from 0); a rank owns elements [part.begin, part.end) and keeps the
// optimizer state of those only, slot k at k * part.optStride. Under
// zero = 2 the grads allocation holds only the partition (element e at
// grads[e - part.gradsFrom]), filled unit by unit during the backward by
// reduce_scatter_unit (zero2_units.cpp, shared with the cuda backend) and
// add_unit_grads. Under zero = 3 the params
// allocation's group span holds only the partition too (element e at
// e - part.paramsFrom); gather_unit (zero3_units.cpp, shared with the cuda
// backend) copies a unit's pieces of every rank into Buffers::paramStaging,
// where the entries read them.
//
// The gradient norm is where determinism across world sizes is won or lost:
// a sum of squares split differently over ranks or threads rounds
// differently, the clip factor changes in its last bits, and every weight
// after it. So the sum has one fixed shape - per-chunk partials in element
// order, then the partials in chunk order - and partitions hold whole
// chunks, so every rank count computes the same partials.
//
//===----------------------------------------------------------------------===//
#include "bmrt/comm.h"
#include "bmrt/training.h"
#include "host/host_common.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

namespace bmrt {

// partitionOf and groupDType (tables, not kernels): training_tables.cpp.

template <class T>
double grad_norm_part(Context &ctx, const Buffers &buf, int64_t groupElems, int64_t chunk) {
  ProfileScope profile(ctx, KernelKind::Optimizer);
  const GradNormChunks c = gradNormChunks("grad_norm_part", buf, groupElems, chunk);
  const Partition &p = buf.part;
  std::vector<double> partial((size_t)c.count, 0.0);
  const T *g = (const T *)buf.grads; // group element e at g[e - p.gradsFrom]
#pragma omp parallel for num_threads(host::threadCount(ctx)) schedule(static) \
    if (c.last - c.first > 1)
  for (int64_t k = c.first; k < c.last; ++k) {
    const int64_t end = std::min((k + 1) * chunk, p.end);
    double s = 0;
    for (int64_t i = k * chunk; i < end; ++i) {
      const double x = double(g[i - p.gradsFrom]);
      s += x * x;
    }
    partial[(size_t)k] = s;
  }
  return gradNormOfChunkSums(ctx, buf, partial);
}

template <class T>
void scale_part(Context &ctx, const Buffers &buf, double s) {
  checkPartition("scale_part", buf);
  scale_inplace<T>(ctx, (T *)buf.grads + (buf.part.begin - buf.part.gradsFrom),
                   buf.part.end - buf.part.begin, s);
}

template <class T>
void adamw_update_part(Context &ctx, const Buffers &buf, int64_t groupParamOffset, int64_t at,
                       int64_t n, double lr, double beta1, double beta2, double eps,
                       double weightDecay, int64_t step) {
  checkPartition("adamw_update_part", buf);
  int64_t lo, hi;
  if (!clipToPartition(buf, at, n, lo, hi))
    return;
  T *params = (T *)((char *)buf.params + groupParamOffset);
  T *m = (T *)buf.optState + (lo - buf.part.begin);
  const T *g = (const T *)buf.grads + (lo - buf.part.gradsFrom);
  adamw_update<T>(ctx, params + (lo - buf.part.paramsFrom), g, m, m + buf.part.optStride, hi - lo, lr, beta1, beta2, eps,
                  weightDecay, step);
}

template <class T>
void sgd_update_part(Context &ctx, const Buffers &buf, int64_t groupParamOffset, int64_t at,
                     int64_t n, double lr, double momentum, double weightDecay, int64_t step) {
  checkPartition("sgd_update_part", buf);
  int64_t lo, hi;
  if (!clipToPartition(buf, at, n, lo, hi))
    return;
  T *params = (T *)((char *)buf.params + groupParamOffset);
  T *momentumBuf = momentum != 0.0 ? (T *)buf.optState + (lo - buf.part.begin) : nullptr;
  const T *g = (const T *)buf.grads + (lo - buf.part.gradsFrom);
  sgd_update<T>(ctx, params + (lo - buf.part.paramsFrom), g, momentumBuf, hi - lo, lr, momentum, weightDecay, step);
}

template <class T>
void add_unit_grads(Context &ctx, const Buffers &buf, int64_t stagingAt, int64_t at, int64_t n) {
  ProfileScope profile(ctx, KernelKind::Optimizer);
  checkStagedUnit("add_unit_grads", buf, stagingAt, at, n);
  T *staged = (T *)buf.gradStaging + stagingAt;
  int64_t lo, hi;
  if (clipToPartition(buf, at, n, lo, hi)) {
    T *g = (T *)buf.grads + (lo - buf.part.gradsFrom);
    const T *piece = staged + (lo - at);
    const int64_t m = hi - lo;
#pragma omp parallel for num_threads(host::threadCount(ctx)) schedule(static) if (m >= (1 << 16))
    for (int64_t i = 0; i < m; ++i)
      g[i] = g[i] + piece[i];
  }
  std::memset(staged, 0, (size_t)n * sizeof(T));
}

// ZeRO-3's gather_unit, wait_unit and prefetch_unit are the backends' shared
// code (zero3_units.cpp); the host's part is the copy of the rank's piece.
void copy_unit_piece(Context &, void *staged, const void *params, int64_t bytes) {
  std::memcpy(staged, params, (size_t)bytes);
}

#define BMRT_INSTANTIATE(T)                                                                  \
  template double grad_norm_part<T>(Context &, const Buffers &, int64_t, int64_t);          \
  template void scale_part<T>(Context &, const Buffers &, double);                          \
  template void adamw_update_part<T>(Context &, const Buffers &, int64_t, int64_t, int64_t, \
                                     double, double, double, double, double, int64_t);      \
  template void sgd_update_part<T>(Context &, const Buffers &, int64_t, int64_t, int64_t,   \
                                   double, double, double, int64_t);                        \
  template void add_unit_grads<T>(Context &, const Buffers &, int64_t, int64_t, int64_t);
BMRT_INSTANTIATE(float)
BMRT_INSTANTIATE(double)
#undef BMRT_INSTANTIATE

} // namespace bmrt
