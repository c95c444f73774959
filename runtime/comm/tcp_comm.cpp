//===- comm/tcp_comm.cpp - Collectives through rank 0 over TCP -----------===//
//
// The backend for a torchrun-style launch without mpirun (RANK, WORLD_SIZE,
// MASTER_ADDR, MASTER_PORT). Rank 0 listens on MASTER_PORT; every other
// rank connects to it (retrying: rank 0 may start later) and says who it is
// in a handshake rank 0 checks (magic, version, rank in range and not taken,
// same WORLD_SIZE). A star, not a ring: meant for a few ranks on one or two
// hosts, where it is simple and its sums are always in rank order.
//
// A collective, as the progress thread (queued_comm.h) runs it:
//   every rank but 0 sends rank 0 a header (sequence number, kind, dtype,
//   count, root) then its data; rank 0 reads the ranks in order 1, 2, ...,
//   checks each header against its own (every rank must issue the same
//   collectives in the same order: a mismatch is named, not a hang),
//   folds each rank's data in as it arrives - acc = acc + x_r, which is
//   sumInRankOrder step by step - then answers each rank with a status
//   (ok, or rank 0's error message) and the result.
// Both ends are host byte order: every rank runs on the same kind of host.
//
// Failures: every read and write has the collective's deadline; a peer that
// closes its socket is reported as having died. When rank 0 fails it tells
// the ranks still waiting for an answer why, so they fail with its message
// (and on the way out it lingers until they hang up: closing first could
// reset the connection and lose that message); when it exits, the others
// see their connection close.
//
//===----------------------------------------------------------------------===//
#include "comm/queued_comm.h"
#include "comm/socket_io.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>
#include <vector>

