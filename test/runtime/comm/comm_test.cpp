// Unit tests of bmrt/comm.h that need one process: the rank-order sum
// against a plain loop, the single-process backend, the blocking
// conveniences on it, and openComm's reading of the environment.
#include "bmrt/comm.h"
#include "bmrt/context.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

using namespace bmrt;

namespace {

// The obvious loop sumInRankOrder must equal bitwise.
template <typename T> std::vector<T> loopSum(const std::vector<T> &src, int ranks, int64_t n) {
  std::vector<T> out((size_t)n);
  for (int64_t i = 0; i < n; ++i) {
    T acc = src[(size_t)i];
    for (int r = 1; r < ranks; ++r)
      acc = acc + src[(size_t)(r * n + i)];
    out[(size_t)i] = acc;
  }
  return out;
}

template <typename T> std::vector<T> randomValues(size_t count, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::vector<T> v(count);
  if constexpr (std::is_floating_point_v<T>) {
    // Magnitudes 2^-10 .. 2^10: sums round differently in another order.
    std::uniform_real_distribution<double> u(-1, 1);
    std::uniform_int_distribution<int> e(-10, 10);
    for (auto &x : v)
      x = (T)std::ldexp(u(rng), e(rng));
  } else {
    std::uniform_int_distribution<int32_t> u(-1000000, 1000000);
    for (auto &x : v)
      x = u(rng);
  }
  return v;
}

template <typename T> void checkSum(DType dtype) {
  for (int ranks : {1, 2, 3, 4, 7})
    for (int64_t n : {0, 1, 5, 1000, 4097}) {
      auto src = randomValues<T>((size_t)(ranks * n), (unsigned)(ranks * 131 + n));
      std::vector<T> dst((size_t)n + 1, T(-7)); // +1: nothing past n is touched
      sumInRankOrder(dst.data(), src.data(), ranks, n, dtype);
      auto want = loopSum(src, ranks, n);
      EXPECT_EQ(0, std::memcmp(dst.data(), want.data(), (size_t)n * sizeof(T)))
          << "ranks " << ranks << " n " << n;
      EXPECT_EQ(dst[(size_t)n], T(-7));
      // In place: dst is contribution 0.
      auto inPlace = src;
      sumInRankOrder(inPlace.data(), inPlace.data(), ranks, n, dtype);
      EXPECT_EQ(0, std::memcmp(inPlace.data(), want.data(), (size_t)n * sizeof(T)));
    }
}

TEST(SumInRankOrder, F32EqualsTheLoop) { checkSum<float>(DType::F32); }
TEST(SumInRankOrder, F64EqualsTheLoop) { checkSum<double>(DType::F64); }
TEST(SumInRankOrder, I32EqualsTheLoop) { checkSum<int32_t>(DType::I32); }

TEST(SumInRankOrder, IsRankOrderNotAnyOrder) {
  // (1e8 + 1) + -1e8 = 0 in float; 1e8 + (1 + -1e8) = 8 (1 - 1e8 rounds
  // to -99999992 in float). Rank order is the first.
  float src[3] = {1e8f, 1.0f, -1e8f};
  float dst = 0;
  sumInRankOrder(&dst, src, 3, 1, DType::F32);
  EXPECT_EQ(dst, 0.0f);
}

TEST(SumInRankOrder, I32Wraps) {
  int32_t src[2] = {INT32_MAX, 1};
  int32_t dst = 0;
  sumInRankOrder(&dst, src, 2, 1, DType::I32);
  EXPECT_EQ(dst, INT32_MIN);
}

TEST(SumInRankOrder, RefusesBadArguments) {
  float src[4] = {1, 2, 3, 4};
  EXPECT_THROW(sumInRankOrder(src, src, 0, 1, DType::F32), Error);
  EXPECT_THROW(sumInRankOrder(src, src, 2, -1, DType::F32), Error);
  EXPECT_THROW(sumInRankOrder(src, src, 2, 1, (DType)42), Error);
  // dst inside contribution 1: would read partly summed data.
  EXPECT_THROW(sumInRankOrder(src + 2, src, 2, 2, DType::F32), Error);
}

TEST(SingleComm, EveryCollectiveIsTheIdentity) {
  CommOptions options;
  options.deterministic = true;
  auto comm = makeSingleComm(options);
  EXPECT_EQ(comm->rank(), 0);
  EXPECT_EQ(comm->size(), 1);
  EXPECT_STREQ(comm->backend(), "single");
  EXPECT_TRUE(comm->deterministic());
  auto f = randomValues<float>(100, 1);
  auto d = randomValues<double>(100, 2);
  auto i = randomValues<int32_t>(100, 3);
  auto f0 = f;
  auto d0 = d;
  auto i0 = i;
  // Several in flight, waited out of order.
  CommHandle h[6] = {comm->allReduce(f.data(), 100, DType::F32),
                     comm->reduceScatter(d.data(), 100, DType::F64),
                     comm->allGather(i.data(), 100, DType::I32),
                     comm->broadcast(f.data(), 100, DType::F32, 0),
                     comm->allReduce(nullptr, 0, DType::F64),
                     comm->allGather(d.data(), 50, DType::F64)};
  for (int k = 5; k >= 0; --k)
    comm->wait(h[k]);
  comm->barrier();
  EXPECT_EQ(f, f0);
  EXPECT_EQ(d, d0);
  EXPECT_EQ(i, i0);
}

TEST(SingleComm, ChecksArgumentsAndHandles) {
  auto comm = makeSingleComm({});
  float x = 1;
  EXPECT_FALSE(comm->deterministic());
  EXPECT_THROW(comm->allReduce(&x, -1, DType::F32), Error);
  EXPECT_THROW(comm->allReduce(nullptr, 3, DType::F32), Error);
  EXPECT_THROW(comm->allReduce(&x, 1, (DType)9), Error);
  EXPECT_THROW(comm->broadcast(&x, 1, DType::F32, 1), Error);
  CommHandle h = comm->allReduce(&x, 1, DType::F32);
  comm->wait(h);
  try {
    comm->wait(h);
    FAIL() << "a second wait on one handle must fail";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("already waited"), std::string::npos) << e.what();
  }
  EXPECT_THROW(comm->wait(CommHandle{}), Error);
}

