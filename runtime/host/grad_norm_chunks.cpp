//===- host/grad_norm_chunks.cpp - The gradient norm's fixed shape --------===//
//
// grad_norm_part's chunking and its sum over ranks, shared by the host and
// the cuda backend (training.h): only the per-chunk sums of squares are
// computed by each backend's kernels.
//
//===----------------------------------------------------------------------===//
#include "bmrt/comm.h"
#include "bmrt/training.h"

#include <cmath>
#include <string>
#include <vector>

namespace bmrt {

GradNormChunks gradNormChunks(const char *what, const Buffers &buf, int64_t groupElems,
                              int64_t chunk) {
  checkPartition(what, buf);
  if (chunk < 1)
    fail(std::string(what) + ": chunk of " + std::to_string(chunk) + " elements");
  const Partition &p = buf.part;
  if (p.begin < p.end && p.begin % chunk != 0)
    fail(std::string(what) + ": the partition starts inside a chunk (a bmbc/app bug)");
  GradNormChunks c;
  c.count = (groupElems + chunk - 1) / chunk;
  // An empty partition (a rank past the group's end) computes no chunk.
  c.first = p.begin / chunk;
  c.last = p.begin < p.end ? (p.end + chunk - 1) / chunk : c.first;
  return c;
}

double gradNormOfChunkSums(Context &ctx, const Buffers &buf, std::vector<double> &sums) {
  // Whether the other ranks hold chunks must be decided alike on every
  // rank (a collective): partitioned exactly when the partitions do not
  // coincide (ZeRO on several ranks). Asking whether this rank's own
  // partition misses part of the group would differ when the group fits in
  // rank 0's partition (the others' are empty) and hang the ranks.
  if (buf.part.total != buf.part.size) {
    // Other ranks hold the other chunks; adding their zeros is exact.
    Comm &comm = commOf(ctx);
    commWait(ctx, comm.allReduce(sums.data(), (int64_t)sums.size(), DType::F64)); // host memory
  }
  double total = 0;
  for (double s : sums)
    total += s;
  return std::sqrt(total);
}

} // namespace bmrt
