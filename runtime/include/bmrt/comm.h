//===- bmrt/comm.h - Collectives between the ranks of one training run ----===//
//
// One interface for every backend (DESIGN "The runtime"): a single process,
// MPI on CPUs (here), NCCL on GPUs (the CUDA issue). Generated code and the
// train app call only this.
//
// Every collective is asynchronous: it is queued in issue order on the
// backend's progress thread (on the host; the comm stream on a GPU) and
// returns a handle; `wait` blocks until it is done. The buffers of a queued
// collective belong to it until its wait returns: the caller neither reads
// nor writes them in between (the bmb_exec ordering verifier checks this for
// generated code). All ranks issue the same collectives in the same order.
//
// Layout conventions are NCCL's in-place ones, so a flat parameter group
// partitioned into `size()` rank-contiguous chunks of `count` elements needs
// no copies:
//   reduceScatter(buf, count): buf holds size()*count elements; afterwards
//     chunk rank() = [rank()*count, (rank()+1)*count) is the sum over ranks of
//     that chunk; the other chunks are unspecified.
//   allGather(buf, count): chunk rank() of buf is this rank's input;
//     afterwards every chunk holds its owner's input.
//   reduceScatterv(buf, counts): pieces of unequal length (ZeRO-2's
//     per-unit reduce-scatter, where a unit meets each rank's partition in
//     a piece of its own length): buf holds counts[0] + ... +
//     counts[size()-1] elements, rank q's piece at counts[0] + ... +
//     counts[q-1]; afterwards piece rank() is the sum over ranks of that
//     piece; the other pieces are unspecified.
//   allGatherv(buf, counts): the gather of such pieces (ZeRO-3's per-unit
//     gather of the params): piece rank() of buf is this rank's input;
//     afterwards every piece holds its owner's input. Copies only, so it is
//     exact in any mode.
//   allReduce(buf, n): sum over ranks, in place, on every rank.
//   broadcast(buf, n, root): root's buffer on every rank.
//
// Deterministic mode (CommOptions::deterministic, the train executable's
// --deterministic): every reduction sums in rank order, element by element,
// in the buffer's type: ((x0 + x1) + x2) + ... - the same arithmetic as one
// process adding the ranks' micro-batch gradients in turn, so an N-rank run
// is bitwise equal to a one-process run of N accumulated micro-batches.
// Otherwise the backend's fastest reduction is used.
//
// Failures: a collective that has not finished `timeoutSeconds` after it was
// queued (a rank died or hangs) makes wait() fail with a message naming the
// collective, its size and this rank; the executables then exit non-zero,
// and mpirun stops the other ranks. A rank that exits stops the job too.
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_COMM_H
#define BMRT_COMM_H

#include "bmrt/program.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace bmrt {

/// A queued collective; wait() on it exactly once.
struct CommHandle {
  int64_t id = -1;
};

struct CommOptions {
  bool deterministic = false;
  double timeoutSeconds = 300; // per collective; <= 0: wait forever
};

class Comm {
public:
  virtual ~Comm() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// "single", "mpi", "tcp" (and "nccl" later): for the banner and errors.
  virtual const char *backend() const = 0;
  virtual bool deterministic() const = 0;

  // DType F32, F64 or I32 (sums of I32 are exact in any order).
  virtual CommHandle allReduce(void *buf, int64_t n, DType dtype) = 0;
  virtual CommHandle reduceScatter(void *buf, int64_t count, DType dtype) = 0;
  virtual CommHandle allGather(void *buf, int64_t count, DType dtype) = 0;
  /// `counts` holds size() entries and is copied at issue. A backend
  /// without it fails naming the collective: this default.
  virtual CommHandle reduceScatterv(void *buf, const int64_t *counts, DType dtype);
  /// Likewise: `counts` holds size() entries, copied at issue; NCCL fails.
  virtual CommHandle allGatherv(void *buf, const int64_t *counts, DType dtype);
  virtual CommHandle broadcast(void *buf, int64_t n, DType dtype, int root) = 0;
  /// Blocks until the collective is done; fails (bmrt::Error) on timeout or
  /// a backend error, naming the collective.
  virtual void wait(CommHandle h) = 0;
  /// Every rank reaches this point (fails on timeout like wait()).
  virtual void barrier() = 0;

  // Blocking conveniences over allReduce/broadcast for the app's scalars
  // (the step's target count, its loss, an "every rank is fine" vote).
  double sum(double x);
  int64_t sum(int64_t x);
  double max(double x);
  /// Root's string on every rank (a checkpoint path chosen by rank 0).
  std::string broadcastString(const std::string &s, int root);

  /// Collectives issued by one entry and waited by a later one (the
  /// backward's per-layer gradient all-reduces, waited by the optimizer
  /// step): defer(h) keeps h, waitDeferred() waits for all of them in issue
  /// order (none: returns at once).
  void defer(CommHandle h) { deferred_.push_back(h); }
  void waitDeferred();
  bool hasDeferred() const { return !deferred_.empty(); }

  /// Collectives issued by one loop iteration for a later one (ZeRO-3's
  /// gather of the next layer): hold(key, tag, h) keeps h under `key` (one
  /// per key; a second fails), take(key, tag, h) hands it back and forgets
  /// it; false if nothing is held under `key`, a failure if what is held
  /// has another `tag` (the layer it gathers).
  void hold(int64_t key, int64_t tag, CommHandle h);
  bool take(int64_t key, int64_t tag, CommHandle &h);

private:
  struct Held {
    int64_t key, tag;
    CommHandle handle;
  };
  std::vector<CommHandle> deferred_;
  std::vector<Held> held_;
};

/// The communicator of this process, chosen from the environment:
///  - launched by mpirun (OMPI_COMM_WORLD_SIZE / PMIX_RANK set): MPI over
///    MPI_COMM_WORLD, with a progress thread;
///  - torchrun-style RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT set
///    (no mpirun): TCP sockets, every rank connected to rank 0, which
///    reduces in rank order (always deterministic; for a few ranks);
///  - otherwise a single process (size 1; collectives complete at once).
/// Fails with a clear message if the environment asks for a backend this
/// build lacks. Finalizes the backend when destroyed.
std::unique_ptr<Comm> openComm(const CommOptions &options);

/// The communicator generated code uses (Context::comm); fails if the app
/// did not set one.
Comm &commOf(Context &ctx);

/// commOf(ctx).wait(h), its time counted as KernelKind::Comm in --profile.
inline void commWait(Context &ctx, CommHandle h) {
  ProfileScope profile(ctx, KernelKind::Comm);
  commOf(ctx).wait(h);
}

/// Generated code's Comm::defer / Comm::waitDeferred (the waits counted as
/// KernelKind::Comm in --profile).
inline void commDefer(Context &ctx, CommHandle h) { commOf(ctx).defer(h); }
inline void commWaitDeferred(Context &ctx) {
  ProfileScope profile(ctx, KernelKind::Comm);
  commOf(ctx).waitDeferred();
}

/// A single process: every collective is the identity and completes at once.
std::unique_ptr<Comm> makeSingleComm(const CommOptions &options);

/// Sums `ranks` contributions laid out back to back (`src` holds ranks * n
/// elements, contribution r at r * n) in rank order into dst[0, n):
/// dst = ((src_0 + src_1) + src_2) + ... - the deterministic reduction every
/// backend uses (exposed for the backends and their tests).
void sumInRankOrder(void *dst, const void *src, int ranks, int64_t n, DType dtype);

} // namespace bmrt

#endif // BMRT_COMM_H