TEST(SingleComm, ReduceScatterInPiecesIsTheIdentity) {
  auto comm = makeSingleComm({});
  auto f = randomValues<float>(37, 4), f0 = f;
  const int64_t counts[1] = {37};
  comm->wait(comm->reduceScatterv(f.data(), counts, DType::F32));
  EXPECT_EQ(f, f0);
  const int64_t negative[1] = {-1};
  EXPECT_THROW(comm->reduceScatterv(f.data(), negative, DType::F32), Error);
  EXPECT_THROW(comm->reduceScatterv(nullptr, counts, DType::F32), Error);
}

TEST(SingleComm, AllGatherInPiecesIsTheIdentity) {
  auto comm = makeSingleComm({});
  auto f = randomValues<float>(37, 5), f0 = f;
  const int64_t counts[1] = {37};
  comm->wait(comm->allGatherv(f.data(), counts, DType::F32));
  EXPECT_EQ(f, f0);
  const int64_t negative[1] = {-1};
  try {
    comm->allGatherv(f.data(), negative, DType::F32);
    FAIL() << "a negative count must fail";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("all-gather in per-rank pieces: negative count -1"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(comm->allGatherv(nullptr, counts, DType::F32), Error);
}

// hold/take: one collective per key, handed back to the take of its tag.
TEST(Comm, HoldAndTakeOneCollectivePerKey) {
  auto comm = makeSingleComm({});
  CommHandle got;
  EXPECT_FALSE(comm->take(7, 1, got));
  comm->hold(7, 1, CommHandle{42});
  comm->hold(8, 1, CommHandle{43});
  try {
    comm->hold(7, 2, CommHandle{44});
    FAIL() << "a second hold under one key must fail";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("which already holds one for 1"), std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(comm->take(7, 1, got));
  EXPECT_EQ(got.id, 42);
  EXPECT_FALSE(comm->take(7, 1, got));
  EXPECT_THROW(comm->take(8, 2, got), Error);
}

// A backend without per-rank pieces refuses them by name (Comm's default;
// MPI, TCP, the single process and NCCL all have them).
TEST(Comm, ReduceScatterInPiecesFailsWhereNotImplemented) {
  struct Bare final : Comm {
    int rank() const override { return 1; }
    int size() const override { return 2; }
    const char *backend() const override { return "bare"; }
    bool deterministic() const override { return false; }
    CommHandle allReduce(void *, int64_t, DType) override { return {}; }
    CommHandle reduceScatter(void *, int64_t, DType) override { return {}; }
    CommHandle allGather(void *, int64_t, DType) override { return {}; }
    CommHandle broadcast(void *, int64_t, DType, int) override { return {}; }
    void wait(CommHandle) override {}
    void barrier() override {}
  } bare;
  float x[2] = {1, 2};
  const int64_t counts[2] = {1, 1};
  try {
    bare.reduceScatterv(x, counts, DType::F32);
    FAIL() << "the default reduceScatterv must fail";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("rank 1: the bare backend has no reduce-scatter in "
                                         "per-rank pieces yet, which zero = 2 needs"),
              std::string::npos)
        << e.what();
  }
  try {
    bare.allGatherv(x, counts, DType::F32);
    FAIL() << "the default allGatherv must fail";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("rank 1: the bare backend has no all-gather in "
                                         "per-rank pieces yet, which zero = 3 needs"),
              std::string::npos)
        << e.what();
  }
}

TEST(SingleComm, Conveniences) {
  auto comm = makeSingleComm({});
  EXPECT_EQ(comm->sum(2.5), 2.5);
  EXPECT_EQ(comm->sum((int64_t)-(1LL << 50)), -(1LL << 50));
  EXPECT_EQ(comm->max(-3.0), -3.0);
  EXPECT_TRUE(std::isnan(comm->max(NAN)));
  EXPECT_EQ(comm->broadcastString("step-12/model", 0), "step-12/model");
  EXPECT_EQ(comm->broadcastString("", 0), "");
  EXPECT_EQ(comm->broadcastString("abcde", 0), "abcde"); // not a multiple of 4 bytes
}

TEST(CommOf, FailsWithoutACommunicator) {
  Context ctx;
  try {
    commOf(ctx);
    FAIL() << "commOf must fail without Context::comm";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("Context::comm"), std::string::npos) << e.what();
  }
  auto comm = makeSingleComm({});
  ctx.comm = comm.get();
  EXPECT_EQ(&commOf(ctx), comm.get());
}

