//===- comm/mpi_comm.cpp - Collectives over MPI_COMM_WORLD ---------------===//
//
// The backend mpirun launches (bmrt/comm.h). MPI is initialized on the
// thread that opens the communicator with MPI_THREAD_SERIALIZED: after that
// only the progress thread (queued_comm.h) calls MPI, one collective at a
// time, on a duplicate of MPI_COMM_WORLD whose error handler returns codes
// (each is checked and named) instead of aborting.
//
// Deterministic mode never lets MPI add: a reduce-scatter is an
// MPI_Alltoall of the chunks (rank r receives everybody's chunk r, back to
// back, in rank order) and sumInRankOrder; an all-reduce is that
// reduce-scatter over ceil(n / size)-element chunks (the last ones shorter
// or empty: MPI_Alltoallv with the exact lengths, so nothing is padded)
// followed by an MPI_Allgatherv. Otherwise MPI_Allreduce adds in whatever
// order it likes, and a reduce-scatter is a ring of MPI_Sendrecv (one
// chunk of scratch; MPI's in-place reduce-scatter copies the whole buffer).
//
// Teardown: see queued_comm.h. On the clean path MPI_Finalize runs under a
// watchdog (Open MPI's finalize waits for every rank: a rank that never
// gets there would hang it). On the failure path MPI is neither finalized
// nor aborted: the process exits non-zero with its own error message, and
// mpirun then kills the other ranks.
//
//===----------------------------------------------------------------------===//
#include "comm/queued_comm.h"

// Only MPI's C API: without these, mpi.h in C++ pulls in the deprecated C++
// bindings, which live in a library (libmpi_cxx) we do not link.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace bmrt {
namespace {

static_assert(sizeof(int) == sizeof(int32_t), "MPI_INT carries I32");

/// What the progress thread works with; leaked with the queue on the
/// failure path (a collective may still be using the scratch buffer).
struct MpiWorld {
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0;
  int size = 1;
  bool deterministic = false;
  std::vector<char> scratch; // deterministic mode: every rank's chunk, back to back
  std::vector<int> sendCounts, sendDispls, recvCounts, recvDispls;
};

std::string mpiErrorText(int rc) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(rc, text, &length) != MPI_SUCCESS)
    return "MPI error code " + std::to_string(rc);
  return std::string(text, (size_t)length);
}

void check(const MpiWorld &w, int rc, const char *call, const CommOp &op) {
  if (rc != MPI_SUCCESS)
    fail("rank " + std::to_string(w.rank) + ": " + call + " failed during " + op.what + ": " +
         mpiErrorText(rc));
}

/// MPI counts and displacements are ints.
int mpiInt(const MpiWorld &w, int64_t n, const CommOp &op) {
  if (n > INT_MAX)
    fail("rank " + std::to_string(w.rank) + ": " + op.what + ": the MPI backend moves at most " +
         std::to_string(INT_MAX) + " elements per rank in one collective; split the buffer");
  return (int)n;
}

MPI_Datatype mpiType(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return MPI_FLOAT;
  case DType::F64:
    return MPI_DOUBLE;
  case DType::I32:
    return MPI_INT;
  }
  fail("mpi: unknown dtype " + std::to_string((int)dtype));
}

void deterministicReduceScatter(MpiWorld &w, const CommOp &op, MPI_Datatype type) {
  size_t bytes = commDTypeBytes(op.dtype);
  int count = mpiInt(w, op.n, op);
  w.scratch.resize((size_t)w.size * (size_t)count * bytes);
  check(w, MPI_Alltoall(op.buf, count, type, w.scratch.data(), count, type, w.comm),
        "MPI_Alltoall", op);
  char *mine = (char *)op.buf + (size_t)w.rank * (size_t)count * bytes;
  sumInRankOrder(mine, w.scratch.data(), w.size, count, op.dtype);
}

template <class T> void addChunk(void *dst, const void *src, int64_t n) {
  T *d = (T *)dst;
  const T *s = (const T *)src;
  for (int64_t i = 0; i < n; ++i)
    d[i] += s[i];
}

