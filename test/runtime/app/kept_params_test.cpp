// app/kept_params: under zero = 3, initialising param by param into the
// rank's partition (initKeptParams) leaves exactly the bytes that
// initialising whole params and cutting out the frozen span and the
// partition leaves, on every rank: a frozen param, and a trainable stacked
// param whose layers are a unit apart in the layer-major group and cut by
// partition boundaries.
#include "app/kept_params.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

using namespace bmrt;

namespace {

// Frozen "f" [3] at 0; the group at byte 16: unit 0 = "e" [4], then two
// layer units of "w" [5] and "b" [2] (7 elements each); 18 elements.
constexpr int64_t kGroupOffset = 16, kGroupElems = 4 + 2 * 7;

ParamInfo param(const char *name, int rank, std::vector<int64_t> shape, int64_t offset) {
  ParamInfo p{};
  p.name = name;
  p.dtype = DType::F32;
  p.rank = rank;
  for (int d = 0; d < rank; ++d)
    p.shape[d] = shape[d];
  p.offset = offset;
  p.init = InitKind::Normal;
  p.initA = 1.0;
  return p;
}

std::vector<ParamInfo> table() {
  ParamInfo f = param("f", 1, {3}, 0);
  f.frozen = true;
  ParamInfo e = param("e", 1, {4}, kGroupOffset);
  e.gradOffset = 0;
  ParamInfo w = param("w", 2, {2, 5}, kGroupOffset + 4 * 4);
  w.stacked = true;
  w.gradOffset = 4 * 4;
  w.layerStride = 7 * 4;
  ParamInfo b = param("b", 2, {2, 2}, kGroupOffset + 9 * 4);
  b.stacked = true;
  b.gradOffset = 9 * 4;
  b.layerStride = 7 * 4;
  return {f, e, w, b};
}

TEST(KeptParams, InitEqualsWholeThenKeep) {
  std::vector<ParamInfo> params = table();
  TrainInfo train{};
  train.zeroStage = 3;
  train.groupParamOffset = kGroupOffset;
  train.groupElems = kGroupElems;
  train.gradBytes = kGroupElems * 4;
  ProgramInfo program{};
  program.model = "kept";
  program.params = params.data();
  program.numParams = (int)params.size();
  program.paramBytes = kGroupOffset + kGroupElems * 4;
  program.train = &train;
  for (int ranks : {1, 2, 3, 4})
    for (int rank = 0; rank < ranks; ++rank) {
      Partition part;
      part.size = (kGroupElems + ranks - 1) / ranks;
      part.total = part.size * ranks;
      part.begin = part.paramsFrom = rank * part.size;
      part.end = std::min<int64_t>(part.begin + part.size, kGroupElems);
      part.paramElems = ranks > 1 ? part.size : part.total;
      if (ranks == 1)
        part.paramsFrom = 0;
      const size_t bytes = (size_t)(kGroupOffset + part.paramElems * 4);
      // Zeroed, as the params allocation is (app/buffers.cpp): the copy of
      // the frozen span copies the padding after "f" too.
      std::vector<uint8_t> viaWhole(bytes, 0), kept(bytes, 0);
      Buffers host{};
      host.part = part;
      host.params = viaWhole.data();
      {
        std::vector<uint8_t> whole((size_t)program.paramBytes, 0);
        initParams(program, whole.data(), 7);
        std::memcpy(viaWhole.data(), whole.data(), (size_t)kGroupOffset); // the frozen span
        std::memcpy(viaWhole.data() + kGroupOffset,
                    whole.data() + kGroupOffset + part.paramsFrom * 4,
                    (size_t)(part.end - part.paramsFrom) * 4);
      }
      host.params = kept.data();
      initKeptParams(program, host, 7);
      EXPECT_EQ(std::memcmp(viaWhole.data(), kept.data(), bytes), 0)
          << "rank " << rank << " of " << ranks;
      EXPECT_EQ(paramsPartitioned(program, host), ranks > 1);
    }
}

} // namespace
