//===- cuda/nccl_comm.cpp - Collectives between GPUs over NCCL ------------===//
//
// nccl_comm.h has the contract. Layout conventions are NCCL's in-place ones
// (bmrt/comm.h chose them for that): reduce-scatter's output chunk and
// all-gather's input chunk are this rank's slice of the one buffer.
//
//===----------------------------------------------------------------------===//
#include "cuda/nccl_comm.h"

#include "comm/comm_internal.h"
#include "cuda/check.h"

#include <nccl.h>

#include <chrono>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

namespace bmrt::cuda {
namespace {

ncclDataType_t ncclTypeOf(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return ncclFloat32;
  case DType::F64:
    return ncclFloat64;
  case DType::I32:
    return ncclInt32;
  }
  fail("nccl: unknown dtype " + std::to_string((int)dtype));
}

// Device memory (NCCL's) or host memory (the bootstrap's)?
bool isDevicePointer(const void *p) {
  cudaPointerAttributes attr;
  BMRT_CUDA_CHECK(cudaPointerGetAttributes(&attr, p));
  return attr.type == cudaMemoryTypeDevice || attr.type == cudaMemoryTypeManaged;
}

class NcclComm final : public Comm {
public:
  NcclComm(Device &dev, std::unique_ptr<Comm> bootstrap, const CommOptions &options)
      : dev_(dev), boot_(std::move(bootstrap)), timeout_(commTimeoutSeconds(options)) {
    ncclUniqueId id;
    if (boot_->rank() == 0)
      BMRT_NCCL_CHECK(ncclGetUniqueId(&id));
    static_assert(sizeof id % sizeof(int32_t) == 0, "ncclUniqueId is whole int32 words");
    boot_->wait(boot_->broadcast(&id, sizeof id / sizeof(int32_t), DType::I32, 0));
    // Blocks until every rank has joined; they all just answered the
    // bootstrap's broadcast, so none is missing.
    BMRT_CUDA_CHECK(cudaSetDevice(dev_.index));
    BMRT_NCCL_CHECK(ncclCommInitRank(&comm_, boot_->size(), id, boot_->rank()));
  }

  ~NcclComm() override {
    for (auto &[id, op] : ops_)
      if (op.event)
        cudaEventDestroy(op.event);
    for (cudaEvent_t e : freeEvents_)
      cudaEventDestroy(e);
    if (comm_) {
      if (aborted_)
        return;
      ncclCommFinalize(comm_);
      ncclCommDestroy(comm_);
    }
  }

  int rank() const override { return boot_->rank(); }
  int size() const override { return boot_->size(); }
  const char *backend() const override { return "nccl"; }
  bool deterministic() const override { return false; }

  CommHandle allReduce(void *buf, int64_t n, DType dtype) override {
    return issue(CommOpKind::AllReduce, buf, n, dtype, 0);
  }
  CommHandle reduceScatter(void *buf, int64_t count, DType dtype) override {
    return issue(CommOpKind::ReduceScatter, buf, count, dtype, 0);
  }
  CommHandle allGather(void *buf, int64_t count, DType dtype) override {
    return issue(CommOpKind::AllGather, buf, count, dtype, 0);
  }
  CommHandle broadcast(void *buf, int64_t n, DType dtype, int root) override {
    return issue(CommOpKind::Broadcast, buf, n, dtype, root);
  }
  CommHandle reduceScatterv(void *buf, const int64_t *counts, DType dtype) override {
    return issuePieces(CommOpKind::ReduceScatterV, buf, counts, dtype);
  }
  CommHandle allGatherv(void *buf, const int64_t *counts, DType dtype) override {
    return issuePieces(CommOpKind::AllGatherV, buf, counts, dtype);
  }

  void wait(CommHandle h) override {
    auto it = ops_.find(h.id);
    if (it == ops_.end())
      fail("rank " + std::to_string(rank()) + ": nccl: wait on an unknown or already waited "
                                             "collective (handle " +
           std::to_string(h.id) + ")");
    Op op = it->second;
    ops_.erase(it);
    if (!op.event) { // a host buffer: the bootstrap's own collective
      boot_->wait(op.host);
      return;
    }
    checkAsyncError(op.what);
    // The compute stream's later work sees the result; the host goes on.
    BMRT_CUDA_CHECK(cudaStreamWaitEvent(dev_.compute, op.event, 0));
    freeEvents_.push_back(op.event);
  }

