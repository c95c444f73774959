//===- comm/queued_comm.h - The progress thread of the host backends -----===//
//
// MPI and TCP run their collectives the same way: issuing one only queues
// it; one progress thread per process executes the queue in issue order
// (so every rank executes the same sequence, and MPI is called from one
// thread at a time: MPI_THREAD_SERIALIZED); wait() sleeps on a condition
// variable until the collective is done, its deadline passes, or the
// progress thread reports an error.
//
// A collective's deadline is its issue time + CommOptions::timeoutSeconds.
// A missed deadline or an error breaks the communicator for good: later
// collectives fail at once with the first error (a rank cannot know how far
// the others got, so there is nothing safe to resume).
//
// Teardown has two paths. The clean one drains the queue and joins the
// thread, then the backend finalizes. On the failure path (the communicator
// broke, or an exception is unwinding through its owner) the progress thread
// may be inside a collective that never ends, so the backend either unblocks
// it (TCP: shut the sockets down) and joins, or leaks the queue and the
// thread on purpose (MPI: there is no way to cancel a collective) - the
// process is about to exit non-zero and the launcher stops the others.
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_COMM_QUEUED_COMM_H
#define BMRT_COMM_QUEUED_COMM_H

#include "comm/comm_internal.h"

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

namespace bmrt {

using CommClock = std::chrono::steady_clock;

/// One queued collective, as the progress thread sees it.
struct CommOp {
  int64_t id = 0; // issue order, from 0; also the TCP backend's sequence number
  CommOpKind kind = CommOpKind::Barrier;
  void *buf = nullptr;
  int64_t n = 0; // AllReduce/Broadcast: elements; ReduceScatter/AllGather: per rank;
                 // ReduceScatterV/AllGatherV: all pieces together
  std::vector<int64_t> counts, displs; // ReduceScatterV/AllGatherV: each rank's piece
  DType dtype = DType::F32;
  int root = 0;
  bool hasDeadline = false;
  CommClock::time_point deadline{};
  std::string what; // describeCommOp(...), for messages
};

/// The queue and its progress thread. `run` executes one collective on the
/// progress thread and throws bmrt::Error on failure.
class CommQueue {
public:
  using Runner = std::function<void(const CommOp &)>;
  /// `grace`: how long wait() keeps waiting past a deadline for the progress
  /// thread's own, more specific, error (TCP's I/O names the peer).
  CommQueue(int rank, double timeoutSeconds, double graceSeconds, Runner run);
  ~CommQueue();
  CommQueue(const CommQueue &) = delete;
  CommQueue &operator=(const CommQueue &) = delete;

  CommHandle push(CommOpKind kind, void *buf, int64_t n, DType dtype, int root, int size,
                  std::vector<int64_t> counts = {});
  void wait(CommHandle h);

  /// Teardown: waits (up to the timeout) until every queued collective has
  /// run. True when all did and none failed.
  bool drain();
  /// Stops and joins the progress thread (it must not be stuck).
  void stop();
  /// Failure path: tells the thread to stop and detaches it. The caller
  /// must then leak this queue (the thread still uses it).
  void detach();

private:
  void loop();

  struct Pending {
    bool hasDeadline;
    CommClock::time_point deadline;
    std::string what;
  };

  const int rank_;
  const double timeoutSeconds_;
  const double graceSeconds_;
  Runner run_;

  std::mutex mu_;
  std::condition_variable cv_;   // the thread: new work, stop
  std::condition_variable done_; // waiters: progress, failure
  std::deque<CommOp> queue_;
  std::unordered_map<int64_t, Pending> pending_; // issued, not yet waited
  int64_t nextId_ = 0;
  int64_t doneThrough_ = -1; // collectives finish in order: all ids <= this are done
  bool busy_ = false;        // the thread is running a collective
  bool stop_ = false;
  bool failed_ = false;
  std::string error_; // the first failure
  std::thread thread_;
};

/// A Comm whose collectives go through a CommQueue: the MPI and TCP
/// backends set up their transport, then call startQueue().
class QueuedComm : public Comm {
public:
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  bool deterministic() const override { return deterministic_; }

  CommHandle allReduce(void *buf, int64_t n, DType dtype) override;
  CommHandle reduceScatter(void *buf, int64_t count, DType dtype) override;
  CommHandle allGather(void *buf, int64_t count, DType dtype) override;
  CommHandle reduceScatterv(void *buf, const int64_t *counts, DType dtype) override;
  CommHandle allGatherv(void *buf, const int64_t *counts, DType dtype) override;
  CommHandle broadcast(void *buf, int64_t n, DType dtype, int root) override;
  void wait(CommHandle h) override;
  void barrier() override;

protected:
  QueuedComm(int rank, int size, bool deterministic, double timeoutSeconds)
      : rank_(rank), size_(size), deterministic_(deterministic),
        timeoutSeconds_(timeoutSeconds) {}
  void startQueue(double graceSeconds, CommQueue::Runner run);
  /// Teardown (the derived destructor calls these): true on the clean path,
  /// i.e. no exception is unwinding, nothing failed and the queue drained.
  bool finishQueue();
  void stopQueue();    // after finishQueue() or after unblocking the thread
  void abandonQueue(); // failure path where the thread cannot be unblocked

  const int rank_;
  const int size_;
  const bool deterministic_;
  const double timeoutSeconds_;

private:
  CommHandle issue(CommOpKind kind, void *buf, int64_t n, DType dtype, int root);
  CommHandle issuePieces(CommOpKind kind, void *buf, const int64_t *counts, DType dtype);
  CommQueue *queue_ = nullptr; // leaked by abandonQueue()
};

} // namespace bmrt

#endif // BMRT_COMM_QUEUED_COMM_H
