//===- comm/queued_comm.cpp - The progress thread of the host backends ---===//
//
// See queued_comm.h. One mutex guards the queue and the progress counters;
// the progress thread holds it only to take work and report results, never
// while a collective runs.
//
//===----------------------------------------------------------------------===//
#include "comm/queued_comm.h"

#include <cstdio>
#include <exception>

namespace bmrt {

static std::string secondsText(double s) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", s);
  return text;
}

CommQueue::CommQueue(int rank, double timeoutSeconds, double graceSeconds, Runner run)
    : rank_(rank), timeoutSeconds_(timeoutSeconds), graceSeconds_(graceSeconds),
      run_(std::move(run)) {
  thread_ = std::thread([this] { loop(); });
}

CommQueue::~CommQueue() {
  // stop() joined or detach() let go; a joinable thread here would terminate().
  if (thread_.joinable())
    stop();
}

CommHandle CommQueue::push(CommOpKind kind, void *buf, int64_t n, DType dtype, int root,
                           int size, std::vector<int64_t> counts) {
  CommOp op;
  if (!counts.empty()) {
    op.displs.assign(counts.size(), 0);
    for (size_t q = 1; q < counts.size(); ++q)
      op.displs[q] = op.displs[q - 1] + counts[q - 1];
    op.counts = std::move(counts);
  }
  op.kind = kind;
  op.buf = buf;
  op.n = n;
  op.dtype = dtype;
  op.root = root;
  op.what = describeCommOp(kind, n, dtype, size);
  if (timeoutSeconds_ > 0) {
    op.hasDeadline = true;
    op.deadline = CommClock::now() + std::chrono::duration_cast<CommClock::duration>(
                                         std::chrono::duration<double>(timeoutSeconds_));
  }
  int64_t id;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (failed_)
      fail(error_ + " (an earlier collective failed; this " + op.what + " was not run)");
    if (stop_)
      fail("rank " + std::to_string(rank_) + ": " + op.what +
           " issued on a communicator that is shutting down");
    id = op.id = nextId_++;
    pending_[op.id] = Pending{op.hasDeadline, op.deadline, op.what};
    queue_.push_back(std::move(op));
  }
  cv_.notify_one();
  return CommHandle{id};
}

void CommQueue::wait(CommHandle h) {
  std::unique_lock<std::mutex> lock(mu_);
  auto it = pending_.find(h.id);
  if (it == pending_.end())
    fail("rank " + std::to_string(rank_) + ": wait on comm handle " + std::to_string(h.id) +
         ", which was not issued or was already waited");
  Pending p = it->second;
  pending_.erase(it);
  auto settled = [&] { return doneThrough_ >= h.id || failed_; };
  if (p.hasDeadline) {
    auto until = p.deadline + std::chrono::duration_cast<CommClock::duration>(
                                  std::chrono::duration<double>(graceSeconds_));
    if (!done_.wait_until(lock, until, settled)) {
      failed_ = true;
      error_ = "rank " + std::to_string(rank_) + ": " + p.what + " did not finish in " +
               secondsText(timeoutSeconds_) + " s (another rank died or hangs); stopping";
      cv_.notify_all();
      fail(error_);
    }
  } else {
    done_.wait(lock, settled);
  }
  if (doneThrough_ >= h.id)
    return; // finished (collectives finish in order, so before any failure)
  fail(error_);
}

void CommQueue::loop() {
  for (;;) {
    CommOp op;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stop_ || (!queue_.empty() && !failed_); });
      if (stop_ || failed_)
        return; // nothing that is still queued may run (see queued_comm.h)
      op = std::move(queue_.front());
      queue_.pop_front();
      busy_ = true;
    }
    std::string error;
    try {
      run_(op);
    } catch (const std::exception &e) {
      error = e.what();
      if (error.empty())
        error = "rank " + std::to_string(rank_) + ": " + op.what + " failed";
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      busy_ = false;
      if (error.empty()) {
        doneThrough_ = op.id;
      } else if (!failed_) {
        failed_ = true;
        error_ = error;
      }
    }
    done_.notify_all();
  }
}

bool CommQueue::drain() {
  std::unique_lock<std::mutex> lock(mu_);
  auto idle = [&] { return failed_ || (queue_.empty() && !busy_); };
  if (timeoutSeconds_ > 0) {
    auto until = CommClock::now() + std::chrono::duration_cast<CommClock::duration>(
                                        std::chrono::duration<double>(timeoutSeconds_));
    if (!done_.wait_until(lock, until, idle)) {
      failed_ = true;
      error_ = "rank " + std::to_string(rank_) + ": collectives still running at exit";
      return false;
    }
  } else {
    done_.wait(lock, idle);
  }
  return !failed_;
}

void CommQueue::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable())
    thread_.join();
}

void CommQueue::detach() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable())
    thread_.detach();
}

// --- QueuedComm ------------------------------------------------------------

void QueuedComm::startQueue(double graceSeconds, CommQueue::Runner run) {
  queue_ = new CommQueue(rank_, timeoutSeconds_, graceSeconds, std::move(run));
}

CommHandle QueuedComm::issue(CommOpKind kind, void *buf, int64_t n, DType dtype, int root) {
  checkCommArgs(kind, buf, n, dtype, root, rank_, size_);
  return queue_->push(kind, buf, n, dtype, root, size_);
}

CommHandle QueuedComm::allReduce(void *buf, int64_t n, DType dtype) {
  return issue(CommOpKind::AllReduce, buf, n, dtype, 0);
}
CommHandle QueuedComm::reduceScatter(void *buf, int64_t count, DType dtype) {
  return issue(CommOpKind::ReduceScatter, buf, count, dtype, 0);
}
CommHandle QueuedComm::allGather(void *buf, int64_t count, DType dtype) {
  return issue(CommOpKind::AllGather, buf, count, dtype, 0);
}
CommHandle QueuedComm::reduceScatterv(void *buf, const int64_t *counts, DType dtype) {
  return issuePieces(CommOpKind::ReduceScatterV, buf, counts, dtype);
}
CommHandle QueuedComm::allGatherv(void *buf, const int64_t *counts, DType dtype) {
  return issuePieces(CommOpKind::AllGatherV, buf, counts, dtype);
}
CommHandle QueuedComm::issuePieces(CommOpKind kind, void *buf, const int64_t *counts,
                                   DType dtype) {
  const int64_t total = checkPieceCounts(kind, counts, rank_, size_);
  checkCommArgs(kind, buf, total, dtype, 0, rank_, size_);
  return queue_->push(kind, buf, total, dtype, 0, size_,
                      std::vector<int64_t>(counts, counts + size_));
}
CommHandle QueuedComm::broadcast(void *buf, int64_t n, DType dtype, int root) {
  return issue(CommOpKind::Broadcast, buf, n, dtype, root);
}
void QueuedComm::wait(CommHandle h) { queue_->wait(h); }
void QueuedComm::barrier() { wait(issue(CommOpKind::Barrier, nullptr, 0, DType::I32, 0)); }

bool QueuedComm::finishQueue() {
  // An exception unwinding through the owner means this rank is leaving
  // early: the others may be inside a collective this rank will never join,
  // so waiting for anything (the queue, MPI_Finalize) could hang.
  if (std::uncaught_exceptions() > 0)
    return false;
  return queue_->drain();
}

void QueuedComm::stopQueue() {
  queue_->stop();
  delete queue_;
  queue_ = nullptr;
}

void QueuedComm::abandonQueue() {
  queue_->detach();
  queue_ = nullptr; // leaked on purpose: the detached thread still uses it
}

} // namespace bmrt