namespace bmrt {
namespace {

constexpr uint32_t kMagic = 0x434d4d42; // "BMMC"
constexpr uint32_t kVersion = 1;

struct Hello {
  uint32_t magic;
  uint32_t version;
  int32_t rank;
  int32_t size;
};

/// Rank 0's answer to a hello or a collective; `length` bytes of message
/// follow when `ok` is 0.
struct Status {
  int32_t ok;
  uint32_t length;
};

struct OpHeader {
  int64_t seq;
  int32_t kind;
  int32_t dtype;
  int64_t n;
  int32_t root;
  int32_t reserved;
};

/// What the progress thread works with.
struct TcpWorld {
  int rank = 0;
  int size = 1;
  std::vector<int> fds; // rank 0: fds[r] for r >= 1; others: fds[0] (to rank 0)
  int wakeFd = -1;      // an eventfd every wait polls too: teardown wakes the progress thread
  std::vector<char> scratch;
};

Link linkTo(const TcpWorld &w, int peer, const std::string &during) {
  Link l;
  l.fd = w.fds[(size_t)peer];
  l.selfRank = w.rank;
  l.peerRank = peer;
  l.during = during;
  l.wakeFd = w.wakeFd;
  return l;
}

void sendStatus(const Link &link, const std::string &error, const IoDeadline &deadline) {
  Status s{error.empty() ? 1 : 0, (uint32_t)error.size()};
  sendAll(link, &s, sizeof s, deadline);
  sendAll(link, error.data(), error.size(), deadline);
}

/// Reads rank 0's status; "" when ok, else its message.
std::string recvStatus(const Link &link, const IoDeadline &deadline) {
  Status s{};
  recvAll(link, &s, sizeof s, deadline);
  if (s.ok)
    return "";
  if (s.length > (1u << 20))
    fail("rank " + std::to_string(link.selfRank) + ": rank 0 sent a malformed answer during " +
         link.during);
  std::string message(s.length, '\0');
  recvAll(link, message.data(), message.size(), deadline);
  return message;
}

IoDeadline deadlineOf(const CommOp &op, double timeoutSeconds) {
  IoDeadline d;
  d.seconds = timeoutSeconds;
  d.forever = !op.hasDeadline;
  d.at = op.deadline;
  return d;
}

/// Rank 0: acc[0, total) = acc + rank r's data, in pieces through scratch
/// laid out as sumInRankOrder wants it (acc piece, then r's piece).
void foldIn(TcpWorld &w, const Link &link, char *acc, int64_t total, DType dtype,
            const IoDeadline &deadline) {
  const int64_t piece = 1 << 18;
  size_t bytes = commDTypeBytes(dtype);
  w.scratch.resize(2 * (size_t)piece * bytes);
  for (int64_t off = 0; off < total; off += piece) {
    int64_t m = std::min(piece, total - off);
    char *a = acc + (size_t)off * bytes;
    std::memcpy(w.scratch.data(), a, (size_t)m * bytes);
    recvAll(link, w.scratch.data() + (size_t)m * bytes, (size_t)m * bytes, deadline);
    sumInRankOrder(a, w.scratch.data(), 2, m, dtype);
  }
}

std::string headerText(const OpHeader &h, int size) {
  if (h.kind < 0 || h.kind > (int)CommOpKind::AllGatherV || h.dtype < 0 || h.dtype > (int)DType::I32)
    return "an unknown collective";
  std::string s = describeCommOp((CommOpKind)h.kind, h.n, (DType)h.dtype, size);
  if (h.kind == (int)CommOpKind::Broadcast)
    s += " from rank " + std::to_string(h.root);
  return s + " (collective #" + std::to_string(h.seq) + ")";
}

void runRoot(TcpWorld &w, const CommOp &op, const OpHeader &mine, const IoDeadline &deadline) {
  size_t bytes = commDTypeBytes(op.dtype);
  char *buf = (char *)op.buf;
  int64_t n = op.n;
  int answered = 0; // ranks 1..answered got a complete answer (or part of one)
  try {
    for (int r = 1; r < w.size; ++r) {
      Link link = linkTo(w, r, op.what);
      OpHeader h{};
      recvAll(link, &h, sizeof h, deadline);
      if (std::memcmp(&h, &mine, sizeof h) != 0)
        fail("rank 0: rank " + std::to_string(r) + " issued " + headerText(h, w.size) +
             " where rank 0 issued " + headerText(mine, w.size) +
             ": every rank must issue the same collectives in the same order");
      switch (op.kind) {
      case CommOpKind::AllReduce:
        foldIn(w, link, buf, n, op.dtype, deadline);
        break;
      case CommOpKind::ReduceScatter:
        foldIn(w, link, buf, n * w.size, op.dtype, deadline);
        break;
      case CommOpKind::ReduceScatterV: // n: all pieces together
        foldIn(w, link, buf, n, op.dtype, deadline);
        break;
      case CommOpKind::AllGather:
        recvAll(link, buf + (size_t)r * (size_t)n * bytes, (size_t)n * bytes, deadline);
        break;
      case CommOpKind::AllGatherV: // rank r's piece, into its place
        recvAll(link, buf + (size_t)op.displs[(size_t)r] * bytes,
                (size_t)op.counts[(size_t)r] * bytes, deadline);
        break;
      case CommOpKind::Broadcast:
        if (r == op.root)
          recvAll(link, buf, (size_t)n * bytes, deadline);
        break;
      case CommOpKind::Barrier:
        break;
      }
    }
    for (int r = 1; r < w.size; ++r) {
      Link link = linkTo(w, r, op.what);
      answered = r;
      sendStatus(link, "", deadline);
      switch (op.kind) {
      case CommOpKind::AllReduce:
      case CommOpKind::AllGather:
      case CommOpKind::AllGatherV: // n: all pieces together
        sendAll(link, buf, (size_t)(op.kind == CommOpKind::AllGather ? n * w.size : n) * bytes,
                deadline);
        break;
      case CommOpKind::ReduceScatter:
        sendAll(link, buf + (size_t)r * (size_t)n * bytes, (size_t)n * bytes, deadline);
        break;
      case CommOpKind::ReduceScatterV:
        sendAll(link, buf + (size_t)op.displs[(size_t)r] * bytes,
                (size_t)op.counts[(size_t)r] * bytes, deadline);
        break;
      case CommOpKind::Broadcast:
        if (r != op.root)
          sendAll(link, buf, (size_t)n * bytes, deadline);
        break;
      case CommOpKind::Barrier:
        break;
      }
    }
  } catch (const Error &e) {
    // Tell the ranks that have not started receiving an answer why this
    // collective failed (a rank mid-answer would read the message as data:
    // it sees its connection close when this process exits instead).
    IoDeadline soon = IoDeadline::after(1);
    for (int r = answered + 1; r < w.size; ++r) {
      try {
        sendStatus(linkTo(w, r, op.what), e.what(), soon);
      } catch (const Error &) {
        // that rank is gone too; its own error will say so
      }
    }
    throw;
  }
}

void runOther(TcpWorld &w, const CommOp &op, const OpHeader &mine, const IoDeadline &deadline) {
  size_t bytes = commDTypeBytes(op.dtype);
  char *buf = (char *)op.buf;
  int64_t n = op.n;
  Link link = linkTo(w, 0, op.what);
  sendAll(link, &mine, sizeof mine, deadline);
  char *own = buf + (size_t)w.rank * (size_t)n * bytes;
  switch (op.kind) {
  case CommOpKind::AllReduce:
    sendAll(link, buf, (size_t)n * bytes, deadline);
    break;
  case CommOpKind::ReduceScatter:
    sendAll(link, buf, (size_t)(n * w.size) * bytes, deadline);
    break;
  case CommOpKind::ReduceScatterV:
    sendAll(link, buf, (size_t)n * bytes, deadline);
    break;
  case CommOpKind::AllGather:
    sendAll(link, own, (size_t)n * bytes, deadline);
    break;
  case CommOpKind::AllGatherV:
    sendAll(link, buf + (size_t)op.displs[(size_t)w.rank] * bytes,
            (size_t)op.counts[(size_t)w.rank] * bytes, deadline);
    break;
  case CommOpKind::Broadcast:
    if (w.rank == op.root)
      sendAll(link, buf, (size_t)n * bytes, deadline);
    break;
  case CommOpKind::Barrier:
    break;
  }
  std::string error = recvStatus(link, deadline);
  if (!error.empty())
    fail("rank " + std::to_string(w.rank) + ": " + op.what + " failed on rank 0: " + error);
  switch (op.kind) {
  case CommOpKind::AllReduce:
    recvAll(link, buf, (size_t)n * bytes, deadline);
    break;
  case CommOpKind::ReduceScatter:
    recvAll(link, own, (size_t)n * bytes, deadline);
    break;
  case CommOpKind::ReduceScatterV:
    recvAll(link, buf + (size_t)op.displs[(size_t)w.rank] * bytes,
            (size_t)op.counts[(size_t)w.rank] * bytes, deadline);
    break;
  case CommOpKind::AllGather:
    recvAll(link, buf, (size_t)(n * w.size) * bytes, deadline);
    break;
  case CommOpKind::AllGatherV:
    recvAll(link, buf, (size_t)n * bytes, deadline);
    break;
  case CommOpKind::Broadcast:
    if (w.rank != op.root)
      recvAll(link, buf, (size_t)n * bytes, deadline);
    break;
  case CommOpKind::Barrier:
    break;
  }
}

void runTcp(TcpWorld &w, const CommOp &op, double timeoutSeconds) {
  if (w.size == 1)
    return; // one rank: every collective is the identity
  OpHeader mine{};
  mine.seq = op.id;
  mine.kind = (int32_t)op.kind;
  mine.dtype = op.kind == CommOpKind::Barrier ? 0 : (int32_t)op.dtype;
  mine.n = op.n;
  mine.root = op.kind == CommOpKind::Broadcast ? op.root : 0;
  IoDeadline deadline = deadlineOf(op, timeoutSeconds);
  if (w.rank == 0)
    runRoot(w, op, mine, deadline);
  else
    runOther(w, op, mine, deadline);
}

// --- setting up the star -----------------------------------------------------

void acceptRanks(TcpWorld &w, const TcpConfig &config, double timeoutSeconds) {
  IoDeadline deadline = IoDeadline::after(timeoutSeconds);
  int listenFd = listenOn(config.masterPort, 0);
  int connected = 0;
  try {
    while (connected < w.size - 1) {
      int fd = acceptBefore(listenFd, deadline, 0);
      if (fd < 0) {
        std::string missing;
        for (int r = 1; r < w.size; ++r)
          if (w.fds[(size_t)r] < 0)
            missing += (missing.empty() ? "" : ", ") + std::to_string(r);
        char seconds[32];
        std::snprintf(seconds, sizeof seconds, "%g", timeoutSeconds);
        fail("rank 0: only " + std::to_string(connected + 1) + " of " + std::to_string(w.size) +
             " ranks joined within " + seconds + " s (missing: rank " + missing +
             "); are they running, with MASTER_ADDR and MASTER_PORT=" +
             std::to_string(config.masterPort) + " pointing at rank 0?");
      }
      Link link{fd, 0, -1, "the handshake"};
      Hello hello{};
      try {
        recvAll(link, &hello, sizeof hello, deadline);
      } catch (const Error &e) {
        std::fprintf(stderr, "warning: rank 0: dropped a connection on port %d: %s\n",
                     config.masterPort, e.what());
        closeFd(fd);
        continue;
      }
      if (hello.magic != kMagic || hello.version != kVersion) {
        std::fprintf(stderr,
                     "warning: rank 0: dropped a connection on port %d that is not a bmb rank "
                     "of this version\n",
                     config.masterPort);
        closeFd(fd);
        continue;
      }
      std::string error;
      if (hello.size != w.size)
        error = "rank 0: rank " + std::to_string(hello.rank) + " was started with WORLD_SIZE=" +
                std::to_string(hello.size) + ", rank 0 with WORLD_SIZE=" +
                std::to_string(w.size) + ": every rank needs the same WORLD_SIZE";
      else if (hello.rank < 1 || hello.rank >= w.size)
        error = "rank 0: a process connected as rank " + std::to_string(hello.rank) +
                ", which is not a rank 1.." + std::to_string(w.size - 1);
      else if (w.fds[(size_t)hello.rank] >= 0)
        error = "rank 0: two processes were started with RANK=" + std::to_string(hello.rank);
      if (!error.empty()) {
        link.peerRank = hello.rank;
        try {
          sendStatus(link, error, IoDeadline::after(1));
        } catch (const Error &) {
          // it is gone; rank 0's own message says enough
        }
        closeFd(fd);
        fail(error);
      }
      w.fds[(size_t)hello.rank] = fd;
      ++connected;
    }
  } catch (...) {
    closeFd(listenFd);
    throw;
  }
  closeFd(listenFd); // everyone is here; nobody else may join
  for (int r = 1; r < w.size; ++r)
    sendStatus(linkTo(w, r, "the handshake"), "", deadline);
}

void joinRankZero(TcpWorld &w, const TcpConfig &config, double timeoutSeconds) {
  IoDeadline deadline = IoDeadline::after(timeoutSeconds);
  w.fds[0] = connectBefore(config.masterAddr, config.masterPort, deadline, w.rank);
  Link link = linkTo(w, 0, "the handshake");
  Hello hello{kMagic, kVersion, w.rank, w.size};
  sendAll(link, &hello, sizeof hello, deadline);
  // Rank 0 answers once every rank has joined.
  std::string error = recvStatus(link, deadline);
  if (!error.empty())
    fail("rank " + std::to_string(w.rank) + ": rank 0 refused this rank: " + error);
}

class TcpComm final : public QueuedComm {
public:
  TcpComm(const CommOptions &options, TcpWorld *world)
      : QueuedComm(world->rank, world->size, /*deterministic=*/true, commTimeoutSeconds(options)),
        world_(world) {
    double timeout = timeoutSeconds_;
    // Grace: the progress thread's error names the rank it waited for.
    startQueue(/*graceSeconds=*/1, [world, timeout](const CommOp &op) {
      runTcp(*world, op, timeout);
    });
  }

