// One rank of a multi-rank comm test, launched by mpirun (the ctest
// entries bmrt_comm.mpi_*) or by comm_launch_test with RANK, WORLD_SIZE,
// MASTER_ADDR, MASTER_PORT (TCP). Every rank computes every rank's input
// from a seeded formula, so it can check a collective's result against a
// local sumInRankOrder of all inputs: bitwise in deterministic mode.
//
//   comm_worker [--deterministic] [--timeout=S] [--expect-size=N]
//               [--expect-backend=mpi|tcp] [--scenario=NAME]
//
// Scenarios: "collectives" (default): the GoogleTest suite below, on every
// rank in lockstep. The others act like the train executable's main - an
// error is printed as "error: ..." and the exit status is 1:
//   timeout:  rank 1 skips an all-reduce and sleeps 30 s; the others must
//             fail after --timeout seconds naming the collective.
//   die:      rank 1 exits with status 3 before an all-reduce the others
//             wait for (with the default 300 s timeout: the launcher must
//             stop them, not the timeout).
//   throw:    rank 1 fails (a bmrt::Error) before that all-reduce: its
//             communicator is destroyed while the error unwinds, which must
//             neither hang nor finalize MPI (the others never will).
//   mismatch: rank 1 issues an all-gather where the others all-reduce.
//   late:     every collective succeeds, but rank 1 reaches the end 5 s
//             after the others: MPI_Finalize waits for it, so with a 2 s
//             timeout rank 0's watchdog must end the job (status 1).
#include "bmrt/comm.h"
#include "bmrt/context.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

using namespace bmrt;

