//===- host/zero2_units.cpp - ZeRO-2's reduce-scatter of one staged unit --===//
//
// training.h's reduce_scatter_unit: which piece of a unit each rank owns
// and the Comm::reduceScatterv of the staging, on the Comm alone (no
// kernel), so the host and the cuda backend link this same code (ZeRO-3's
// gather_unit, host/partition.cpp, cuts a unit with the same unitCounts); only
// add_unit_grads, which adds the summed piece into the partition, is each
// backend's kernel (host/partition.cpp, cuda/api_training.cpp).
//
//===----------------------------------------------------------------------===//
#include "bmrt/comm.h"
#include "bmrt/training.h"

#include <algorithm>
#include <string>
#include <vector>

namespace bmrt {

// Group elements [at, at + n) meet rank q's partition [q * size, (q + 1) *
// size) in [lo, hi); the pieces tile the unit in rank order, since the
// partitions tile [0, ranks * size), which holds the group.
static void unitPiece(int64_t size, int q, int64_t at, int64_t n, int64_t &lo, int64_t &hi) {
  lo = std::max<int64_t>(at, (int64_t)q * size);
  hi = std::min<int64_t>(at + n, ((int64_t)q + 1) * size);
  if (hi < lo)
    hi = lo;
}

void checkStagedUnit(const char *what, const Buffers &buf, int64_t stagingAt, int64_t at,
                     int64_t n) {
  checkPartition(what, buf);
  if (!buf.gradStaging)
    fail(std::string(what) + ": this zero = 2 program needs Buffers::gradStaging (the "
                             "backward's staging of one unit), which the app did not allocate");
  if (stagingAt < 0 || at < 0 || n < 0)
    fail(std::string(what) + ": unit [" + std::to_string(at) + ", " + std::to_string(at + n) +
         ") staged at " + std::to_string(stagingAt) + " (a bmbc bug)");
}

std::vector<int64_t> unitCounts(const char *what, const Buffers &buf, int ranks, int64_t at,
                                int64_t n) {
  if (ranks > 1 && buf.part.total != buf.part.size * ranks)
    fail(std::string(what) + ": the partitions are cut for " +
         std::to_string(buf.part.total / std::max<int64_t>(buf.part.size, 1)) +
         " ranks, the communicator has " + std::to_string(ranks));
  std::vector<int64_t> counts((size_t)ranks);
  for (int q = 0; q < ranks; ++q) {
    int64_t lo, hi;
    unitPiece(ranks > 1 ? buf.part.size : at + n, q, at, n, lo, hi);
    counts[(size_t)q] = hi - lo;
  }
  return counts;
}

template <class T>
CommHandle reduce_scatter_unit(Context &ctx, const Buffers &buf, int64_t stagingAt, int64_t at,
                               int64_t n) {
  checkStagedUnit("reduce_scatter_unit", buf, stagingAt, at, n);
  Comm &comm = commOf(ctx);
  const std::vector<int64_t> counts = unitCounts("reduce_scatter_unit", buf, comm.size(), at, n);
  return comm.reduceScatterv((T *)buf.gradStaging + stagingAt, counts.data(),
                             sizeof(T) == 8 ? DType::F64 : DType::F32);
}

template CommHandle reduce_scatter_unit<float>(Context &, const Buffers &, int64_t, int64_t,
                                               int64_t);
template CommHandle reduce_scatter_unit<double>(Context &, const Buffers &, int64_t, int64_t,
                                                int64_t);

} // namespace bmrt