  ~TcpComm() override {
    if (finishQueue()) {
      stopQueue();
      for (int fd : world_->fds)
        closeFd(fd);
    } else {
      // The progress thread may be waiting in poll(): wake it (its wait
      // fails), join it, then close so that rank 0's last words (the error
      // it sent the others) are not lost to a connection reset.
      uint64_t one = 1;
      if (::write(world_->wakeFd, &one, sizeof one) != (ssize_t)sizeof one)
        std::fprintf(stderr, "warning: rank %d: waking the comm progress thread failed: %s\n",
                     rank_, std::strerror(errno));
      stopQueue();
      lingerAndClose(world_->fds, /*seconds=*/1);
    }
    closeFd(world_->wakeFd);
    delete world_;
  }

  const char *backend() const override { return "tcp"; }

private:
  TcpWorld *world_;
};

} // namespace

std::unique_ptr<Comm> makeTcpComm(const CommOptions &options, const TcpConfig &config) {
  auto world = std::make_unique<TcpWorld>();
  world->rank = config.rank;
  world->size = config.size;
  world->fds.assign((size_t)config.size, -1);
  world->wakeFd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (world->wakeFd < 0)
    fail("rank " + std::to_string(config.rank) + ": eventfd failed: " + std::strerror(errno));
  try {
    if (config.size > 1) {
      if (config.rank == 0)
        acceptRanks(*world, config, commTimeoutSeconds(options));
      else
        joinRankZero(*world, config, commTimeoutSeconds(options));
    }
  } catch (...) {
    for (int fd : world->fds)
      closeFd(fd);
    closeFd(world->wakeFd);
    throw;
  }
  return std::make_unique<TcpComm>(options, world.release());
}

} // namespace bmrt
