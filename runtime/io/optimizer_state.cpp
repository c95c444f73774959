//===- io/optimizer_state.cpp - A training run's optimizer state file -----===//
//
// Two forms (checkpoint.h):
//  - whole: for every trainable param in table order, its TrainInfo::optSlots
//    slots as "<param>.<slot>" with the param's own shape (stacked params
//    whole): torch's state names (exp_avg, exp_avg_sq for AdamW;
//    momentum_buffer for SGD) so the file reads like a torch optimizer
//    state_dict;
//  - a partition (ZeRO, docs/distributed.md): one flat "<slot>" tensor per
//    slot holding the partition's elements of the trainable group.
// Always our param names: the state only means something to the program
// that wrote it. Loading fills the loading rank's partition from either form
// at any world size (the group's layout is the program's), checks everything
// (every tensor present, shapes, nothing extra) before writing a byte, and
// is exact (a resumed run continues bit for bit).
//
//===----------------------------------------------------------------------===//
#include "bmrt/checkpoint.h"

#include "param_slices.h"
#include "safetensors.h"

#include "bmrt/context.h"

#include <algorithm>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace bmrt {

using namespace io;

namespace {

struct StateTensor {
  std::string name;
  const ParamInfo *param;
  std::vector<int64_t> shape;
  int slot; // its place in the group: forEachLayerRange(*param)
};

const char *slotName(OptimizerKind kind, int slot) {
  if (kind == OptimizerKind::AdamW)
    return slot == 0 ? "exp_avg" : "exp_avg_sq";
  return "momentum_buffer";
}

std::vector<StateTensor> stateTensors(const ProgramInfo &program) {
  const TrainInfo *train = program.train;
  if (!train)
    fail(std::string("program ") + program.job + " is not a training program");
  const int slots = train->optSlots;
  if (slots < 0 || slots > 2 || (train->optimizer == OptimizerKind::SGD && slots > 1))
    fail(std::string("program ") + program.job + ": " + std::to_string(slots) +
         " optimizer slots per parameter (a bmbc bug)");
  std::vector<StateTensor> out;
  for (int i = 0; i < program.numParams; ++i) {
    const ParamInfo &p = program.params[i];
    if (p.optOffset < 0)
      continue;
    std::vector<int64_t> shape(p.shape, p.shape + p.rank);
    for (int s = 0; s < slots; ++s)
      out.push_back({std::string(p.name) + "." + slotName(train->optimizer, s), &p, shape, s});
  }
  return out;
}

// Where slot `slot` of group element `e` (inside the partition) lives.
uint8_t *stateAt(const Buffers &buf, DType dtype, int slot, int64_t e) {
  return (uint8_t *)buf.optState +
         (slot * buf.part.optStride + (e - buf.part.begin)) * (int64_t)paramDTypeSize(dtype);
}

bool wholeGroup(const ProgramInfo &program, const Buffers &buf) {
  return buf.part.begin == 0 && buf.part.end == program.train->groupElems;
}

// Copies elements [lo, hi) of the group from `t` (whose first element is
// group element `tensorBegin`) into slot `slot` of the partition.
void readPiece(const SafetensorsFile &f, const FileTensor &t, int64_t tensorBegin, int slot,
               int64_t lo, int64_t hi, DType dtype, const Buffers &buf, const std::string &what) {
  FileTensor piece = t;
  const uint64_t size = fileDTypeSize(t.dtype);
  piece.begin = t.begin + (uint64_t)(lo - tensorBegin) * size;
  piece.end = piece.begin + (uint64_t)(hi - lo) * size;
  piece.numel = hi - lo;
  f.read(piece, dtype, stateAt(buf, dtype, slot, lo), what);
}

// A param's elements in the group, one range per layer (the group is
// layer-major): calls f(first group element, its element in the param's
// contiguous tensor, count).
template <class F> void forEachLayerRange(const ParamInfo &p, F f) {
  const int64_t size = (int64_t)paramDTypeSize(p.dtype);
  const int64_t slice = paramSliceBytes(p) / size, stride = paramLayerStride(p) / size;
  for (int64_t l = 0; l < paramLayers(p); ++l)
    f(p.gradOffset / size + l * stride, l * slice, slice);
}

} // namespace

void saveOptimizerState(const std::string &file, const ProgramInfo &program, const Buffers &buf) {
  if (!wholeGroup(program, buf))
    fail("saveOptimizerState: this rank holds a partition of the optimizer state "
         "(saveOptimizerPartition writes it)");
  std::vector<OutTensor> out;
  const DType dtype = groupDType(program);
  for (const StateTensor &t : stateTensors(program)) {
    // Slot t.slot over the whole group has the group's layout: the param's
    // layers are a unit apart there too.
    const uint8_t *slot = stateAt(buf, dtype, t.slot, 0);
    const ParamInfo *p = t.param;
    out.push_back({t.name, t.param->dtype, t.shape,
                   [slot, p](std::vector<uint8_t> &scratch) -> const void * {
                     scratch = wholeParamOut(*p, slot, p->gradOffset);
                     return scratch.data();
                   }});
  }
  writeSafetensors(file, out);
}

