// zero = 3 checkpoint files, param by param (app/gathered_params.h,
// app/kept_params.h): N ranks, each holding the frozen params and its
// partition of the trainable group, save the same bytes -- file for file --
// as one process saving whole params, in both layouts (our names; the "hf"
// map with its concatenated, transposed and tied tensors), and the delta
// file too; loading a file into a rank's partition leaves exactly that
// rank's cut of the whole params. At 1, 2 and 4 ranks, the ranks being
// threads over an in-process communicator (ThreadComm below). And a
// truncated, corrupt or mistyped file still fails with its message on
// every rank, though a rank reads only its partition.
#include "app/gathered_params.h"
#include "app/kept_params.h"
#include "bmrt/checkpoint.h"
#include "bmrt/comm.h"
#include "bmrt/context.h"

#include "../io/tiny_gpt2_program.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace bmrt;

namespace {

#define EXPECT_HAS(message, needle)                                                        \
  EXPECT_NE(std::string(message).find(needle), std::string::npos)                          \
      << "message: " << (message) << "\nlacks: " << (needle)

// N threads as N ranks. Every collective completes at issue: the ranks meet,
// copy what they need from each other's buffers, and meet again. Only what
// a save uses (allGatherv, barrier) is there; the rest fails if called.
struct Board {
  explicit Board(int n) : n(n), bufs((size_t)n) {}
  int n;
  std::mutex m;
  std::condition_variable cv;
  int arrived = 0;
  int64_t generation = 0;
  std::vector<void *> bufs;

  void meet() {
    std::unique_lock<std::mutex> lock(m);
    const int64_t gen = generation;
    if (++arrived == n) {
      arrived = 0;
      ++generation;
      cv.notify_all();
    } else {
      cv.wait(lock, [&] { return generation != gen; });
    }
  }
};

class ThreadComm final : public Comm {
public:
  ThreadComm(Board &board, int rank) : board_(board), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return board_.n; }
  const char *backend() const override { return "threads"; }
  bool deterministic() const override { return true; }
  CommHandle allGatherv(void *buf, const int64_t *counts, DType dtype) override {
    const size_t elem = dtype == DType::F64 ? 8 : 4;
    board_.bufs[(size_t)rank_] = buf;
    board_.meet();
    int64_t at = 0;
    for (int q = 0; q < board_.n; ++q) {
      if (q != rank_)
        std::memcpy((char *)buf + at * elem, (const char *)board_.bufs[(size_t)q] + at * elem,
                    (size_t)counts[q] * elem);
      at += counts[q];
    }
    board_.meet(); // nobody's buffer changes before everyone has copied
    return CommHandle{0};
  }
  void wait(CommHandle) override {}
  void barrier() override { board_.meet(); }
  CommHandle allReduce(void *, int64_t, DType) override { fail("ThreadComm: no allReduce"); }
  CommHandle reduceScatter(void *, int64_t, DType) override {
    fail("ThreadComm: no reduceScatter");
  }
  CommHandle allGather(void *, int64_t, DType) override { fail("ThreadComm: no allGather"); }
  CommHandle broadcast(void *, int64_t, DType, int) override { fail("ThreadComm: no broadcast"); }

private:
  Board &board_;
  int rank_;
};

// The tiny GPT-2 (2 layers, dim 8, vocab 16, 4 positions) as a zero = 3
// training program lays it out: "wpe.w" frozen at 0; the trainable group
// from groupParamOffset, unit 0 (wte, ln_f) then one unit per layer, each
// stacked param's layers a unit apart (layer-major), packed without gaps so
// that partition boundaries cut through tensors and layers.
struct Zero3Program {
  std::unique_ptr<tiny_gpt2::Program> gpt = tiny_gpt2::make(2, 8, 16, 4);
  TrainInfo train{};

  Zero3Program() {
    std::vector<ParamInfo> &params = gpt->params;
    int64_t group = 0;
    for (ParamInfo &p : params)
      if (std::strcmp(p.name, "wpe.w") == 0) {
        p.frozen = true;
        p.offset = 0;
        group = paramSliceBytes(p);
      }
    int64_t at = 0; // bytes from the group's start
    for (ParamInfo &p : params)
      if (!p.frozen && !p.stacked) {
        p.gradOffset = at;
        at += paramSliceBytes(p);
      }
    int64_t unit = 0;
    for (ParamInfo &p : params)
      if (p.stacked) {
        p.gradOffset = at + unit;
        unit += paramSliceBytes(p);
      }
    for (ParamInfo &p : params)
      if (p.stacked)
        p.layerStride = unit;
    at += unit * params[2].shape[0];
    for (ParamInfo &p : params)
      if (!p.frozen)
        p.offset = group + p.gradOffset;
    train.zeroStage = 3;
    train.groupParamOffset = group;
    train.groupElems = at / 4;
    train.gradBytes = at;
    gpt->info.paramBytes = group + at;
    gpt->info.train = &train;
  }
  const ProgramInfo &info() const { return gpt->info; }
};