/// Fast mode's reduce-scatter: a ring in place, with one chunk of scratch.
/// MPI_Reduce_scatter_block with MPI_IN_PLACE copies the whole buffer
/// through a temporary in Open MPI 4.1 (measured: it cost ZeRO-1 its
/// memory saving on GPT-2 small). Step s sends chunk (rank - s - 1) to the
/// next rank and adds chunk (rank - s - 2) from the previous one; after
/// size - 1 steps chunk `rank` holds the sum.
void ringReduceScatter(MpiWorld &w, const CommOp &op, MPI_Datatype type) {
  const size_t bytes = commDTypeBytes(op.dtype);
  const int count = mpiInt(w, op.n, op);
  const size_t chunkBytes = (size_t)count * bytes;
  w.scratch.resize(chunkBytes);
  const int next = (w.rank + 1) % w.size, prev = (w.rank + w.size - 1) % w.size;
  char *buf = (char *)op.buf;
  for (int s = 0; s < w.size - 1; ++s) {
    const int send = ((w.rank - s - 1) % w.size + w.size) % w.size;
    const int recv = ((w.rank - s - 2) % w.size + w.size) % w.size;
    check(w,
          MPI_Sendrecv(buf + (size_t)send * chunkBytes, count, type, next, 0, w.scratch.data(),
                       count, type, prev, 0, w.comm, MPI_STATUS_IGNORE),
          "MPI_Sendrecv", op);
    void *into = buf + (size_t)recv * chunkBytes;
    switch (op.dtype) {
    case DType::F32: addChunk<float>(into, w.scratch.data(), count); break;
    case DType::F64: addChunk<double>(into, w.scratch.data(), count); break;
    case DType::I32: addChunk<int32_t>(into, w.scratch.data(), count); break;
    }
  }
}

/// Pieces of unequal length (Comm::reduceScatterv). Deterministic: every
/// rank's piece `rank` arrives back to back (MPI_Alltoallv) and is summed in
/// rank order. Fast: MPI_Reduce_scatter leaves the piece at the start of
/// the buffer (in place), so it moves to its own place after.
void reduceScatterPieces(MpiWorld &w, const CommOp &op, MPI_Datatype type) {
  const size_t bytes = commDTypeBytes(op.dtype);
  const int mine = mpiInt(w, op.counts[(size_t)w.rank], op);
  char *own = (char *)op.buf + (size_t)op.displs[(size_t)w.rank] * bytes;
  w.sendCounts.assign((size_t)w.size, 0);
  w.sendDispls.assign((size_t)w.size, 0);
  for (int q = 0; q < w.size; ++q) {
    w.sendCounts[(size_t)q] = mpiInt(w, op.counts[(size_t)q], op);
    w.sendDispls[(size_t)q] = mpiInt(w, op.displs[(size_t)q], op);
  }
  if (!w.deterministic) {
    check(w,
          MPI_Reduce_scatter(MPI_IN_PLACE, op.buf, w.sendCounts.data(), type, MPI_SUM, w.comm),
          "MPI_Reduce_scatter", op);
    if (own != op.buf)
      std::memmove(own, op.buf, (size_t)mine * bytes);
    return;
  }
  w.recvCounts.assign((size_t)w.size, mine);
  w.recvDispls.assign((size_t)w.size, 0);
  for (int r = 0; r < w.size; ++r)
    w.recvDispls[(size_t)r] = mpiInt(w, (int64_t)r * mine, op);
  w.scratch.resize((size_t)w.size * (size_t)mine * bytes);
  check(w,
        MPI_Alltoallv(op.buf, w.sendCounts.data(), w.sendDispls.data(), type, w.scratch.data(),
                      w.recvCounts.data(), w.recvDispls.data(), type, w.comm),
        "MPI_Alltoallv", op);
  sumInRankOrder(own, w.scratch.data(), w.size, mine, op.dtype);
}

