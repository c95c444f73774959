//===- comm/comm.cpp - Backend choice, the single process, shared pieces --===//
//
// openComm reads the launcher's environment (bmrt/comm.h); the single
// process backend; the blocking conveniences every backend inherits; and
// sumInRankOrder, the one deterministic reduction (MPI's deterministic mode
// and TCP's rank 0 both call it, so they add exactly like one process).
//
//===----------------------------------------------------------------------===//
#include "comm/comm_internal.h"

#include "bmrt/context.h"

#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <unordered_set>
#include <vector>

namespace bmrt {

// --- shared pieces ---------------------------------------------------------

const char *commOpName(CommOpKind kind) {
  switch (kind) {
  case CommOpKind::AllReduce:
    return "all-reduce";
  case CommOpKind::ReduceScatter:
    return "reduce-scatter";
  case CommOpKind::AllGather:
    return "all-gather";
  case CommOpKind::Broadcast:
    return "broadcast";
  case CommOpKind::Barrier:
    return "barrier";
  case CommOpKind::ReduceScatterV:
    return "reduce-scatter";
  case CommOpKind::AllGatherV:
    return "all-gather";
  }
  return "collective";
}

size_t commDTypeBytes(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return 4;
  case DType::F64:
    return 8;
  case DType::I32:
    return 4;
  }
  fail("comm: unknown dtype " + std::to_string((int)dtype) + " (collectives take F32, F64, I32)");
}

static const char *dtypeNoun(DType dtype, bool plural) {
  switch (dtype) {
  case DType::F32:
    return plural ? "floats" : "float";
  case DType::F64:
    return plural ? "doubles" : "double";
  case DType::I32:
    return plural ? "ints" : "int";
  }
  return plural ? "elements" : "element";
}

std::string describeCommOp(CommOpKind kind, int64_t n, DType dtype, int size) {
  std::string s = commOpName(kind);
  if (kind == CommOpKind::Barrier)
    return s;
  s += " of ";
  if (kind == CommOpKind::ReduceScatter || kind == CommOpKind::AllGather)
    s += std::to_string(size) + " x ";
  s += std::to_string(n) + " " + dtypeNoun(dtype, n != 1);
  if (kind == CommOpKind::ReduceScatterV || kind == CommOpKind::AllGatherV)
    s += " in per-rank pieces";
  return s;
}

void checkCommArgs(CommOpKind kind, const void *buf, int64_t n, DType dtype, int root,
                   int rank, int size) {
  std::string where = "rank " + std::to_string(rank) + ": " + commOpName(kind) + ": ";
  if (kind == CommOpKind::Barrier)
    return;
  if (dtype != DType::F32 && dtype != DType::F64 && dtype != DType::I32)
    fail(where + "unknown dtype " + std::to_string((int)dtype) + " (collectives take F32, F64, I32)");
  if (n < 0)
    fail(where + "negative element count " + std::to_string(n));
  // size() * count elements must be addressable in bytes.
  int64_t perRank = kind == CommOpKind::ReduceScatter || kind == CommOpKind::AllGather ? size : 1;
  if (n > 0 && n > INT64_MAX / perRank / (int64_t)commDTypeBytes(dtype))
    fail(where + "element count " + std::to_string(n) + " is too large");
  if (n > 0 && !buf)
    fail(where + "null buffer for " + std::to_string(n) + " elements");
  if (kind == CommOpKind::Broadcast && (root < 0 || root >= size))
    fail(where + "root " + std::to_string(root) + " is not a rank (0.." +
         std::to_string(size - 1) + ")");
}

int64_t checkPieceCounts(CommOpKind kind, const int64_t *counts, int rank, int size) {
  std::string where =
      "rank " + std::to_string(rank) + ": " + commOpName(kind) + " in per-rank pieces: ";
  if (!counts)
    fail(where + "no counts");
  int64_t total = 0;
  for (int q = 0; q < size; ++q) {
    if (counts[q] < 0)
      fail(where + "negative count " + std::to_string(counts[q]) + " for rank " +
           std::to_string(q));
    if (counts[q] > INT64_MAX / 8 - total)
      fail(where + "the pieces are too large");
    total += counts[q];
  }
  return total;
}