// --- openComm and the environment ------------------------------------------

class OpenComm : public ::testing::Test {
protected:
  void SetUp() override {
    for (const char *name : kNames)
      ::unsetenv(name);
  }
  void TearDown() override { SetUp(); }
  static std::string errorOf(const CommOptions &options = {}) {
    try {
      openComm(options);
    } catch (const Error &e) {
      return e.what();
    }
    return "(no error)";
  }
  static constexpr const char *kNames[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "RANK",
                                           "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT",
                                           "LOCAL_RANK"};
};

TEST_F(OpenComm, NothingSetIsASingleProcess) {
  CommOptions options;
  options.deterministic = true;
  auto comm = openComm(options);
  EXPECT_STREQ(comm->backend(), "single");
  EXPECT_EQ(comm->size(), 1);
  EXPECT_TRUE(comm->deterministic());
}

TEST_F(OpenComm, WorldSizeWithoutMasterIsAnError) {
  ::setenv("WORLD_SIZE", "2", 1);
  ::setenv("RANK", "0", 1);
  std::string e = errorOf();
  EXPECT_NE(e.find("MASTER_ADDR, MASTER_PORT"), std::string::npos) << e;
  EXPECT_NE(e.find("mpirun"), std::string::npos) << e;
}

TEST_F(OpenComm, RankWithoutWorldSizeIsAnError) {
  ::setenv("RANK", "1", 1);
  std::string e = errorOf();
  EXPECT_NE(e.find("RANK is set but WORLD_SIZE, MASTER_ADDR, MASTER_PORT"), std::string::npos)
      << e;
}

TEST_F(OpenComm, RankOutOfRangeIsAnError) {
  ::setenv("WORLD_SIZE", "4", 1);
  ::setenv("RANK", "4", 1);
  ::setenv("MASTER_ADDR", "127.0.0.1", 1);
  ::setenv("MASTER_PORT", "29500", 1);
  std::string e = errorOf();
  EXPECT_NE(e.find("RANK=4 is out of range for WORLD_SIZE=4"), std::string::npos) << e;
}

TEST_F(OpenComm, MalformedNumbersAreErrors) {
  ::setenv("WORLD_SIZE", "two", 1);
  ::setenv("RANK", "0", 1);
  ::setenv("MASTER_ADDR", "127.0.0.1", 1);
  ::setenv("MASTER_PORT", "29500", 1);
  EXPECT_NE(errorOf().find("WORLD_SIZE='two' is not an integer"), std::string::npos) << errorOf();
  ::setenv("WORLD_SIZE", "2", 1);
  ::setenv("MASTER_PORT", "70000", 1);
  EXPECT_NE(errorOf().find("MASTER_PORT='70000'"), std::string::npos) << errorOf();
  ::setenv("MASTER_PORT", "29500", 1);
  ::setenv("LOCAL_RANK", "-1", 1);
  EXPECT_NE(errorOf().find("LOCAL_RANK='-1'"), std::string::npos) << errorOf();
}

TEST_F(OpenComm, TcpWorldOfOneNeedsNoSockets) {
  ::setenv("WORLD_SIZE", "1", 1);
  ::setenv("RANK", "0", 1);
  ::setenv("MASTER_ADDR", "127.0.0.1", 1);
  ::setenv("MASTER_PORT", "1", 1); // never bound: one rank listens for nobody
  CommOptions options;
  options.timeoutSeconds = 1e300; // "forever", without overflowing the clock
  auto comm = openComm(options);
  EXPECT_STREQ(comm->backend(), "tcp");
  EXPECT_TRUE(comm->deterministic()); // the TCP backend always sums in rank order
  float x[3] = {1, 2, 3};
  comm->wait(comm->allReduce(x, 3, DType::F32));
  comm->barrier();
  EXPECT_EQ(x[2], 3.0f);
  EXPECT_EQ(comm->sum((int64_t)5), 5);
}

TEST_F(OpenComm, TcpRankCannotReachRankZero) {
  // Nobody listens on this port: rank 1 retries until its timeout, then
  // says where it tried to connect.
  ::setenv("WORLD_SIZE", "2", 1);
  ::setenv("RANK", "1", 1);
  ::setenv("MASTER_ADDR", "127.0.0.1", 1);
  ::setenv("MASTER_PORT", "9", 1); // discard: closed on a test machine
  CommOptions options;
  options.timeoutSeconds = 0.5;
  std::string e = errorOf(options);
  EXPECT_NE(e.find("rank 1: could not connect to rank 0 at 127.0.0.1:9 within 0.5 s"),
            std::string::npos)
      << e;
}

} // namespace