void saveOptimizerPartition(const std::string &file, const ProgramInfo &program,
                            const Buffers &buf) {
  const TrainInfo &train = *program.train;
  const DType dtype = groupDType(program);
  std::vector<OutTensor> out;
  for (int s = 0; s < train.optSlots; ++s) {
    const uint8_t *at = stateAt(buf, dtype, s, buf.part.begin);
    out.push_back({slotName(train.optimizer, s), dtype, {buf.part.end - buf.part.begin},
                   [at](std::vector<uint8_t> &) -> const void * { return at; }});
  }
  writeSafetensors(file, out);
}

void loadOptimizerState(const std::string &file, const ProgramInfo &program, const Buffers &buf) {
  std::vector<StateTensor> wanted = stateTensors(program);
  SafetensorsFile f = SafetensorsFile::open(file);
  std::unordered_map<std::string, const FileTensor *> byName;
  for (const FileTensor &t : f.tensors())
    byName[t.name] = &t;
  std::unordered_set<std::string> used;
  for (const StateTensor &w : wanted) {
    auto it = byName.find(w.name);
    if (it == byName.end())
      fail(file + ": missing optimizer state tensor '" + w.name +
           "' (the state of another model or optimizer?)");
    if (it->second->shape != w.shape)
      fail(file + ": optimizer state tensor '" + w.name + "' has shape " +
           shapeString(it->second->shape) + ", expected " + shapeString(w.shape));
    used.insert(w.name);
  }
  for (const FileTensor &t : f.tensors())
    if (!used.count(t.name))
      fail(file + ": unexpected optimizer state tensor '" + t.name +
           "' (the state of another model or optimizer?)");
  const DType dtype = groupDType(program);
  for (const StateTensor &w : wanted)
    forEachLayerRange(*w.param, [&](int64_t groupAt, int64_t tensorAt, int64_t n) {
      const int64_t lo = std::max(groupAt, buf.part.begin);
      const int64_t hi = std::min(groupAt + n, buf.part.end);
      // The tensor's element tensorAt is group element groupAt.
      if (lo < hi)
        readPiece(f, *byName[w.name], groupAt - tensorAt, w.slot, lo, hi, dtype, buf,
                  "optimizer state of " + std::string(w.param->name));
    });
}

void loadOptimizerPartitions(const std::vector<std::string> &files, int64_t partitionSize,
                             const ProgramInfo &program, const Buffers &buf) {
  const TrainInfo &train = *program.train;
  const DType dtype = groupDType(program);
  const int64_t ranks = (int64_t)files.size();
  if (ranks < 1 || partitionSize < 1 || partitionSize * ranks < train.groupElems)
    fail("optimizer state in " + std::to_string(ranks) + " partitions of " +
         std::to_string(partitionSize) + " elements does not cover the " +
         std::to_string(train.groupElems) + " trainable elements (another program's?)");
  // Open and check every file first: nothing is written unless all are right.
  std::vector<SafetensorsFile> opened;
  for (int64_t r = 0; r < ranks; ++r) {
    const int64_t begin = std::min(r * partitionSize, train.groupElems);
    const int64_t end = std::min(begin + partitionSize, train.groupElems);
    opened.push_back(SafetensorsFile::open(files[(size_t)r]));
    const SafetensorsFile &f = opened.back();
    if ((int)f.tensors().size() != train.optSlots)
      fail(files[(size_t)r] + ": " + std::to_string(f.tensors().size()) +
           " optimizer state tensors, expected " + std::to_string(train.optSlots));
    for (int s = 0; s < train.optSlots; ++s) {
      const char *name = slotName(train.optimizer, s);
      const FileTensor *t = nullptr;
      for (const FileTensor &x : f.tensors())
        if (x.name == name)
          t = &x;
      if (!t)
        fail(files[(size_t)r] + ": missing optimizer state tensor '" + name + "'");
      if (t->shape != std::vector<int64_t>{end - begin})
        fail(files[(size_t)r] + ": '" + name + "' has shape " + shapeString(t->shape) +
             ", expected [" + std::to_string(end - begin) + "]");
    }
  }
  for (int64_t r = 0; r < ranks; ++r) {
    const int64_t begin = std::min(r * partitionSize, train.groupElems);
    const int64_t lo = std::max(begin, buf.part.begin);
    const int64_t hi = std::min(std::min(begin + partitionSize, train.groupElems), buf.part.end);
    if (lo >= hi)
      continue;
    for (int s = 0; s < train.optSlots; ++s)
      for (const FileTensor &t : opened[(size_t)r].tensors())
        if (t.name == slotName(train.optimizer, s))
          readPiece(opened[(size_t)r], t, begin, s, lo, hi, dtype, buf, "optimizer state");
  }
}

} // namespace bmrt
