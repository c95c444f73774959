//===- host/partition.cpp - The optimizer step over a rank's partition ----===//
//
// See training.h ("The optimizer step of generated code") and
// docs/distributed.md. The flat trainable group is the same byte layout in
// the params allocation (from groupParamOffset) and the grads allocation
// (from 0); a rank owns elements [part.begin, part.end) and keeps the
// optimizer state of those only, slot k at k * part.optStride. Under
// zero = 2 the grads allocation holds only the partition (element e at
// grads[e - part.gradsFrom]), filled unit by unit during the backward by
// reduce_scatter_unit and add_unit_grads.
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
  checkPartition("grad_norm_part", buf);
  if (chunk < 1)
    fail("grad_norm_part: chunk of " + std::to_string(chunk) + " elements");
  const Partition &p = buf.part;
  if (p.begin < p.end && p.begin % chunk != 0)
    fail("grad_norm_part: the partition starts inside a chunk (a bmbc/app bug)");
  const int64_t numChunks = (groupElems + chunk - 1) / chunk;
  std::vector<double> partial((size_t)numChunks, 0.0);
  // An empty partition (a rank past the group's end) computes no chunk.
  const int64_t first = p.begin / chunk;
  const int64_t last = p.begin < p.end ? (p.end + chunk - 1) / chunk : first;
  const T *g = (const T *)buf.grads; // group element e at g[e - p.gradsFrom]
#pragma omp parallel for num_threads(host::threadCount(ctx)) schedule(static) \
    if (last - first > 1)
  for (int64_t c = first; c < last; ++c) {
    const int64_t end = std::min((c + 1) * chunk, p.end);
    double s = 0;
    for (int64_t i = c * chunk; i < end; ++i) {
      const double x = double(g[i - p.gradsFrom]);
      s += x * x;
    }
    partial[(size_t)c] = s;
  }
  // Whether the other ranks hold chunks must be decided alike on every
  // rank (a collective): partitioned exactly when the partitions do not
  // coincide (ZeRO-1 on several ranks). Asking whether this rank's own
  // partition misses part of the group would differ when the group fits in
  // rank 0's partition (the others' are empty) and hang the ranks.
  if (p.total != p.size) {
    // Other ranks hold the other chunks; adding their zeros is exact.
    Comm &comm = commOf(ctx);
    commWait(ctx, comm.allReduce(partial.data(), numChunks, DType::F64));
  }
  double total = 0;
  for (double s : partial)
    total += s;
  return std::sqrt(total);
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
  adamw_update<T>(ctx, params + lo, g, m, m + buf.part.optStride, hi - lo, lr, beta1, beta2, eps,
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
  sgd_update<T>(ctx, params + lo, g, momentumBuf, hi - lo, lr, momentum, weightDecay, step);
}

// Group elements [at, at + n) meet rank q's partition [q * size, (q + 1) *
// size) in [lo, hi); the pieces tile the unit in rank order, since the
// partitions tile [0, ranks * size), which holds the group.
static void unitPiece(int64_t size, int q, int64_t at, int64_t n, int64_t &lo, int64_t &hi) {
  lo = std::max<int64_t>(at, (int64_t)q * size);
  hi = std::min<int64_t>(at + n, ((int64_t)q + 1) * size);
  if (hi < lo)
    hi = lo;
}

static void checkStagedUnit(const char *what, const Buffers &buf, int64_t stagingAt, int64_t at,
                            int64_t n) {
  checkPartition(what, buf);
  if (!buf.gradStaging)
    fail(std::string(what) + ": this zero = 2 program needs Buffers::gradStaging (the "
                             "backward's staging of one unit), which the app did not allocate");
  if (stagingAt < 0 || at < 0 || n < 0)
    fail(std::string(what) + ": unit [" + std::to_string(at) + ", " + std::to_string(at + n) +
         ") staged at " + std::to_string(stagingAt) + " (a bmbc bug)");
}

template <class T>
CommHandle reduce_scatter_unit(Context &ctx, const Buffers &buf, int64_t stagingAt, int64_t at,
                               int64_t n) {
  checkStagedUnit("reduce_scatter_unit", buf, stagingAt, at, n);
  Comm &comm = commOf(ctx);
  const int ranks = comm.size();
  if (ranks > 1 && buf.part.total != buf.part.size * ranks)
    fail("reduce_scatter_unit: the partitions are cut for " +
         std::to_string(buf.part.total / std::max<int64_t>(buf.part.size, 1)) +
         " ranks, the communicator has " + std::to_string(ranks));
  std::vector<int64_t> counts((size_t)ranks);
  for (int q = 0; q < ranks; ++q) {
    int64_t lo, hi;
    unitPiece(ranks > 1 ? buf.part.size : at + n, q, at, n, lo, hi);
    counts[(size_t)q] = hi - lo;
  }
  return comm.reduceScatterv((T *)buf.gradStaging + stagingAt, counts.data(),
                             sizeof(T) == 8 ? DType::F64 : DType::F32);
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

#define BMRT_INSTANTIATE(T)                                                                  \
  template double grad_norm_part<T>(Context &, const Buffers &, int64_t, int64_t);          \
  template void scale_part<T>(Context &, const Buffers &, double);                          \
  template void adamw_update_part<T>(Context &, const Buffers &, int64_t, int64_t, int64_t, \
                                     double, double, double, double, double, int64_t);      \
  template void sgd_update_part<T>(Context &, const Buffers &, int64_t, int64_t, int64_t,   \
                                   double, double, double, int64_t);                        \
  template CommHandle reduce_scatter_unit<T>(Context &, const Buffers &, int64_t, int64_t,  \
                                             int64_t);                                      \
  template void add_unit_grads<T>(Context &, const Buffers &, int64_t, int64_t, int64_t);
BMRT_INSTANTIATE(float)
BMRT_INSTANTIATE(double)
#undef BMRT_INSTANTIATE

} // namespace bmrt