double commTimeoutSeconds(const CommOptions &options) {
  double s = options.timeoutSeconds;
  return s > 0 && s <= 1e9 ? s : 0; // false for NaN too
}

// --- sumInRankOrder ----------------------------------------------------------

// dst[i] += x[i], in T: the step every rank-order sum is made of.
template <typename T>
static void addInto(T *__restrict dst, const T *__restrict x, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    dst[i] = dst[i] + x[i];
}

// Integers wrap like two's complement instead of overflowing (undefined in C++).
static void addIntoI32(int32_t *__restrict dst, const int32_t *__restrict x, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    dst[i] = (int32_t)((uint32_t)dst[i] + (uint32_t)x[i]);
}

void sumInRankOrder(void *dst, const void *src, int ranks, int64_t n, DType dtype) {
  if (ranks < 1)
    fail("sumInRankOrder: " + std::to_string(ranks) + " contributions (needs at least 1)");
  if (n < 0)
    fail("sumInRankOrder: negative element count " + std::to_string(n));
  size_t bytes = commDTypeBytes(dtype);
  if (n == 0)
    return;
  // dst may be contribution 0 itself (it is read before it is written); it
  // must not overlap contributions 1.. (checked: a silent overlap would sum
  // partly summed data).
  const char *s = (const char *)src;
  char *d = (char *)dst;
  size_t rowBytes = (size_t)n * bytes;
  uintptr_t da = (uintptr_t)d, sa = (uintptr_t)s;
  if (ranks > 1 && da > sa && da < sa + (size_t)ranks * rowBytes)
    fail("sumInRankOrder: dst overlaps contributions 1.." + std::to_string(ranks - 1));
  if (d != s)
    std::memmove(d, s, rowBytes);
  // Rank-outer: element i sees ((x0 + x1) + x2) + ... exactly as written,
  // and each pass streams through memory once.
  for (int r = 1; r < ranks; ++r) {
    const char *x = s + (size_t)r * rowBytes;
    switch (dtype) {
    case DType::F32:
      addInto((float *)d, (const float *)x, n);
      break;
    case DType::F64:
      addInto((double *)d, (const double *)x, n);
      break;
    case DType::I32:
      addIntoI32((int32_t *)d, (const int32_t *)x, n);
      break;
    }
  }
}

// --- the blocking conveniences ---------------------------------------------

double Comm::sum(double x) {
  double v = x;
  wait(allReduce(&v, 1, DType::F64));
  return v;
}

// There is no I64 collective: every rank's value travels whole (as two I32
// words) and each rank adds them, wrapping, in rank order - exact, and the
// same on every rank.
int64_t Comm::sum(int64_t x) {
  static_assert(sizeof(int64_t) == 2 * sizeof(int32_t), "int64 is two int32 words");
  std::vector<int32_t> words(2 * (size_t)size());
  std::memcpy(&words[2 * (size_t)rank()], &x, sizeof x);
  wait(allGather(words.data(), 2, DType::I32));
  uint64_t total = 0;
  for (int r = 0; r < size(); ++r) {
    uint64_t v;
    std::memcpy(&v, &words[2 * (size_t)r], sizeof v);
    total += v;
  }
  int64_t result;
  std::memcpy(&result, &total, sizeof result);
  return result;
}

// No max reduction either: gather every rank's value. A NaN anywhere wins,
// so a NaN loss on one rank stops every rank.
double Comm::max(double x) {
  std::vector<double> all((size_t)size());
  all[(size_t)rank()] = x;
  wait(allGather(all.data(), 1, DType::F64));
  double m = all[0];
  for (double v : all) {
    if (std::isnan(v))
      return v;
    if (v > m)
      m = v;
  }
  return m;
}

