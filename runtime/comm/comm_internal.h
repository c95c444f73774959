//===- comm/comm_internal.h - What the comm backends share ---------------===//
//
// Not part of the API (bmrt/comm.h is): the collective kinds, their
// descriptions for error messages ("all-reduce of 1234 floats"), argument
// checks every backend applies at issue time, and the backend factories
// openComm chooses between.
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_COMM_INTERNAL_H
#define BMRT_COMM_INTERNAL_H

#include "bmrt/comm.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace bmrt {

enum class CommOpKind : int {
  AllReduce,
  ReduceScatter,
  AllGather,
  Broadcast,
  Barrier,
  ReduceScatterV,
  AllGatherV, // the last: tcp_comm.cpp checks a peer's kind against it
};

const char *commOpName(CommOpKind kind);     // "all-reduce", ...
size_t commDTypeBytes(DType dtype);          // fails on an unknown dtype
/// "all-reduce of 1234 floats", "reduce-scatter of 4 x 256 doubles",
/// "reduce-scatter of 1000 floats in per-rank pieces", "barrier"; `n` as
/// issued (elements, elements per rank, or all pieces together).
std::string describeCommOp(CommOpKind kind, int64_t n, DType dtype, int size);

/// Checks a collective's arguments as issued on `rank` (of `size`): known
/// dtype, n >= 0, a buffer when n > 0, root in range. Fails naming the
/// collective.
void checkCommArgs(CommOpKind kind, const void *buf, int64_t n, DType dtype, int root,
                   int rank, int size);

/// reduceScatterv's and allGatherv's counts: checks them (size() of them,
/// none negative, a total that fits) and returns the total; fails naming
/// the collective `kind`.
int64_t checkPieceCounts(CommOpKind kind, const int64_t *counts, int rank, int size);

/// How a torchrun-style launch is configured (openComm reads the environment).
struct TcpConfig {
  int rank = 0;
  int size = 1;
  std::string masterAddr;
  int masterPort = 0;
};

/// The timeout a backend works with: CommOptions::timeoutSeconds, with
/// anything <= 0, NaN or beyond 1e9 s (which would overflow clock
/// arithmetic) meaning "wait forever", returned as 0.
double commTimeoutSeconds(const CommOptions &options);

std::unique_ptr<Comm> makeMpiComm(const CommOptions &options);
std::unique_ptr<Comm> makeTcpComm(const CommOptions &options, const TcpConfig &config);

} // namespace bmrt

#endif // BMRT_COMM_INTERNAL_H