// Rank `rank` of `ranks`: partitions of ceil(elems / ranks) elements.
Partition partitionOf(int64_t elems, int rank, int ranks) {
  Partition part;
  part.size = (elems + ranks - 1) / ranks;
  part.total = part.size * ranks;
  part.begin = part.paramsFrom = rank * part.size;
  part.end = std::min<int64_t>(part.begin + part.size, elems);
  part.paramElems = ranks > 1 ? part.size : part.total;
  return part;
}

// What a rank's params allocation holds of whole params: the frozen span
// and elements [paramsFrom, end) of the group.
std::vector<uint8_t> cut(const Zero3Program &z, const std::vector<uint8_t> &whole,
                         const Partition &part) {
  const size_t group = (size_t)z.train.groupParamOffset;
  std::vector<uint8_t> held(group + (size_t)part.paramElems * 4, 0);
  std::memcpy(held.data(), whole.data(), group);
  std::memcpy(held.data() + group, whole.data() + group + part.paramsFrom * 4,
              (size_t)(part.end - part.paramsFrom) * 4);
  return held;
}

std::string readFile(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), {});
}

class ParamFiles : public ::testing::Test {
protected:
  std::string dir;
  Zero3Program z;
  std::vector<uint8_t> whole;

  void SetUp() override {
    char tmpl[] = "/tmp/bmrt-param-files-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir = tmpl;
    whole.assign((size_t)z.info().paramBytes, 0);
    std::mt19937 rng(7);
    std::normal_distribution<float> normal;
    for (size_t k = 0; k < whole.size(); k += 4) {
      float x = normal(rng);
      std::memcpy(whole.data() + k, &x, 4);
    }
    // The tied lm_head is wte itself: nothing to make equal.
  }
  void TearDown() override { (void)system(("rm -rf '" + dir + "'").c_str()); }

  // Every rank of `ranks` runs `body(rank, host)` on a thread with its cut of
  // `whole`, and its communicator.
  template <class F> void onRanks(int ranks, F body) {
    Board board(ranks);
    std::vector<std::string> errors((size_t)ranks);
    std::vector<std::thread> threads;
    for (int r = 0; r < ranks; ++r)
      threads.emplace_back([&, r] {
        Buffers host{};
        host.part = partitionOf(z.train.groupElems, r, ranks);
        std::vector<uint8_t> held = cut(z, whole, host.part);
        host.params = held.data();
        ThreadComm comm(board, r);
        try {
          body(r, host, comm);
        } catch (const Error &e) {
          errors[(size_t)r] = e.what();
        }
      });
    for (std::thread &t : threads)
      t.join();
    for (int r = 0; r < ranks; ++r)
      EXPECT_EQ(errors[(size_t)r], "") << "rank " << r << " of " << ranks;
  }

  // The message of loading `file` into rank `rank` of `ranks`' partition.
  std::string loadError(const std::string &file, int rank, int ranks) {
    Buffers host{};
    host.part = partitionOf(z.train.groupElems, rank, ranks);
    std::vector<uint8_t> held((size_t)(z.train.groupParamOffset + host.part.paramElems * 4), 0);
    host.params = held.data();
    try {
      loadCheckpoint(file, z.info(), KeptParams(z.info(), host));
    } catch (const Error &e) {
      return e.what();
    }
    return "(no error)";
  }
};

TEST_F(ParamFiles, SavedFilesEqualTheWholeParamsFiles) {
  saveDeltaCheckpoint(dir + "/whole-delta.safetensors", z.info(), whole.data());
  for (const char *map : {(const char *)nullptr, "hf"}) {
    const std::string name = map ? map : "ours";
    const std::string reference = dir + "/whole-" + name + ".safetensors";
    saveCheckpoint(reference, z.info(), whole.data(), map);
    for (int ranks : {1, 2, 4}) {
      const std::string file = dir + "/" + name + "-" + std::to_string(ranks) + ".safetensors";
      const std::string delta = dir + "/delta-" + std::to_string(ranks) + ".safetensors";
      onRanks(ranks, [&](int, const Buffers &host, Comm &comm) {
        EXPECT_EQ(paramsPartitioned(z.info(), host), ranks > 1);
        GatheredParams params(z.info(), host, comm);
        saveCheckpoint(file, z.info(), params, map);
        saveDeltaCheckpoint(delta, z.info(), params);
      });
      EXPECT_EQ(readFile(file), readFile(reference)) << name << " at " << ranks << " ranks";
      EXPECT_EQ(readFile(delta), readFile(dir + "/whole-delta.safetensors"))
          << "delta at " << ranks << " ranks";
    }
  }
}