std::string Comm::broadcastString(const std::string &s, int root) {
  int64_t length = rank() == root ? (int64_t)s.size() : 0;
  int32_t header[2];
  std::memcpy(header, &length, sizeof length);
  wait(broadcast(header, 2, DType::I32, root));
  std::memcpy(&length, header, sizeof length);
  if (length < 0 || length > (int64_t)1 << 30)
    fail("rank " + std::to_string(rank()) + ": broadcastString: rank " + std::to_string(root) +
         " sent a length of " + std::to_string(length));
  std::vector<int32_t> words((size_t)(length + 3) / 4);
  if (rank() == root && length > 0)
    std::memcpy(words.data(), s.data(), (size_t)length);
  wait(broadcast(words.data(), (int64_t)words.size(), DType::I32, root));
  return std::string((const char *)words.data(), (size_t)length);
}

CommHandle Comm::reduceScatterv(void *, const int64_t *, DType) {
  fail(std::string("rank ") + std::to_string(rank()) + ": the " + backend() +
       " backend has no reduce-scatter in per-rank pieces yet, which zero = 2 needs (use "
       "zero = 0 or 1 on this backend)");
}

CommHandle Comm::allGatherv(void *, const int64_t *, DType) {
  fail(std::string("rank ") + std::to_string(rank()) + ": the " + backend() +
       " backend has no all-gather in per-rank pieces yet, which zero = 3 needs (use "
       "zero = 0, 1 or 2 on this backend)");
}

void Comm::hold(int64_t key, int64_t tag, CommHandle h) {
  for (const Held &x : held_)
    if (x.key == key)
      fail("rank " + std::to_string(rank()) + ": a collective for " + std::to_string(tag) +
           " is held under key " + std::to_string(key) + ", which already holds one for " +
           std::to_string(x.tag) + " (a bmbc bug)");
  held_.push_back({key, tag, h});
}

bool Comm::take(int64_t key, int64_t tag, CommHandle &h) {
  for (size_t i = 0; i < held_.size(); ++i) {
    if (held_[i].key != key)
      continue;
    if (held_[i].tag != tag)
      fail("rank " + std::to_string(rank()) + ": the collective held under key " +
           std::to_string(key) + " is for " + std::to_string(held_[i].tag) + ", not " +
           std::to_string(tag) + " (a bmbc bug)");
    h = held_[i].handle;
    held_.erase(held_.begin() + (ptrdiff_t)i);
    return true;
  }
  return false;
}

void Comm::waitDeferred() {
  // Taken first: a failing wait leaves nothing half-waited behind.
  std::vector<CommHandle> pending;
  pending.swap(deferred_);
  for (CommHandle h : pending)
    wait(h);
}

Comm &commOf(Context &ctx) {
  if (!ctx.comm)
    fail("this program uses collectives, but no communicator was opened (Context::comm is "
         "null; the app calls openComm)");
  return *ctx.comm;
}

// --- a single process ------------------------------------------------------

namespace {

class SingleComm final : public Comm {
public:
  explicit SingleComm(const CommOptions &options) : deterministic_(options.deterministic) {}
  int rank() const override { return 0; }
  int size() const override { return 1; }
  const char *backend() const override { return "single"; }
  bool deterministic() const override { return deterministic_; }