/// Pieces of unequal length (Comm::allGatherv), in place: copies only, so
/// the same in deterministic mode.
void allGatherPieces(MpiWorld &w, const CommOp &op, MPI_Datatype type) {
  w.recvCounts.assign((size_t)w.size, 0);
  w.recvDispls.assign((size_t)w.size, 0);
  for (int q = 0; q < w.size; ++q) {
    w.recvCounts[(size_t)q] = mpiInt(w, op.counts[(size_t)q], op);
    w.recvDispls[(size_t)q] = mpiInt(w, op.displs[(size_t)q], op);
  }
  check(w,
        MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, op.buf, w.recvCounts.data(),
                       w.recvDispls.data(), type, w.comm),
        "MPI_Allgatherv", op);
}

void deterministicAllReduce(MpiWorld &w, const CommOp &op, MPI_Datatype type) {
  size_t bytes = commDTypeBytes(op.dtype);
  int64_t n = op.n;
  int64_t chunk = (n + w.size - 1) / w.size;
  mpiInt(w, chunk * w.size, op);
  w.sendCounts.assign((size_t)w.size, 0);
  w.sendDispls.assign((size_t)w.size, 0);
  for (int j = 0; j < w.size; ++j) {
    int64_t lo = std::min(n, j * chunk);
    int64_t hi = std::min(n, lo + chunk);
    w.sendCounts[(size_t)j] = (int)(hi - lo);
    w.sendDispls[(size_t)j] = (int)lo;
  }
  int mine = w.sendCounts[(size_t)w.rank]; // may be 0 on the last ranks
  w.recvCounts.assign((size_t)w.size, mine);
  w.recvDispls.assign((size_t)w.size, 0);
  for (int r = 0; r < w.size; ++r)
    w.recvDispls[(size_t)r] = r * mine;
  w.scratch.resize((size_t)w.size * (size_t)mine * bytes);
  check(w,
        MPI_Alltoallv(op.buf, w.sendCounts.data(), w.sendDispls.data(), type, w.scratch.data(),
                      w.recvCounts.data(), w.recvDispls.data(), type, w.comm),
        "MPI_Alltoallv", op);
  char *own = (char *)op.buf + (size_t)w.sendDispls[(size_t)w.rank] * bytes;
  sumInRankOrder(own, w.scratch.data(), w.size, mine, op.dtype);
  check(w,
        MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, op.buf, w.sendCounts.data(),
                       w.sendDispls.data(), type, w.comm),
        "MPI_Allgatherv", op);
}

/// One collective, on the progress thread.
void runMpi(MpiWorld &w, const CommOp &op) {
  if (op.kind == CommOpKind::Barrier) {
    check(w, MPI_Barrier(w.comm), "MPI_Barrier", op);
    return;
  }
  if (op.n == 0)
    return; // every rank issued the same empty collective
  // One rank: every collective is the identity. Open MPI would still copy
  // through a temporary of the whole buffer (measured: +475 MiB of RSS for
  // GPT-2 small's in-place reduce-scatter under mpirun -np 1).
  if (w.size == 1)
    return;
  MPI_Datatype type = mpiType(op.dtype);
  int n = mpiInt(w, op.n, op);
  switch (op.kind) {
  case CommOpKind::AllReduce:
    if (w.deterministic)
      deterministicAllReduce(w, op, type);
    else
      check(w, MPI_Allreduce(MPI_IN_PLACE, op.buf, n, type, MPI_SUM, w.comm), "MPI_Allreduce",
            op);
    return;
  case CommOpKind::ReduceScatter:
    if (w.deterministic) {
      deterministicReduceScatter(w, op, type);
    } else {
      ringReduceScatter(w, op, type);
    }
    return;
  case CommOpKind::ReduceScatterV:
    reduceScatterPieces(w, op, type);
    return;
  case CommOpKind::AllGatherV:
    allGatherPieces(w, op, type);
    return;
  case CommOpKind::AllGather:
    check(w, MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, op.buf, n, type, w.comm),
          "MPI_Allgather", op);
    return;
  case CommOpKind::Broadcast:
    check(w, MPI_Bcast(op.buf, n, type, op.root, w.comm), "MPI_Bcast", op);
    return;
  case CommOpKind::Barrier:
    return;
  }
}