  void barrier() override {
    drainCommStream();
    boot_->barrier();
  }

private:
  struct Op {
    cudaEvent_t event = nullptr; // null: a host collective (host handle below)
    CommHandle host;
    std::string what;            // "all-reduce of 1234 floats"
  };

  CommHandle issue(CommOpKind kind, void *buf, int64_t n, DType dtype, int root) {
    checkCommArgs(kind, buf, n, dtype, root, rank(), size());
    Op op;
    op.what = describeCommOp(kind, n, dtype, size());
    if (n > 0 && !isDevicePointer(buf)) {
      switch (kind) {
      case CommOpKind::AllReduce:
        op.host = boot_->allReduce(buf, n, dtype);
        break;
      case CommOpKind::ReduceScatter:
        op.host = boot_->reduceScatter(buf, n, dtype);
        break;
      case CommOpKind::AllGather:
        op.host = boot_->allGather(buf, n, dtype);
        break;
      default:
        op.host = boot_->broadcast(buf, n, dtype, root);
      }
      return remember(std::move(op));
    }
    // After the compute stream's work so far (it wrote buf).
    orderAfter(dev_, dev_.comm, dev_.compute);
    const ncclDataType_t type = ncclTypeOf(dtype);
    const size_t chunk = (size_t)n * commDTypeBytes(dtype);
    char *bytes = (char *)buf;
    switch (kind) {
    case CommOpKind::AllReduce:
      BMRT_NCCL_CHECK(ncclAllReduce(buf, buf, (size_t)n, type, ncclSum, comm_, dev_.comm));
      break;
    case CommOpKind::ReduceScatter:
      BMRT_NCCL_CHECK(ncclReduceScatter(buf, bytes + rank() * chunk, (size_t)n, type, ncclSum,
                                        comm_, dev_.comm));
      break;
    case CommOpKind::AllGather:
      BMRT_NCCL_CHECK(ncclAllGather(bytes + rank() * chunk, buf, (size_t)n, type, comm_,
                                    dev_.comm));
      break;
    default:
      BMRT_NCCL_CHECK(ncclBroadcast(buf, buf, (size_t)n, type, root, comm_, dev_.comm));
    }
    op.event = takeEvent();
    BMRT_CUDA_CHECK(cudaEventRecord(op.event, dev_.comm));
    return remember(std::move(op));
  }

  // reduceScatterv and allGatherv: pieces of unequal length (ZeRO-2's
  // gradients, ZeRO-3's params), which NCCL has no collective for. Each
  // non-empty piece is one in-place collective rooted at the piece's owner -
  // an ncclReduce (the owner gets the sum) or an ncclBroadcast (everyone
  // gets the owner's piece) - fused by the group into one launch on the
  // comm stream. Every rank issues the same calls (counts are alike on all
  // ranks), empty pieces none.
  CommHandle issuePieces(CommOpKind kind, void *buf, const int64_t *counts, DType dtype) {
    const int64_t total = checkPieceCounts(kind, counts, rank(), size());
    checkCommArgs(kind, buf, total, dtype, 0, rank(), size());
    Op op;
    op.what = describeCommOp(kind, total, dtype, size());
    if (total > 0 && !isDevicePointer(buf)) {
      op.host = kind == CommOpKind::ReduceScatterV ? boot_->reduceScatterv(buf, counts, dtype)
                                                   : boot_->allGatherv(buf, counts, dtype);
      return remember(std::move(op));
    }
    // After the compute stream's work so far (it wrote buf: the backward's
    // gradients, or gather_unit's copy of this rank's piece).
    orderAfter(dev_, dev_.comm, dev_.compute);
    const bool reduce = kind == CommOpKind::ReduceScatterV;
    const ncclDataType_t type = ncclTypeOf(dtype);
    char *piece = (char *)buf;
    BMRT_NCCL_CHECK(ncclGroupStart());
    for (int q = 0; q < size(); ++q) {
      if (counts[q] > 0) {
        const ncclResult_t r =
            reduce ? ncclReduce(piece, piece, (size_t)counts[q], type, ncclSum, q, comm_, dev_.comm)
                   : ncclBroadcast(piece, piece, (size_t)counts[q], type, q, comm_, dev_.comm);
        if (r != ncclSuccess) {
          ncclGroupEnd(); // the group is closed before the failure is reported
          checkNccl((int)r,
                    reduce
                        ? "ncclReduce(piece, piece, counts[q], type, ncclSum, q, comm_, dev_.comm)"
                        : "ncclBroadcast(piece, piece, counts[q], type, q, comm_, dev_.comm)",
                    __FILE__, __LINE__);
        }
      }
      piece += (size_t)counts[q] * commDTypeBytes(dtype);
    }
    BMRT_NCCL_CHECK(ncclGroupEnd());
    op.event = takeEvent();
    BMRT_CUDA_CHECK(cudaEventRecord(op.event, dev_.comm));
    return remember(std::move(op));
  }

