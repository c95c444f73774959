//===- io/delta_checkpoint.cpp - Delta-only checkpoints -------------------===//
//
// A delta-tuned model is a large frozen backbone plus a few trained tensors.
// A delta checkpoint holds only the latter, under our names, and pins the
// backbone by a hash in its safetensors metadata:
//   "bmb.delta_of":    the model's name;
//   "bmb.backbone":    FNV-1a 64 (hex) of every param the file does not hold,
//                      in name order, over (name, 0, dtype, shape, bytes).
// Loading one recomputes the hash over the backbone loaded before it and
// refuses a mismatch: deltas tuned on other weights would load silently and
// compute nonsense.
//
//===----------------------------------------------------------------------===//
#include "param_slices.h"
#include "safetensors.h"

#include "bmrt/checkpoint.h"
#include "bmrt/context.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <functional>
#include <set>

namespace bmrt {

using namespace io;

namespace {

constexpr const char *kDeltaOf = "bmb.delta_of";
constexpr const char *kBackbone = "bmb.backbone";

int64_t numel(const ParamInfo &p) {
  int64_t n = 1;
  for (int d = 0; d < p.rank; ++d)
    n *= p.shape[d];
  return n;
}

struct Hash {
  uint64_t h = 0xcbf29ce484222325ull;
  void add(const void *data, size_t n) {
    const uint8_t *b = (const uint8_t *)data;
    for (size_t k = 0; k < n; ++k)
      h = (h ^ b[k]) * 0x100000001b3ull;
  }
};

/// A whole param's bytes in its logical layout (a pointer into the params,
/// or built in the scratch).
using WholeParamFn =
    std::function<const uint8_t *(const ParamInfo &p, std::vector<uint8_t> &scratch)>;

WholeParamFn fromParams(const void *params) {
  return [params](const ParamInfo &p, std::vector<uint8_t> &scratch) {
    scratch = wholeParamOut(p, (const uint8_t *)params, p.offset);
    return (const uint8_t *)scratch.data();
  };
}

// The backbone is whole in every target (frozen params are not partitioned).
WholeParamFn fromTarget(const ProgramInfo &program, const ParamTarget &target) {
  return [&program, &target](const ParamInfo &p, std::vector<uint8_t> &scratch) {
    const int64_t bytes = numel(p) * (int64_t)paramDTypeSize(p.dtype);
    std::vector<ParamTarget::Piece> pieces;
    target.held(p, 0, bytes, pieces);
    scratch.resize((size_t)bytes);
    int64_t covered = 0;
    for (const ParamTarget::Piece &piece : pieces) {
      memcpy(scratch.data() + piece.from, piece.at, (size_t)piece.n);
      covered += piece.n;
    }
    if (covered != bytes)
      fail(std::string("program '") + program.model + "': the backbone param '" + p.name +
           "' is not held whole by this process (a bmrt bug: only trainable params are "
           "partitioned)");
    return (const uint8_t *)scratch.data();
  };
}

/// The hash of the params not in `held`.
std::string backboneHash(const ProgramInfo &program, const WholeParamFn &whole,
                         const std::set<std::string> &held) {
  std::vector<const ParamInfo *> rest;
  for (int k = 0; k < program.numParams; ++k)
    if (!held.count(program.params[k].name))
      rest.push_back(&program.params[k]);
  std::sort(rest.begin(), rest.end(),
            [](const ParamInfo *a, const ParamInfo *b) { return strcmp(a->name, b->name) < 0; });
  Hash h;
  std::vector<uint8_t> scratch;
  for (const ParamInfo *p : rest) {
    h.add(p->name, strlen(p->name) + 1);
    int32_t dtype = (int32_t)p->dtype;
    h.add(&dtype, sizeof dtype);
    h.add(p->shape, sizeof(int64_t) * (size_t)p->rank);
    h.add(whole(*p, scratch), (size_t)numel(*p) * paramDTypeSize(p->dtype));
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016" PRIx64, h.h);
  return hex;
}

const ParamInfo *findParam(const ProgramInfo &program, const std::string &name) {
  for (int k = 0; k < program.numParams; ++k)
    if (name == program.params[k].name)
      return &program.params[k];
  return nullptr;
}

} // namespace

bool isDeltaTensor(const ParamInfo &p) { return p.delta || p.gradOffset >= 0; }

int64_t saveDeltaCheckpoint(const std::string &file, const ProgramInfo &program,
                            const void *params) {
  WholeParamsSource source(params);
  return saveDeltaCheckpoint(file, program, source);
}

int64_t saveDeltaCheckpoint(const std::string &file, const ProgramInfo &program,
                            ParamSource &source) {
  std::set<std::string> held;
  std::vector<OutTensor> out;
  int64_t bytes = 0;
  for (int k = 0; k < program.numParams; ++k) {
    const ParamInfo &p = program.params[k];
    if (!isDeltaTensor(p))
      continue;
    held.insert(p.name);
    OutTensor t{p.name, p.dtype, std::vector<int64_t>(p.shape, p.shape + p.rank), nullptr};
    // Contiguous in the file, whatever the layout of the params
    // (param_slices.h) or the partition that holds them (zero = 3).
    const ParamInfo *param = &p;
    t.bytes = [param, &source](std::vector<uint8_t> &scratch) -> const void * {
      return source.slice(*param, -1, scratch);
    };
    out.push_back(std::move(t));
    bytes += numel(p) * (int64_t)paramDTypeSize(p.dtype);
  }
  if (!source.writes()) {
    // The writer's slices, in its order (the gathers match).
    std::vector<uint8_t> scratch;
    for (const OutTensor &t : out)
      t.bytes(scratch);
    return bytes;
  }
  // The backbone (frozen params) is whole in every source: no gathers.
  const WholeParamFn whole = [&source](const ParamInfo &p, std::vector<uint8_t> &scratch) {
    return source.slice(p, -1, scratch);
  };
  writeSafetensors(file, out,
                   {{kDeltaOf, program.model}, {kBackbone, backboneHash(program, whole, held)}});
  return bytes;
}

namespace {

/// Opens `file` and checks it against the backbone in `params`: the model's
/// name, every tensor a param of its shape, every delta param present, the
/// backbone hash. Fails naming the file.
SafetensorsFile openCheckedDelta(const std::string &file, const ProgramInfo &program,
                                 const WholeParamFn &backbone) {
  SafetensorsFile f = SafetensorsFile::open(file);
  std::string of, pinned;
  for (const auto &[key, value] : f.metadata()) {
    if (key == kDeltaOf)
      of = value;
    if (key == kBackbone)
      pinned = value;
  }
  if (of.empty() || pinned.empty())
    fail(file + ": not a delta checkpoint (no \"" + kDeltaOf + "\" / \"" + kBackbone +
         "\" metadata; a full checkpoint goes to --load)");
  if (of != program.model)
    fail(file + ": a delta checkpoint of model '" + of + "', not '" + program.model + "'");
  std::set<std::string> held;
  for (const FileTensor &t : f.tensors()) {
    const ParamInfo *p = findParam(program, t.name);
    if (!p)
      fail(file + ": tensor '" + t.name + "' is not a param of model '" + program.model + "'");
    if (t.shape != std::vector<int64_t>(p->shape, p->shape + p->rank))
      fail(file + ": shape mismatch for tensor '" + t.name + "': expected " +
           shapeString(std::vector<int64_t>(p->shape, p->shape + p->rank)) + ", file has " +
           shapeString(t.shape));
    held.insert(t.name);
  }
  for (int k = 0; k < program.numParams; ++k)
    if (program.params[k].delta && !held.count(program.params[k].name))
      fail(file + ": no tensor for the delta param '" + program.params[k].name + "'");
  std::string actual = backboneHash(program, backbone, held);
  if (actual != pinned)
    fail(file + ": the delta was tuned on another backbone (backbone hash " + pinned +
         ", the loaded backbone's is " + actual +
         "): --load the checkpoint it was tuned from");
  return f;
}

} // namespace

LoadReport loadDeltaCheckpoint(const std::string &file, const ProgramInfo &program,
                               void *params) {
  return loadDeltaCheckpoint(file, program, WholeParamsTarget(params));
}

LoadReport loadDeltaCheckpoint(const std::string &file, const ProgramInfo &program,
                               const ParamTarget &target) {
  SafetensorsFile f = openCheckedDelta(file, program, fromTarget(program, target));
  LoadReport report;
  report.file = file;
  std::vector<ParamTarget::Piece> pieces;
  for (const FileTensor &t : f.tensors()) {
    const ParamInfo *p = findParam(program, t.name);
    const std::string what = std::string("param '") + p->name + "'";
    const int64_t elem = (int64_t)paramDTypeSize(p->dtype);
    f.checkReadable(t, p->dtype, what);
    // Straight into the pieces held (under zero = 3 a trainable param's
    // piece in the rank's partition, possibly none).
    target.held(*p, 0, numel(*p) * elem, pieces);
    for (const ParamTarget::Piece &piece : pieces)
      f.readRange(t, p->dtype, piece.from / elem, piece.n / elem, piece.at, what);
    ++report.tensors;
  }
  return report;
}

DeltaTensors readDeltaCheckpoint(const std::string &file, const ProgramInfo &program,
                                 const void *params) {
  SafetensorsFile f = openCheckedDelta(file, program, fromParams(params));
  DeltaTensors delta;
  delta.file = file;
  for (const FileTensor &t : f.tensors()) {
    const ParamInfo *p = findParam(program, t.name);
    DeltaTensors::Tensor held;
    held.param = (int)(p - program.params);
    held.bytes.resize((size_t)numel(*p) * paramDTypeSize(p->dtype));
    f.read(t, p->dtype, held.bytes.data(), std::string("param '") + p->name + "'");
    delta.tensors.push_back(std::move(held));
  }
  return delta;
}

} // namespace bmrt