namespace {

Comm *gComm = nullptr;
int gExpectSize = -1;
std::string gExpectBackend;

uint64_t mix(uint64_t x) { // splitmix64
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Rank r's element i of the input tagged `tag`: floats of magnitudes
// 2^-8 .. 2^8 (so the order of a sum shows in its rounding), ints in
// +-1e6 (no overflow at any rank count used here).
template <typename T> T inputValue(int rank, int64_t i, uint64_t tag) {
  uint64_t h = mix(mix(tag * 1000003u + (uint64_t)rank) ^ (uint64_t)i);
  if constexpr (std::is_floating_point_v<T>) {
    double u = (double)(h >> 11) / 9007199254740992.0 * 2 - 1; // [-1, 1)
    int e = (int)((h >> 3) % 17) - 8;
    return (T)std::ldexp(u, e);
  } else {
    return (T)((int64_t)(h % 2000001) - 1000000);
  }
}

template <typename T> std::vector<T> inputOf(int rank, int64_t n, uint64_t tag) {
  std::vector<T> v((size_t)n);
  for (int64_t i = 0; i < n; ++i)
    v[(size_t)i] = inputValue<T>(rank, i, tag);
  return v;
}

template <typename T> DType dtypeOf() {
  if constexpr (std::is_same_v<T, float>)
    return DType::F32;
  else if constexpr (std::is_same_v<T, double>)
    return DType::F64;
  else
    return DType::I32;
}

/// sumInRankOrder of every rank's input of n elements.
template <typename T> std::vector<T> expectedSum(int64_t n, uint64_t tag) {
  int size = gComm->size();
  std::vector<T> all((size_t)(size * n));
  for (int r = 0; r < size; ++r) {
    auto x = inputOf<T>(r, n, tag);
    std::copy(x.begin(), x.end(), all.begin() + (ptrdiff_t)(r * n));
  }
  std::vector<T> out((size_t)n);
  sumInRankOrder(out.data(), all.data(), size, n, dtypeOf<T>());
  return out;
}

/// A reduced result against the rank-order sum: bitwise in deterministic
/// mode and for ints, else within rounding of the sum of magnitudes.
template <typename T>
void expectReduced(const T *got, const T *want, int64_t n, uint64_t tag, int64_t offset,
                   const std::string &what) {
  if (gComm->deterministic() || !std::is_floating_point_v<T>) {
    int64_t bad = -1;
    for (int64_t i = 0; i < n && bad < 0; ++i)
      if (std::memcmp(&got[i], &want[i], sizeof(T)) != 0)
        bad = i;
    EXPECT_EQ(bad, -1) << what << ": first difference at " << bad << ": " << +got[bad]
                       << " vs " << +want[bad];
    return;
  }
  double eps = std::is_same_v<T, float> ? 1e-6 : 1e-15;
  for (int64_t i = 0; i < n; ++i) {
    double mag = 0;
    for (int r = 0; r < gComm->size(); ++r)
      mag += std::fabs((double)inputValue<T>(r, offset + i, tag));
    if (std::fabs((double)got[i] - (double)want[i]) > 4 * gComm->size() * eps * mag) {
      ADD_FAILURE() << what << ": element " << i << ": " << got[i] << " vs " << want[i];
      return;
    }
  }
}

template <typename T> void allReduceCase(int64_t n, uint64_t tag) {
  auto buf = inputOf<T>(gComm->rank(), n, tag);
  gComm->wait(gComm->allReduce(buf.data(), n, dtypeOf<T>()));
  auto want = expectedSum<T>(n, tag);
  expectReduced(buf.data(), want.data(), n, tag, 0, "all-reduce n=" + std::to_string(n));
}

template <typename T> void reduceScatterCase(int64_t count, uint64_t tag) {
  int size = gComm->size(), rank = gComm->rank();
  auto buf = inputOf<T>(rank, size * count, tag);
  gComm->wait(gComm->reduceScatter(buf.data(), count, dtypeOf<T>()));
  auto want = expectedSum<T>(size * count, tag);
  expectReduced(buf.data() + rank * count, want.data() + rank * count, count, tag, rank * count,
                "reduce-scatter count=" + std::to_string(count));
}

// Pieces of unequal length: `counts` (one per rank, from a pattern);
// each rank checks its own piece against the by-hand rank-order sum.
template <typename T> void reduceScattervCase(const std::vector<int64_t> &pattern, uint64_t tag) {
  int size = gComm->size(), rank = gComm->rank();
  std::vector<int64_t> counts((size_t)size), displs((size_t)size, 0);
  int64_t total = 0;
  for (int q = 0; q < size; ++q) {
    counts[(size_t)q] = pattern[(size_t)q % pattern.size()];
    displs[(size_t)q] = total;
    total += counts[(size_t)q];
  }
  auto buf = inputOf<T>(rank, total, tag);
  gComm->wait(gComm->reduceScatterv(buf.data(), counts.data(), dtypeOf<T>()));
  auto want = expectedSum<T>(total, tag);
  const int64_t at = displs[(size_t)rank];
  expectReduced(buf.data() + at, want.data() + at, counts[(size_t)rank], tag, at,
                "reduce-scatter in pieces of " + std::to_string(total));
}

template <typename T> void allGatherCase(int64_t count, uint64_t tag) {
  int size = gComm->size(), rank = gComm->rank();
  std::vector<T> buf((size_t)(size * count), T(-77)); // other chunks: junk
  auto mine = inputOf<T>(rank, count, tag);
  std::copy(mine.begin(), mine.end(), buf.begin() + (ptrdiff_t)(rank * count));
  gComm->wait(gComm->allGather(buf.data(), count, dtypeOf<T>()));
  for (int r = 0; r < size; ++r) {
    auto x = inputOf<T>(r, count, tag);
    EXPECT_EQ(0, std::memcmp(buf.data() + r * count, x.data(), (size_t)count * sizeof(T)))
        << "all-gather count=" << count << " chunk " << r;
  }
}

// All-gather of pieces of unequal length (ZeRO-3's per-unit gather): each
// rank puts its input in its own piece, junk elsewhere; afterwards every
// piece must hold its owner's input, bit for bit.
template <typename T> void allGathervCase(const std::vector<int64_t> &pattern, uint64_t tag) {
  int size = gComm->size(), rank = gComm->rank();
  std::vector<int64_t> counts((size_t)size), displs((size_t)size, 0);
  int64_t total = 0;
  for (int q = 0; q < size; ++q) {
    counts[(size_t)q] = pattern[(size_t)q % pattern.size()];
    displs[(size_t)q] = total;
    total += counts[(size_t)q];
  }
  std::vector<T> buf((size_t)total, T(-77));
  auto mine = inputOf<T>(rank, counts[(size_t)rank], tag);
  std::copy(mine.begin(), mine.end(), buf.begin() + (ptrdiff_t)displs[(size_t)rank]);
  gComm->wait(gComm->allGatherv(buf.data(), counts.data(), dtypeOf<T>()));
  for (int r = 0; r < size; ++r) {
    auto x = inputOf<T>(r, counts[(size_t)r], tag);
    EXPECT_EQ(0, std::memcmp(buf.data() + displs[(size_t)r], x.data(),
                             (size_t)counts[(size_t)r] * sizeof(T)))
        << "all-gather in pieces of " << total << ": piece " << r;
  }
}

template <typename T> void broadcastCase(int64_t n, int root, uint64_t tag) {
  auto buf = inputOf<T>(gComm->rank(), n, tag);
  gComm->wait(gComm->broadcast(buf.data(), n, dtypeOf<T>(), root));
  auto want = inputOf<T>(root, n, tag);
  EXPECT_EQ(0, std::memcmp(buf.data(), want.data(), (size_t)n * sizeof(T)))
      << "broadcast n=" << n << " root " << root;
}

TEST(Collectives, TheExpectedWorld) {
  if (gExpectSize > 0) {
    EXPECT_EQ(gComm->size(), gExpectSize);
  }
  if (!gExpectBackend.empty()) {
    EXPECT_EQ(gComm->backend(), gExpectBackend);
  }
}

TEST(Collectives, AllReduce) {
  // 0, 1, sizes no rank count divides, and 4-8 MB.
  for (int64_t n : {0, 1, 2, 3, 7, 1001, 1 << 20})
    allReduceCase<float>(n, 1);
  for (int64_t n : {0, 1, 5, 12345, 1 << 20})
    allReduceCase<double>(n, 2);
  for (int64_t n : {0, 1, 6, 1001, 1 << 18})
    allReduceCase<int32_t>(n, 3);
}

TEST(Collectives, ReduceScatter) {
  for (int64_t count : {0, 1, 5, 1 << 18})
    reduceScatterCase<float>(count, 4);
  for (int64_t count : {0, 1, 3, 1 << 17})
    reduceScatterCase<double>(count, 5);
  for (int64_t count : {0, 1, 7, 1 << 16})
    reduceScatterCase<int32_t>(count, 6);
}

TEST(Collectives, ReduceScatterInPieces) {
  // Empty pieces (a unit that misses a rank's partition), one rank taking
  // all, and pieces of every length.
  reduceScattervCase<float>({0}, 20);
  reduceScattervCase<float>({5, 0, 17}, 21);
  reduceScattervCase<float>({0, 1000, 3}, 22);
  reduceScattervCase<float>({70000, 1}, 23);
  reduceScattervCase<double>({3, 11, 0, 1}, 24);
  reduceScattervCase<int32_t>({7, 0}, 25);
}

TEST(Collectives, AllGatherInPieces) {
  allGathervCase<float>({0}, 30);
  allGathervCase<float>({5, 0, 17}, 31);
  allGathervCase<float>({0, 1000, 3}, 32);
  allGathervCase<float>({70000, 1}, 33);
  allGathervCase<double>({3, 11, 0, 1}, 34);
  allGathervCase<int32_t>({7, 0}, 35);
}

TEST(Collectives, AllGather) {
  for (int64_t count : {0, 1, 5, 1 << 18})
    allGatherCase<float>(count, 7);
  for (int64_t count : {0, 1, 3, 1 << 17})
    allGatherCase<double>(count, 8);
  for (int64_t count : {0, 1, 7})
    allGatherCase<int32_t>(count, 9);
}

TEST(Collectives, BroadcastFromEveryRoot) {
  for (int root = 0; root < gComm->size(); ++root) {
    for (int64_t n : {0, 1, 7, 1 << 20})
      broadcastCase<float>(n, root, 10);
    broadcastCase<double>(333, root, 11);
    broadcastCase<int32_t>(5, root, 12);
  }
}

TEST(Collectives, ManyInFlightWaitedInReverse) {
  int size = gComm->size(), rank = gComm->rank();
  const int k = 8;
  std::vector<std::vector<float>> reduced(k), scattered(k);
  std::vector<std::vector<double>> gathered(k);
  std::vector<std::vector<int32_t>> broadcasted(k);
  std::vector<CommHandle> handles;
  for (int j = 0; j < k; ++j) {
    int64_t n = 1000 + 37 * j;
    reduced[j] = inputOf<float>(rank, n, 100 + j);
    handles.push_back(gComm->allReduce(reduced[j].data(), n, DType::F32));
    scattered[j] = inputOf<float>(rank, size * (64 + j), 200 + j);
    handles.push_back(gComm->reduceScatter(scattered[j].data(), 64 + j, DType::F32));
    gathered[j].assign((size_t)(size * (50 + j)), -1.0);
    auto mine = inputOf<double>(rank, 50 + j, 300 + j);
    std::copy(mine.begin(), mine.end(), gathered[j].begin() + rank * (50 + j));
    handles.push_back(gComm->allGather(gathered[j].data(), 50 + j, DType::F64));
    broadcasted[j] = inputOf<int32_t>(rank, 10 + j, 400 + j);
    handles.push_back(gComm->broadcast(broadcasted[j].data(), 10 + j, DType::I32, j % size));
  }
  for (auto it = handles.rbegin(); it != handles.rend(); ++it)
    gComm->wait(*it);
  for (int j = 0; j < k; ++j) {
    int64_t n = 1000 + 37 * j;
    auto want = expectedSum<float>(n, 100 + j);
    expectReduced(reduced[j].data(), want.data(), n, 100 + j, 0, "in flight all-reduce");
    int64_t c = 64 + j;
    auto wantScatter = expectedSum<float>(size * c, 200 + j);
    expectReduced(scattered[j].data() + rank * c, wantScatter.data() + rank * c, c, 200 + j,
                  rank * c, "in flight reduce-scatter");
    for (int r = 0; r < size; ++r) {
      auto x = inputOf<double>(r, 50 + j, 300 + j);
      EXPECT_EQ(0, std::memcmp(gathered[j].data() + r * (50 + j), x.data(), x.size() * 8));
    }
    EXPECT_EQ(broadcasted[j], inputOf<int32_t>(j % size, 10 + j, 400 + j));
  }
}

// The backward's per-layer all-reduces: deferred as they are issued, then
// all waited at once by the optimizer step (Comm::waitDeferred), while a
// blocking collective (the step's loss sum) ran in between.
TEST(Collectives, DeferredThenWaitedTogether) {
  const int k = 5;
  std::vector<std::vector<float>> layers(k);
  EXPECT_FALSE(gComm->hasDeferred());
  for (int j = 0; j < k; ++j) {
    layers[j] = inputOf<float>(gComm->rank(), 500 + 11 * j, 600 + j);
    gComm->defer(gComm->allReduce(layers[j].data(), 500 + 11 * j, DType::F32));
  }
  EXPECT_TRUE(gComm->hasDeferred());
  EXPECT_EQ(gComm->sum(1.0), (double)gComm->size());
  gComm->waitDeferred();
  EXPECT_FALSE(gComm->hasDeferred());
  gComm->waitDeferred(); // nothing left: returns at once
  for (int j = 0; j < k; ++j) {
    auto want = expectedSum<float>(500 + 11 * j, 600 + j);
    expectReduced(layers[j].data(), want.data(), 500 + 11 * j, 600 + j, 0, "deferred all-reduce");
  }
}

TEST(Collectives, Barrier) {
  for (int i = 0; i < 5; ++i)
    gComm->barrier();
}

TEST(Collectives, Conveniences) {
  int size = gComm->size(), rank = gComm->rank();
  // sum(double) is an all-reduce: rank order in deterministic mode.
  double x = inputValue<double>(rank, 0, 500);
  double total = gComm->sum(x);
  std::vector<double> all(size);
  for (int r = 0; r < size; ++r)
    all[r] = inputValue<double>(r, 0, 500);
  double want = 0;
  sumInRankOrder(&want, all.data(), size, 1, DType::F64);
  if (gComm->deterministic())
    EXPECT_EQ(total, want);
  else
    EXPECT_NEAR(total, want, 1e-9);
  // sum(int64) is exact beyond 2^53, and wraps like the integers it sums.
  int64_t big = ((int64_t)1 << 60) + rank;
  int64_t wantBig = 0;
  for (int r = 0; r < size; ++r)
    wantBig = (int64_t)((uint64_t)wantBig + (uint64_t)(((int64_t)1 << 60) + r));
  EXPECT_EQ(gComm->sum(big), wantBig);
  EXPECT_EQ(gComm->sum((int64_t)-rank), -(int64_t)(size * (size - 1) / 2));
  EXPECT_EQ(gComm->max((double)rank * 1.5 - 10), (size - 1) * 1.5 - 10);
  EXPECT_TRUE(std::isnan(gComm->max(rank == size - 1 ? NAN : 1.0)));
  std::string path = "checkpoints/step-" + std::to_string(rank * 1000 + 7);
  EXPECT_EQ(gComm->broadcastString(path, size - 1),
            "checkpoints/step-" + std::to_string((size - 1) * 1000 + 7));
  EXPECT_EQ(gComm->broadcastString(rank == 0 ? "" : "not me", 0), "");
}

TEST(Collectives, WaitingTwiceFails) {
  float x = 1;
  CommHandle h = gComm->allReduce(&x, 1, DType::F32);
  gComm->wait(h);
  EXPECT_EQ(x, (float)gComm->size());
  EXPECT_THROW(gComm->wait(h), Error);
}

// --- the failure scenarios -------------------------------------------------

int runScenario(const std::string &scenario, const CommOptions &options) {
  try {
    std::unique_ptr<Comm> comm = openComm(options);
    std::vector<float> buf(1000, 1.0f);
    if (scenario == "timeout") {
      if (comm->rank() == 1) {
        std::this_thread::sleep_for(std::chrono::seconds(30));
        return 0;
      }
      comm->wait(comm->allReduce(buf.data(), 1000, DType::F32));
    } else if (scenario == "die") {
      if (comm->rank() == 1) {
        std::fprintf(stderr, "rank 1: exiting with status 3 on purpose\n");
        std::fflush(stderr);
        std::_Exit(3);
      }
      comm->wait(comm->allReduce(buf.data(), 1000, DType::F32));
    } else if (scenario == "throw") {
      if (comm->rank() == 1)
        fail("rank 1: failing on purpose before the all-reduce");
      comm->wait(comm->allReduce(buf.data(), 1000, DType::F32));
    } else if (scenario == "late") {
      comm->wait(comm->allReduce(buf.data(), 1000, DType::F32));
      if (comm->rank() == 1)
        std::this_thread::sleep_for(std::chrono::seconds(5));
    } else if (scenario == "mismatch") {
      if (comm->rank() == 1)
        comm->wait(comm->allGather(buf.data(), 1000 / comm->size(), DType::F32));
      else
        comm->wait(comm->allReduce(buf.data(), 1000, DType::F32));
    } else {
      std::fprintf(stderr, "error: unknown scenario '%s'\n", scenario.c_str());
      return 2;
    }
    std::printf("rank %d: finished\n", comm->rank());
    return 0;
  } catch (const Error &e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}

} // namespace

int main(int argc, char **argv) {
  ::testing::InitGoogleTest(&argc, argv);
  CommOptions options;
  options.timeoutSeconds = 60;
  std::string scenario = "collectives";
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--deterministic")
      options.deterministic = true;
    else if (a.rfind("--timeout=", 0) == 0)
      options.timeoutSeconds = std::atof(a.c_str() + 10);
    else if (a.rfind("--expect-size=", 0) == 0)
      gExpectSize = std::atoi(a.c_str() + 14);
    else if (a.rfind("--expect-backend=", 0) == 0)
      gExpectBackend = a.substr(17);
    else if (a.rfind("--scenario=", 0) == 0)
      scenario = a.substr(11);
    else {
      std::fprintf(stderr, "comm_worker: unknown argument '%s'\n", a.c_str());
      return 2;
    }
  }
  if (scenario != "collectives")
    return runScenario(scenario, options);
  int rc;
  try {
    std::unique_ptr<Comm> comm = openComm(options);
    gComm = comm.get();
    // Only rank 0 prints the suite's progress; failures print on every rank.
    if (comm->rank() != 0)
      GTEST_FLAG_SET(brief, true);
    rc = RUN_ALL_TESTS();
    // A rank whose checks failed must not leave the others waiting in
    // teardown: every rank learns whether all passed.
    int64_t failed = comm->sum((int64_t)(rc != 0));
    if (failed && rc == 0) {
      std::fprintf(stderr, "rank %d: %lld other rank(s) failed\n", comm->rank(),
                   (long long)failed);
      rc = 1;
    }
    gComm = nullptr;
  } catch (const Error &e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return rc;
}