TEST_F(ParamFiles, LoadingFillsEachRanksPartition) {
  saveDeltaCheckpoint(dir + "/delta.safetensors", z.info(), whole.data());
  for (const char *map : {(const char *)nullptr, "hf"}) {
    const std::string file = dir + "/" + (map ? map : "ours") + ".safetensors";
    saveCheckpoint(file, z.info(), whole.data(), map);
    for (int ranks : {1, 2, 4})
      for (int rank = 0; rank < ranks; ++rank) {
        Buffers host{};
        host.part = partitionOf(z.train.groupElems, rank, ranks);
        const std::vector<uint8_t> expected = cut(z, whole, host.part);
        std::vector<uint8_t> held(expected.size(), 0);
        host.params = held.data();
        LoadReport r = loadCheckpoint(file, z.info(), KeptParams(z.info(), host));
        EXPECT_EQ(r.nameMap, map ? map : "");
        EXPECT_EQ(held, expected) << (map ? map : "ours") << ", rank " << rank << " of "
                                  << ranks;
        // The delta file (the trainable params) over a zeroed partition.
        std::fill(held.begin() + z.train.groupParamOffset, held.end(), 0);
        loadDeltaCheckpoint(dir + "/delta.safetensors", z.info(), KeptParams(z.info(), host));
        EXPECT_EQ(held, expected) << "delta, rank " << rank << " of " << ranks;
      }
  }
}

TEST_F(ParamFiles, BadFilesFailOnEveryRank) {
  const std::string file = dir + "/model.safetensors";
  saveCheckpoint(file, z.info(), whole.data(), "hf");
  const std::string bytes = readFile(file);
  // Truncated: the last tensors' data is missing.
  {
    std::ofstream(dir + "/truncated.safetensors", std::ios::binary)
        << bytes.substr(0, bytes.size() - 100);
    for (int rank = 0; rank < 4; ++rank)
      EXPECT_HAS(loadError(dir + "/truncated.safetensors", rank, 4),
                 "lie beyond the data section");
  }
  // A corrupt header length.
  {
    std::string corrupt = bytes;
    corrupt[6] = (char)0x7f;
    std::ofstream(dir + "/corrupt.safetensors", std::ios::binary) << corrupt;
    for (int rank = 0; rank < 4; ++rank)
      EXPECT_HAS(loadError(dir + "/corrupt.safetensors", rank, 4), "exceeds the file size");
  }
  // ln_f.bias stored as I32 (same size, so the header stays valid): every
  // rank refuses it, also those whose partition does not meet ln_f.b.
  {
    std::string integer = bytes;
    const std::string key = "\"transformer.ln_f.bias\":{\"dtype\":\"F32\"";
    const size_t at = integer.find(key);
    ASSERT_NE(at, std::string::npos);
    integer.replace(at + key.size() - 4, 3, "I32");
    std::ofstream(dir + "/integer.safetensors", std::ios::binary) << integer;
    for (int rank = 0; rank < 4; ++rank)
      EXPECT_HAS(loadError(dir + "/integer.safetensors", rank, 4),
                 "tensor 'transformer.ln_f.bias' has dtype I32, but ln_f.b is F32");
  }
  // The tied lm_head.weight differs from wte in the last element: the rank
  // holding that element of wte says so (at resume the ranks then agree to
  // skip the checkpoint: train_checkpoint.cpp).
  {
    uint64_t header;
    std::memcpy(&header, bytes.data(), 8);
    std::string untied = bytes;
    const std::string key =
        "\"lm_head.weight\":{\"dtype\":\"F32\",\"shape\":[16,8],\"data_offsets\":[";
    const size_t at = bytes.find(key);
    ASSERT_NE(at, std::string::npos);
    const size_t end = std::stoull(bytes.substr(bytes.find(',', at + key.size()) + 1));
    untied[8 + header + end - 1] ^= 0x40;
    std::ofstream(dir + "/untied.safetensors", std::ios::binary) << untied;
    const int64_t wteLast = 16 * 8 - 1; // group element (wte is first in the group)
    for (int rank = 0; rank < 4; ++rank) {
      const Partition part = partitionOf(z.train.groupElems, rank, 4);
      const std::string message = loadError(dir + "/untied.safetensors", rank, 4);
      if (part.begin <= wteLast && wteLast < part.end)
        EXPECT_HAS(message, "tensor 'lm_head.weight' is declared tied to wte.w, but its values "
                            "differ");
      else
        EXPECT_EQ(message, "(no error)") << "rank " << rank;
    }
  }
}

} // namespace
