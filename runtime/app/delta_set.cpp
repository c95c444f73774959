//===- app/delta_set.cpp - Holding deltas apart and copying one in --------===//
//
// Memory: each delta's tensors once (what its file holds), plus one pristine
// copy of every param a switch overwrites (the delta params, BitFit's
// biases) and of every weight a LoRA merge writes (merged programs only:
// for GPT-2 with LoRA on q and v, 2 x layers x dim x dim floats).
//
//===----------------------------------------------------------------------===//
#include "app/delta_set.h"
#include "app/tensors.h"

#include <cstring>

namespace bmrt {

static int64_t paramBytes(const ParamInfo &p) {
  int64_t n = dtypeBytes(p.dtype);
  for (int d = 0; d < p.rank; ++d)
    n *= p.shape[d];
  return n;
}

static int paramIndex(const ProgramInfo &program, const char *name) {
  for (int k = 0; k < program.numParams; ++k)
    if (std::strcmp(program.params[k].name, name) == 0)
      return k;
  fail(std::string("program '") + program.model + "': merged delta names no param '" + name + "'");
}

DeltaSet::DeltaSet(const ProgramInfo &program, void *params, const std::vector<DeltaFlag> &deltas)
    : program_(program), params_((uint8_t *)params) {
  // Fixed seed: the initializers only matter through their zero factor.
  initDeltaParams(program, params, 0);
  std::vector<bool> overwritten(program.numParams, false);
  for (int k = 0; k < program.numParams; ++k)
    overwritten[k] = program.params[k].delta;
  // Every file is checked against the same untouched backbone.
  for (const DeltaFlag &d : deltas) {
    deltas_.push_back({d.name, readDeltaCheckpoint(d.file, program, params)});
    for (const DeltaTensors::Tensor &t : deltas_.back().data.tensors) {
      overwritten[t.param] = true;
      deltaBytes_ += (int64_t)t.bytes.size();
    }
  }
  auto keep = [&](int k) {
    const ParamInfo &p = program.params[k];
    const uint8_t *at = params_ + p.offset;
    pristine_.push_back({k, std::vector<uint8_t>(at, at + paramBytes(p))});
    pristineBytes_ += paramBytes(p);
  };
  for (int k = 0; k < program.numParams; ++k)
    if (overwritten[k])
      keep(k);
  numOverwritten_ = pristine_.size();
  for (int m = 0; m < program.numMerges; ++m) {
    int k = paramIndex(program, program.merges[m].weight);
    if (!overwritten[k]) {
      keep(k);
      overwritten[k] = true; // two merges into one weight keep it once
    }
  }
}

const DeltaTensors::Tensor *DeltaSet::find(const Named *delta, int param) const {
  if (delta)
    for (const DeltaTensors::Tensor &t : delta->data.tensors)
      if (t.param == param)
        return &t;
  return nullptr;
}

std::string DeltaSet::knownNames() const {
  std::string names;
  for (const Named &d : deltas_)
    names += d.name + ", ";
  return names + kNoDelta;
}

bool DeltaSet::apply(const std::string &name, bool merge) {
  if (merge && name == current_)
    return false;
  const Named *delta = nullptr;
  if (name != kNoDelta) {
    for (const Named &d : deltas_)
      if (d.name == name)
        delta = &d;
    if (!delta)
      fail("no delta named '" + name + "' (loaded: " + knownNames() + ")");
  }
  // Merged weights back to the backbone's first; then every overwritten
  // param from the delta, or the backbone where the delta has none.
  for (size_t i = numOverwritten_; i < pristine_.size(); ++i)
    std::memcpy(params_ + program_.params[pristine_[i].param].offset, pristine_[i].bytes.data(),
                pristine_[i].bytes.size());
  for (size_t i = 0; i < numOverwritten_; ++i) {
    const DeltaTensors::Tensor *t = find(delta, pristine_[i].param);
    const DeltaTensors::Tensor &from = t ? *t : pristine_[i];
    std::memcpy(params_ + program_.params[from.param].offset, from.bytes.data(),
                from.bytes.size());
  }
  if (merge)
    mergeDeltas(program_, params_);
  current_ = merge ? name : std::string();
  return true;
}

} // namespace bmrt