/// MPI_Finalize, or exit(1) with a message if it has not returned after
/// `seconds` (it waits for the other ranks, which may be gone or stuck).
void finalizeWithin(double seconds, int rank) {
  std::mutex mu;
  std::condition_variable cv;
  bool finished = false;
  std::thread watchdog;
  if (seconds > 0)
    watchdog = std::thread([&] {
      std::unique_lock<std::mutex> lock(mu);
      if (!cv.wait_for(lock, std::chrono::duration<double>(seconds), [&] { return finished; })) {
        std::fprintf(stderr,
                     "error: rank %d: MPI_Finalize did not finish in %g s (another rank died or "
                     "hangs); exiting\n",
                     rank, seconds);
        std::fflush(stderr);
        std::_Exit(1);
      }
    });
  int rc = MPI_Finalize();
  {
    std::lock_guard<std::mutex> lock(mu);
    finished = true;
  }
  cv.notify_all();
  if (watchdog.joinable())
    watchdog.join();
  if (rc != MPI_SUCCESS) // a destructor cannot throw; say it at least
    std::fprintf(stderr, "warning: rank %d: MPI_Finalize failed (MPI error code %d)\n", rank, rc);
}

class MpiComm final : public QueuedComm {
public:
  MpiComm(const CommOptions &options, MpiWorld *world)
      : QueuedComm(world->rank, world->size, options.deterministic, commTimeoutSeconds(options)),
        world_(world) {
    startQueue(/*graceSeconds=*/0, [world](const CommOp &op) { runMpi(*world, op); });
  }

  ~MpiComm() override {
    if (!finishQueue()) {
      abandonQueue();
      return; // world_ is leaked with the queue; MPI stays initialized (see top)
    }
    stopQueue();
    int rc = MPI_Comm_free(&world_->comm);
    if (rc != MPI_SUCCESS)
      std::fprintf(stderr, "warning: rank %d: MPI_Comm_free failed: %s\n", rank_,
                   mpiErrorText(rc).c_str());
    finalizeWithin(timeoutSeconds_, rank_);
    delete world_;
  }

  const char *backend() const override { return "mpi"; }

private:
  MpiWorld *world_;
};

void checkSetup(int rc, const char *call) {
  if (rc != MPI_SUCCESS)
    fail(std::string("mpi: ") + call + " failed: " + mpiErrorText(rc));
}

const char *threadLevelName(int level) {
  switch (level) {
  case MPI_THREAD_SINGLE:
    return "MPI_THREAD_SINGLE";
  case MPI_THREAD_FUNNELED:
    return "MPI_THREAD_FUNNELED";
  case MPI_THREAD_SERIALIZED:
    return "MPI_THREAD_SERIALIZED";
  case MPI_THREAD_MULTIPLE:
    return "MPI_THREAD_MULTIPLE";
  }
  return "an unknown thread level";
}

} // namespace

std::unique_ptr<Comm> makeMpiComm(const CommOptions &options) {
  int initialized = 0;
  checkSetup(MPI_Initialized(&initialized), "MPI_Initialized");
  if (initialized)
    fail("mpi: MPI is already initialized in this process (open one communicator per process)");
  // SERIALIZED: the progress thread, not the thread that initializes, calls
  // MPI, never two threads at once.
  int provided = MPI_THREAD_SINGLE;
  checkSetup(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided),
             "MPI_Init_thread");
  if (provided < MPI_THREAD_SERIALIZED)
    fail(std::string("mpi: MPI_Init_thread provides ") + threadLevelName(provided) +
         "; the MPI backend needs MPI_THREAD_SERIALIZED (its progress thread calls MPI)");
  checkSetup(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN),
             "MPI_Comm_set_errhandler(MPI_COMM_WORLD)");
  auto world = std::make_unique<MpiWorld>();
  world->deterministic = options.deterministic;
  checkSetup(MPI_Comm_dup(MPI_COMM_WORLD, &world->comm), "MPI_Comm_dup(MPI_COMM_WORLD)");
  checkSetup(MPI_Comm_set_errhandler(world->comm, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  checkSetup(MPI_Comm_rank(world->comm, &world->rank), "MPI_Comm_rank");
  checkSetup(MPI_Comm_size(world->comm, &world->size), "MPI_Comm_size");
  return std::make_unique<MpiComm>(options, world.release());
}

} // namespace bmrt