  CommHandle remember(Op op) {
    CommHandle h{next_++};
    ops_.emplace(h.id, std::move(op));
    return h;
  }

  cudaEvent_t takeEvent() {
    if (!freeEvents_.empty()) {
      cudaEvent_t e = freeEvents_.back();
      freeEvents_.pop_back();
      return e;
    }
    cudaEvent_t e;
    BMRT_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    return e;
  }

  void checkAsyncError(const std::string &what) {
    ncclResult_t state = ncclSuccess;
    BMRT_NCCL_CHECK(ncclCommGetAsyncError(comm_, &state));
    if (state != ncclSuccess && state != ncclInProgress)
      fail("rank " + std::to_string(rank()) + ": " + what + " failed in NCCL: " +
           ncclGetErrorString(state));
  }

  // Polls the comm stream until idle; aborts NCCL after the timeout.
  void drainCommStream() {
    using Clock = std::chrono::steady_clock;
    const auto start = Clock::now();
    for (;;) {
      cudaError_t s = cudaStreamQuery(dev_.comm);
      if (s == cudaSuccess)
        return;
      if (s != cudaErrorNotReady)
        BMRT_CUDA_CHECK(s);
      checkAsyncError("a collective");
      const double waited = std::chrono::duration<double>(Clock::now() - start).count();
      if (timeout_ > 0 && waited > timeout_) {
        ncclCommAbort(comm_);
        aborted_ = true;
        // The oldest device collective not yet waited for names the hang.
        const Op *oldest = nullptr;
        int64_t oldestId = 0;
        for (const auto &[id, op] : ops_)
          if (op.event && (!oldest || id < oldestId))
            oldest = &op, oldestId = id;
        const std::string pending =
            oldest ? "oldest: " + oldest->what : std::string("already waited for");
        fail("rank " + std::to_string(rank()) + ": barrier: the NCCL collectives (" +
             pending +
             ") did not finish within " + std::to_string((int64_t)timeout_) +
             " s (a rank died or hangs); NCCL was aborted");
      }
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }

  Device &dev_;
  std::unique_ptr<Comm> boot_;
  double timeout_;
  ncclComm_t comm_ = nullptr;
  bool aborted_ = false;
  int64_t next_ = 0;
  std::unordered_map<int64_t, Op> ops_;
  std::vector<cudaEvent_t> freeEvents_;
};

} // namespace

std::unique_ptr<Comm> makeNcclComm(Device &dev, std::unique_ptr<Comm> bootstrap,
                                   const CommOptions &options) {
  if (options.deterministic)
    fail("--deterministic is not available on the cuda backend: NCCL does not sum in rank "
         "order (drop the flag, or run the job built with --target=host)");
  return std::make_unique<NcclComm>(dev, std::move(bootstrap), options);
}

std::unique_ptr<Comm> openNcclComm(Device &dev, const CommOptions &options) {
  if (options.deterministic) // before openComm starts MPI or connects to the master
    return makeNcclComm(dev, nullptr, options);
  return makeNcclComm(dev, openComm(options), options);
}

} // namespace bmrt::cuda
