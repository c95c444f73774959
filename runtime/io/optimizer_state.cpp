//===- io/optimizer_state.cpp - A training run's optimizer state file -----===//
//
// optimizer.safetensors holds, for every trainable param in table order, its
// TrainInfo::optSlots slots as "<param>.<slot>" with the param's own shape
// (stacked params whole): torch's state names (exp_avg, exp_avg_sq for
// AdamW; momentum_buffer for SGD) so the file reads like a torch optimizer
// state_dict. Always our param names: the state only means something to the
// program that wrote it. Loading checks everything (every tensor present,
// shapes, nothing extra) before writing a byte, and is exact for f32 (a
// resumed run continues bit for bit).
//
//===----------------------------------------------------------------------===//
#include "bmrt/checkpoint.h"

#include "safetensors.h"

#include "bmrt/context.h"

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
  int64_t byteOffset; // into the optimizer-state allocation
  int64_t numel;
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
    int64_t numel = 1;
    std::vector<int64_t> shape;
    for (int d = 0; d < p.rank; ++d) {
      numel *= p.shape[d];
      shape.push_back(p.shape[d]);
    }
    const int64_t bytes = numel * (int64_t)paramDTypeSize(p.dtype);
    for (int s = 0; s < slots; ++s)
      out.push_back({std::string(p.name) + "." + slotName(train->optimizer, s), &p, shape,
                     p.optOffset + s * bytes, numel});
  }
  return out;
}

} // namespace

void saveOptimizerState(const std::string &file, const ProgramInfo &program,
                        const void *optState) {
  std::vector<OutTensor> out;
  const uint8_t *base = (const uint8_t *)optState;
  for (const StateTensor &t : stateTensors(program)) {
    int64_t at = t.byteOffset;
    out.push_back({t.name, t.param->dtype, t.shape,
                   [base, at](std::vector<uint8_t> &) -> const void * { return base + at; }});
  }
  writeSafetensors(file, out);
}

void loadOptimizerState(const std::string &file, const ProgramInfo &program, void *optState) {
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
  for (const StateTensor &w : wanted)
    f.read(*byName[w.name], w.param->dtype, (uint8_t *)optState + w.byteOffset,
           "optimizer state of " + std::string(w.param->name));
}

} // namespace bmrt
