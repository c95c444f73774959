//===- data_test.cpp - Token files and batches -----------------------------===//
//
// Token files: round trips at both widths (and the 65536 boundary), atomic
// write leaving nothing behind on failure, and every validation error of
// TokenFile::open, each naming the file. Batches: sequential order covers
// the split, random order is a pure function of (seed, step), targets are the
// inputs shifted by one, train and eval splits are disjoint, and the saved
// DataState resumes exactly.
//
//===----------------------------------------------------------------------===//
#include "bmrt/context.h"
#include "bmrt/tokens.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <set>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

using namespace bmrt;

std::string tempPath(const std::string &name) {
  return ::testing::TempDir() + "bmrt_data_" + std::to_string(getpid()) + "_" + name;
}

std::string readBytes(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void writeBytes(const std::string &path, const std::string &bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

// The message of the bmrt::Error `f` throws ("" if none).
template <typename F> std::string errorOf(F f) {
  try {
    f();
  } catch (const Error &e) {
    return e.what();
  }
  return "";
}

std::string openError(const std::string &path) {
  return errorOf([&] { TokenFile::open(path); });
}

// Rewrites the checksum field so that only the intended damage is seen.
void fixChecksum(std::string &bytes) {
  uint64_t sum = tokenChecksum(bytes.data() + kTokenFileHeaderBytes, bytes.size() - kTokenFileHeaderBytes);
  memcpy(&bytes[32], &sum, 8);
}

std::vector<int32_t> iota(int32_t n) {
  std::vector<int32_t> v(n);
  for (int32_t i = 0; i < n; ++i)
    v[i] = i;
  return v;
}

TEST(TokenFile, RoundTripUint16) {
  std::string path = tempPath("u16.tok");
  std::vector<int32_t> ids;
  for (int i = 0; i < 5000; ++i)
    ids.push_back((i * 7919) % 1000);
  writeTokenFile(path, ids, 1000);
  EXPECT_EQ(readBytes(path).size(), kTokenFileHeaderBytes + 2 * ids.size());
  TokenFile f = TokenFile::open(path);
  EXPECT_EQ(f.size(), ids.size());
  EXPECT_EQ(f.vocabSize(), 1000u);
  EXPECT_EQ(f.idBytes(), 2);
  EXPECT_EQ(f.all(), ids);
  EXPECT_EQ(f.at(4999), ids[4999]);
  EXPECT_NE(errorOf([&] { std::vector<int32_t> x(2); f.copy(4999, 2, x.data()); }).find(path),
            std::string::npos);
  TokenFile moved = std::move(f);
  EXPECT_EQ(moved.at(1), ids[1]);
  unlink(path.c_str());
}

TEST(TokenFile, RoundTripUint32AndBoundary) {
  std::string path = tempPath("u32.tok");
  std::vector<int32_t> ids = {0, 69999, 65536, 65535, 12345};
  writeTokenFile(path, ids, 70000);
  TokenFile f = TokenFile::open(path);
  EXPECT_EQ(f.idBytes(), 4);
  EXPECT_EQ(f.all(), ids);
  EXPECT_EQ(readBytes(path).size(), kTokenFileHeaderBytes + 4 * ids.size());

  writeTokenFile(path, {65535, 0}, 65536); // the largest uint16 vocabulary
  EXPECT_EQ(TokenFile::open(path).idBytes(), 2);
  EXPECT_EQ(TokenFile::open(path).all(), (std::vector<int32_t>{65535, 0}));
  writeTokenFile(path, {65536}, 65537);
  EXPECT_EQ(TokenFile::open(path).idBytes(), 4);
  writeTokenFile(path, {}, 10); // empty is a valid file
  EXPECT_EQ(TokenFile::open(path).size(), 0u);
  unlink(path.c_str());
}

TEST(TokenFile, WriteRefusesBadIdsAndLeavesNothing) {
  std::string path = tempPath("refused.tok");
  unlink(path.c_str());
  std::string e = errorOf([&] { writeTokenFile(path, {1, 2, 10}, 10); });
  EXPECT_NE(e.find(path), std::string::npos) << e;
  EXPECT_NE(e.find("id 10 at position 2"), std::string::npos) << e;
  e = errorOf([&] { writeTokenFile(path, {-1}, 10); });
  EXPECT_NE(e.find("id -1"), std::string::npos) << e;
  EXPECT_NE(access(path.c_str(), F_OK), 0);
  e = errorOf([&] { writeTokenFile(tempPath("no-such-dir/x.tok"), {1}, 10); });
  EXPECT_NE(e.find("cannot write"), std::string::npos) << e;
  // Overwriting keeps the old file until the new one is complete: a failed
  // write leaves the previous contents.
  writeTokenFile(path, {1, 2, 3}, 10);
  EXPECT_NE(errorOf([&] { writeTokenFile(path, {99}, 10); }), "");
  EXPECT_EQ(TokenFile::open(path).all(), (std::vector<int32_t>{1, 2, 3}));
  unlink(path.c_str());
}

struct BadFileCase {
  const char *name;
  void (*damage)(std::string &bytes);
  const char *expect;
};

TEST(TokenFile, EveryBadFileError) {
  std::string good = tempPath("good.tok");
  writeTokenFile(good, {5, 6, 7, 8, 9}, 100);
  const std::string base = readBytes(good);
  const BadFileCase cases[] = {
      {"empty", [](std::string &b) { b.clear(); }, "truncated header (0 bytes"},
      {"short-header", [](std::string &b) { b.resize(20); }, "truncated header (20 bytes"},
      {"bad-magic", [](std::string &b) { b[0] = 'X'; }, "bad magic"},
      {"bad-version", [](std::string &b) { b[8] = 9; }, "unsupported token file version 9"},
      {"bad-width", [](std::string &b) { b[12] = 3; }, "id width 3 (must be 2 or 4)"},
      {"width-vocab", [](std::string &b) { b[12] = 4; }, "does not match vocab size 100"},
      {"zero-vocab", [](std::string &b) { memset(&b[24], 0, 8); }, "vocab size 0 is out of range"},
      {"reserved", [](std::string &b) { b[50] = 1; }, "reserved header byte 50"},
      {"truncated-body", [](std::string &b) { b.resize(b.size() - 3); },
       "truncated token file: header says 5 ids (10 bytes) but only 7 bytes"},
      {"count-mismatch-extra", [](std::string &b) { b += std::string(4, '\0'); },
       "count mismatch: header says 5 ids but 14 bytes"},
      {"count-mismatch-header", [](std::string &b) { b[16] = 3; },
       "count mismatch: header says 3 ids but 10 bytes"},
      {"checksum", [](std::string &b) { b[64] = 6; }, "checksum mismatch"},
      {"id-out-of-vocab",
       [](std::string &b) {
         b[64 + 2 * 3] = 100; // id 3 := 100 with vocab 100
         fixChecksum(b);
       },
       "id 100 at position 3 is >= the vocab size 100"},
  };
  for (const BadFileCase &c : cases) {
    std::string bytes = base;
    c.damage(bytes);
    std::string path = tempPath(std::string(c.name) + ".tok");
    writeBytes(path, bytes);
    std::string e = openError(path);
    EXPECT_NE(e.find(path), std::string::npos) << c.name << ": " << e;
    EXPECT_NE(e.find(c.expect), std::string::npos) << c.name << ": " << e;
    unlink(path.c_str());
  }
  std::string missing = tempPath("missing.tok");
  std::string e = openError(missing);
  EXPECT_NE(e.find(missing + ": cannot open token file"), std::string::npos) << e;
  unlink(good.c_str());
}

// A file whose id i is i, so a batch shows which positions it read.
struct PositionsFile {
  std::string path;
  TokenFile file;
  explicit PositionsFile(int32_t n, const char *name)
      : path(tempPath(name)), file((writeTokenFile(path, iota(n), (uint64_t)n), TokenFile::open(path))) {}
  ~PositionsFile() { unlink(path.c_str()); }
};

TEST(TokenBatches, SequentialCoversTheFile) {
  PositionsFile pf(1000, "seq.tok");
  const int64_t B = 3, T = 16;
  TokenBatches batches(pf.file, B, T, DataSplit::Train, BatchOrder::Sequential, 0, 0.0);
  EXPECT_EQ(batches.windows(), (1000u - 1) / 16);
  std::vector<int32_t> in(B * T), tg(B * T);
  std::set<int32_t> seen, targets;
  for (uint64_t s = 0; s < batches.stepsPerEpoch(); ++s) {
    batches.next(in.data(), tg.data());
    for (int64_t i = 0; i < B * T; ++i) {
      seen.insert(in[i]);
      seen.insert(tg[i]);
      targets.insert(tg[i]);
    }
  }
  // Every token but a tail shorter than T is read, every one but the first
  // is a target.
  uint64_t covered = batches.windows() * T + 1;
  EXPECT_GT(covered + T, 1000u);
  for (int32_t p = 0; p < (int32_t)covered; ++p) {
    EXPECT_TRUE(seen.count(p)) << p;
    if (p > 0) {
      EXPECT_TRUE(targets.count(p)) << p;
    }
  }
  // Window w starts at w * T; the epoch wraps around.
  EXPECT_EQ(batches.windowStart(0, 1), 16u);
  EXPECT_EQ(batches.windowStart(batches.windows(), 0), 0u); // window W * B mod W
}

TEST(TokenBatches, TargetsAreInputsShiftedByOne) {
  PositionsFile pf(5000, "shift.tok");
  for (BatchOrder order : {BatchOrder::Sequential, BatchOrder::Random}) {
    TokenBatches batches(pf.file, 4, 32, DataSplit::Train, order, 11, 0.0);
    std::vector<int32_t> in(4 * 32), tg(4 * 32);
    for (uint64_t step : {0ull, 1ull, 77ull, 123456789ull}) {
      batches.batchAt(step, in.data(), tg.data());
      for (int b = 0; b < 4; ++b) {
        EXPECT_EQ(in[b * 32], (int32_t)batches.windowStart(step, b));
        for (int t = 0; t < 32; ++t) {
          EXPECT_EQ(tg[b * 32 + t], in[b * 32 + t] + 1);
          if (t + 1 < 32) {
            EXPECT_EQ(tg[b * 32 + t], in[b * 32 + t + 1]);
          }
        }
      }
    }
  }
}

TEST(TokenBatches, RandomIsReproducibleBySeedAndStep) {
  PositionsFile pf(100000, "random.tok");
  const int64_t B = 8, T = 64;
  TokenBatches a(pf.file, B, T, DataSplit::Train, BatchOrder::Random, 1234, 0.0);
  TokenBatches b(pf.file, B, T, DataSplit::Train, BatchOrder::Random, 1234, 0.0);
  TokenBatches other(pf.file, B, T, DataSplit::Train, BatchOrder::Random, 1235, 0.0);
  std::vector<int32_t> in1(B * T), tg1(B * T), in2(B * T), tg2(B * T);
  // Asked in a different order, the same step gives the same batch.
  std::vector<std::vector<int32_t>> forward;
  for (uint64_t s = 0; s < 20; ++s) {
    a.batchAt(s, in1.data(), tg1.data());
    forward.push_back(in1);
  }
  for (uint64_t s = 20; s-- > 0;) {
    b.batchAt(s, in2.data(), tg2.data());
    EXPECT_EQ(in2, forward[s]) << s;
  }
  EXPECT_NE(forward[0], forward[1]);
  other.batchAt(0, in2.data(), tg2.data());
  EXPECT_NE(in2, forward[0]);
  // Starts spread over the whole range and keep the window inside it.
  uint64_t lo = UINT64_MAX, hi = 0;
  for (uint64_t s = 0; s < 2000; ++s)
    for (int64_t i = 0; i < B; ++i) {
      uint64_t start = a.windowStart(s, i);
      lo = std::min(lo, start), hi = std::max(hi, start);
      ASSERT_LE(start + T + 1, 100000u);
    }
  EXPECT_LT(lo, 100u);
  EXPECT_GT(hi, 100000u - T - 200);
}

TEST(TokenBatches, ResumeFromSavedState) {
  PositionsFile pf(20000, "resume.tok");
  for (BatchOrder order : {BatchOrder::Sequential, BatchOrder::Random}) {
    TokenBatches run(pf.file, 2, 16, DataSplit::Train, order, 99, 0.05);
    std::vector<int32_t> in(32), tg(32), in2(32), tg2(32);
    for (int i = 0; i < 37; ++i)
      run.next(in.data(), tg.data());
    DataState saved = run.state();
    EXPECT_EQ(saved.step, 37u);
    EXPECT_EQ(run.position(), 37u);
    TokenBatches resumed(pf.file, 2, 16, DataSplit::Train, order, 99, 0.05);
    resumed.restore(saved);
    for (int i = 0; i < 5; ++i) {
      run.next(in.data(), tg.data());
      resumed.next(in2.data(), tg2.data());
      EXPECT_EQ(in, in2);
      EXPECT_EQ(tg, tg2);
    }
    TokenBatches otherSeed(pf.file, 2, 16, DataSplit::Train, order, 98, 0.05);
    EXPECT_NE(errorOf([&] { otherSeed.restore(saved); }).find("seed 99"), std::string::npos);
  }
  PositionsFile other(20001, "resume2.tok");
  TokenBatches elsewhere(other.file, 2, 16, DataSplit::Train, BatchOrder::Random, 99, 0.05);
  TokenBatches here(pf.file, 2, 16, DataSplit::Train, BatchOrder::Random, 99, 0.05);
  EXPECT_NE(errorOf([&] { elsewhere.restore(here.state()); }).find("another token file"), std::string::npos);
}

TEST(TokenBatches, HeldOutSplitIsDisjoint) {
  PositionsFile pf(10000, "split.tok");
  const int64_t B = 4, T = 32;
  TokenBatches train(pf.file, B, T, DataSplit::Train, BatchOrder::Random, 5, 0.1);
  TokenBatches eval(pf.file, B, T, DataSplit::Eval, BatchOrder::Sequential, 5, 0.1);
  TokenBatches evalRandom(pf.file, B, T, DataSplit::Eval, BatchOrder::Random, 5, 0.1);
  EXPECT_EQ(train.begin(), 0u);
  EXPECT_EQ(train.end(), 9000u);
  EXPECT_EQ(eval.begin(), 9000u);
  EXPECT_EQ(eval.end(), 10000u);
  std::vector<int32_t> in(B * T), tg(B * T);
  for (uint64_t s = 0; s < 3000; ++s) {
    train.batchAt(s, in.data(), tg.data());
    for (int64_t i = 0; i < B * T; ++i)
      ASSERT_LT(tg[i], 9000) << "train step " << s;
    evalRandom.batchAt(s, in.data(), tg.data());
    for (int64_t i = 0; i < B * T; ++i)
      ASSERT_GE(in[i], 9000) << "eval step " << s;
  }
  std::set<int32_t> evalSeen;
  for (uint64_t s = 0; s < eval.stepsPerEpoch(); ++s) {
    eval.batchAt(s, in.data(), tg.data());
    for (int64_t i = 0; i < B * T; ++i) {
      ASSERT_GE(in[i], 9000);
      evalSeen.insert(tg[i]);
    }
  }
  EXPECT_GE(evalSeen.size(), 1000u - T);
  // The held-out part is rounded up: 0.1% of 10000 ids is 10, not 0.
  TokenBatches tiny(pf.file, 1, 4, DataSplit::Eval, BatchOrder::Sequential, 0, 0.001);
  EXPECT_EQ(tiny.begin(), 9990u);
}

TEST(TokenBatches, BadSettingsFail) {
  PositionsFile pf(100, "bad.tok");
  auto make = [&](int64_t b, int64_t t, DataSplit split, double frac) {
    return errorOf([&] { TokenBatches x(pf.file, b, t, split, BatchOrder::Random, 0, frac); });
  };
  EXPECT_NE(make(1, 100, DataSplit::Train, 0).find("fewer than sequence length + 1"), std::string::npos);
  EXPECT_EQ(make(1, 99, DataSplit::Train, 0), "");
  EXPECT_NE(make(1, 10, DataSplit::Eval, 0).find("eval split is empty"), std::string::npos);
  EXPECT_NE(make(1, 10, DataSplit::Eval, 0.05).find("eval split has 5 tokens"), std::string::npos);
  EXPECT_NE(make(0, 10, DataSplit::Train, 0).find(">= 1"), std::string::npos);
  EXPECT_NE(make(1, 10, DataSplit::Train, 1.0).find("held-out fraction"), std::string::npos);
  EXPECT_NE(make(1, 1000, DataSplit::Train, 0).find(pf.path), std::string::npos);
}

} // namespace