  // With one rank every collective leaves its buffer as it is.
  CommHandle allReduce(void *buf, int64_t n, DType dtype) override {
    return issue(CommOpKind::AllReduce, buf, n, dtype, 0);
  }
  CommHandle reduceScatter(void *buf, int64_t count, DType dtype) override {
    return issue(CommOpKind::ReduceScatter, buf, count, dtype, 0);
  }
  CommHandle allGather(void *buf, int64_t count, DType dtype) override {
    return issue(CommOpKind::AllGather, buf, count, dtype, 0);
  }
  CommHandle reduceScatterv(void *buf, const int64_t *counts, DType dtype) override {
    return issue(CommOpKind::ReduceScatterV, buf,
                 checkPieceCounts(CommOpKind::ReduceScatterV, counts, 0, 1), dtype, 0);
  }
  CommHandle allGatherv(void *buf, const int64_t *counts, DType dtype) override {
    return issue(CommOpKind::AllGatherV, buf,
                 checkPieceCounts(CommOpKind::AllGatherV, counts, 0, 1), dtype, 0);
  }
  CommHandle broadcast(void *buf, int64_t n, DType dtype, int root) override {
    return issue(CommOpKind::Broadcast, buf, n, dtype, root);
  }
  void wait(CommHandle h) override {
    // Handles are still checked, so a program that waits twice fails here
    // as it would on the other backends.
    if (outstanding_.erase(h.id) != 1)
      fail("rank 0: wait on comm handle " + std::to_string(h.id) +
           ", which was not issued or was already waited");
  }
  void barrier() override {}

private:
  CommHandle issue(CommOpKind kind, void *buf, int64_t n, DType dtype, int root) {
    checkCommArgs(kind, buf, n, dtype, root, 0, 1);
    int64_t id = nextId_++;
    outstanding_.insert(id);
    return CommHandle{id};
  }

  bool deterministic_;
  int64_t nextId_ = 0;
  std::unordered_set<int64_t> outstanding_;
};

} // namespace

std::unique_ptr<Comm> makeSingleComm(const CommOptions &options) {
  return std::make_unique<SingleComm>(options);
}

// --- choosing the backend from the environment -----------------------------

static const char *envOrNull(const char *name) {
  const char *v = std::getenv(name);
  return v && *v ? v : nullptr;
}

static int parseEnvInt(const char *name, const char *text, long lo, long hi) {
  errno = 0;
  char *end = nullptr;
  long v = std::strtol(text, &end, 10);
  if (errno || end == text || *end || v < lo || v > hi)
    fail(std::string(name) + "='" + text + "' is not an integer in " + std::to_string(lo) +
         ".." + std::to_string(hi));
  return (int)v;
}

std::unique_ptr<Comm> openComm(const CommOptions &options) {
  // mpirun (Open MPI sets OMPI_COMM_WORLD_SIZE; PMIx launchers PMIX_RANK).
  // MPI_Init must not run otherwise: Open MPI would start a singleton.
  if (envOrNull("OMPI_COMM_WORLD_SIZE") || envOrNull("PMIX_RANK"))
    return makeMpiComm(options);

  const char *rank = envOrNull("RANK");
  const char *worldSize = envOrNull("WORLD_SIZE");
  if (!rank && !worldSize)
    return makeSingleComm(options);

  // torchrun-style: all four variables, consistent.
  const char *addr = envOrNull("MASTER_ADDR");
  const char *port = envOrNull("MASTER_PORT");
  std::string missing;
  for (auto [name, value] : {std::pair<const char *, const char *>{"RANK", rank},
                             {"WORLD_SIZE", worldSize},
                             {"MASTER_ADDR", addr},
                             {"MASTER_PORT", port}})
    if (!value)
      missing += std::string(missing.empty() ? "" : ", ") + name;
  if (!missing.empty())
    fail(std::string(rank ? "RANK" : "WORLD_SIZE") + " is set but " + missing +
         " not: a launch without mpirun needs RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT "
         "(as torchrun sets them), or launch with mpirun");
  TcpConfig config;
  config.size = parseEnvInt("WORLD_SIZE", worldSize, 1, 1 << 16);
  config.rank = parseEnvInt("RANK", rank, 0, INT_MAX);
  if (config.rank >= config.size)
    fail("RANK=" + std::to_string(config.rank) + " is out of range for WORLD_SIZE=" +
         std::to_string(config.size) + " (ranks are 0.." + std::to_string(config.size - 1) + ")");
  config.masterAddr = addr;
  config.masterPort = parseEnvInt("MASTER_PORT", port, 1, 65535);
  if (const char *localRank = envOrNull("LOCAL_RANK")) // optional; only checked on the host
    parseEnvInt("LOCAL_RANK", localRank, 0, INT_MAX);
  return makeTcpComm(options, config);
}

} // namespace bmrt
