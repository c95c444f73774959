//===- io/checkpoint.cpp - loadCheckpoint / saveCheckpoint ----------------===//
//
// Loading: open the files, pick the layout (our names, else the first name
// map whose every non-tied tensor is present), then check everything that
// can be checked before writing a byte of params: coverage of the layout,
// tensors nobody uses, shapes, dtypes. Only then are tensors converted and
// scattered into the pieces a ParamTarget holds (all of the params, or
// under zero = 3 a rank's partition: it reads only what meets it). (An I64
// element that does not fit an I32 param, found while reading, can still
// leave params half-filled; the caller treats any failure as fatal.)
//
// Saving: the same bindings read in the other direction, each tensor's
// parts taken from a ParamSource in turn and streamed to an atomic writer.
//
//===----------------------------------------------------------------------===//
#include "bmrt/checkpoint.h"

#include "checkpoint_files.h"
#include "layout.h"
#include "param_slices.h"
#include "safetensors.h"

#include "bmrt/context.h"

#include <algorithm>
#include <cstring>
#include <unordered_map>

namespace bmrt {

using namespace io;

namespace {

constexpr const char *kOtherModel = "a checkpoint of another architecture or size?";

struct Layout {
  std::string name;      // "" = our names
  std::string title;     // "our names" / "name map 'hf'"
  std::vector<Binding> bindings;
};

std::vector<Layout> candidateLayouts(const ProgramInfo &program) {
  std::vector<Layout> layouts;
  layouts.push_back({"", "our names", ourLayout(program)});
  for (int k = 0; k < program.numNameMaps; ++k) {
    const NameMap &map = program.nameMaps[k];
    layouts.push_back({map.name, std::string("name map '") + map.name + "'",
                       mapLayout(program, map)});
  }
  return layouts;
}

std::vector<const Binding *> missingTensors(const Layout &layout, const CheckpointFiles &cp) {
  std::vector<const Binding *> missing;
  for (const Binding &b : layout.bindings)
    if (!b.tied && !b.delta && !cp.byName.count(b.external))
      missing.push_back(&b);
  return missing;
}

// HF stores a few buffers next to the parameters: causal masks, position
// ids, rotary frequencies. They carry nothing we load.
bool isIgnoredBuffer(const std::string &name) {
  auto endsWith = [&](const char *suffix) {
    size_t n = strlen(suffix);
    return name.size() >= n && name.compare(name.size() - n, n, suffix) == 0;
  };
  return endsWith(".attn.bias") || endsWith(".attn.masked_bias") || endsWith("position_ids") ||
         endsWith("rotary_emb.inv_freq");
}

[[noreturn]] void failNoLayout(const std::string &path, const ProgramInfo &program,
                               const std::vector<Layout> &layouts, const CheckpointFiles &cp) {
  std::string message = path + ": the checkpoint does not fit model '" + program.model + "' (" +
                        kOtherModel + ")";
  for (const Layout &layout : layouts) {
    std::vector<const Binding *> missing = missingTensors(layout, cp);
    size_t needed = 0;
    for (const Binding &b : layout.bindings)
      needed += !b.tied && !b.delta;
    message += "\n  " + layout.title + ": " + std::to_string(missing.size()) + " of " +
               std::to_string(needed) + " tensors missing, e.g.";
    for (size_t k = 0; k < missing.size() && k < 3; ++k)
      message += (k ? "," : "") + std::string(" missing tensor '") + missing[k]->external +
                 "' (needed for " + missing[k]->describe() + ")";
  }
  fail(message);
}

void checkNoUnexpected(const std::string &path, const Layout &layout,
                       const CheckpointFiles &cp) {
  std::unordered_map<std::string, bool> consumed;
  for (const Binding &b : layout.bindings)
    consumed[b.external] = true;
  std::vector<std::string> unexpected;
  for (const SafetensorsFile &file : cp.files)
    for (const FileTensor &t : file.tensors())
      if (!consumed.count(t.name) && !isIgnoredBuffer(t.name))
        unexpected.push_back(t.name);
  if (unexpected.empty())
    return;
  std::string list;
  for (size_t k = 0; k < unexpected.size() && k < 5; ++k)
    list += (k ? ", '" : "'") + unexpected[k] + "'";
  if (unexpected.size() > 5)
    list += ", ...";
  fail(path + ": " + std::to_string(unexpected.size()) + " unexpected tensor" +
       (unexpected.size() == 1 ? "" : "s") + " that " + layout.title + " does not use: " + list +
       " (" + kOtherModel + ")");
}

void checkShape(const FileTensor &t, const SafetensorsFile &file, const Binding &b) {
  if (t.shape != b.fileShape)
    fail(file.path() + ": shape mismatch for tensor '" + t.name + "' (needed for " +
         b.describe() + "): expected " + shapeString(b.fileShape) + ", file has " +
         shapeString(t.shape) + " (" + kOtherModel + ")");
}

// Bytes [from, from + n) of a part (counted from the part's start in its
// param's logical layout) against the pieces the target holds of them:
// f(piece, offset of the piece from `from`).
template <class F>
void forEachHeldPiece(const ParamTarget &target, const ParamSlice &part, int64_t from,
                      int64_t n, std::vector<ParamTarget::Piece> &pieces, F f) {
  const int64_t start = partLogicalStart(part) + from;
  target.held(*part.param, start, n, pieces);
  for (const ParamTarget::Piece &piece : pieces)
    f(piece, piece.from - start);
}

bool holdsAny(const ParamTarget &target, const Binding &b,
              std::vector<ParamTarget::Piece> &pieces) {
  for (const ParamSlice &part : b.parts) {
    target.held(*part.param, partLogicalStart(part), partLogicalBytes(part), pieces);
    if (!pieces.empty())
      return true;
  }
  return false;
}

// The general case of a tensor (several parts, or transposed): the whole
// tensor read into `external`, then f(held piece, its bytes in the tensor)
// for every piece of its parts the target holds. Nothing is read when the
// target holds none.
template <class F>
void forEachHeldPieceOfTensor(const Binding &b, const FileTensor &t, const SafetensorsFile &file,
                              const ParamTarget &target, std::vector<uint8_t> &external,
                              std::vector<uint8_t> &scratch,
                              std::vector<ParamTarget::Piece> &pieces, F f) {
  if (!holdsAny(target, b, pieces))
    return;
  external.resize((size_t)b.numel * paramDTypeSize(b.dtype));
  file.read(t, b.dtype, external.data(), b.describe());
  scatterToParts(b, external.data(),
                 [&](size_t k, int64_t from, int64_t n, const uint8_t *src) {
                   forEachHeldPiece(target, b.parts[k], from, n, pieces,
                                    [&](const ParamTarget::Piece &piece, int64_t at) {
                                      f(piece, src + at);
                                    });
                 },
                 scratch);
}

// One tensor into the pieces of its param slices the target holds. The
// common case (one part, no transpose) converts straight from the file into
// them; otherwise the whole tensor goes through `external`.
void loadBinding(const Binding &b, const FileTensor &t, const SafetensorsFile &file,
                 const ParamTarget &target, std::vector<uint8_t> &external,
                 std::vector<uint8_t> &scratch, std::vector<ParamTarget::Piece> &pieces) {
  const int64_t elem = (int64_t)paramDTypeSize(b.dtype);
  if (b.parts.size() == 1 && !b.transpose) {
    const ParamSlice &part = b.parts[0];
    forEachHeldPiece(target, part, 0, partLogicalBytes(part), pieces,
                     [&](const ParamTarget::Piece &piece, int64_t at) {
                       file.readRange(t, b.dtype, at / elem, piece.n / elem, piece.at,
                                      b.describe());
                     });
    return;
  }
  forEachHeldPieceOfTensor(b, t, file, target, external, scratch, pieces,
                           [&](const ParamTarget::Piece &piece, const uint8_t *src) {
                             memcpy(piece.at, src, (size_t)piece.n);
                           });
}

[[noreturn]] void failTied(const Binding &b, const FileTensor &t, const SafetensorsFile &file) {
  fail(file.path() + ": tensor '" + t.name + "' is declared tied to " + b.describe() +
       ", but its values differ from the tensor that " + b.describe() + " was loaded from");
}

// A tied tensor present in the file must equal what its parts hold already
// (the pieces this process holds: under zero = 3 the ranks check a part
// each). One part, untransposed: compared in chunks, without a copy of
// the tensor.
void checkTied(const Binding &b, const FileTensor &t, const SafetensorsFile &file,
               const ParamTarget &target, std::vector<uint8_t> &external,
               std::vector<uint8_t> &scratch, std::vector<ParamTarget::Piece> &pieces) {
  const int64_t elem = (int64_t)paramDTypeSize(b.dtype);
  if (b.parts.size() == 1 && !b.transpose) {
    const int64_t chunk = (int64_t)1 << 20; // bytes per comparison
    const ParamSlice &part = b.parts[0];
    forEachHeldPiece(target, part, 0, partLogicalBytes(part), pieces,
                     [&](const ParamTarget::Piece &piece, int64_t at) {
                       for (int64_t x = 0; x < piece.n; x += chunk) {
                         const int64_t n = std::min(chunk, piece.n - x);
                         external.resize((size_t)n);
                         file.readRange(t, b.dtype, (at + x) / elem, n / elem,
                                        external.data(), b.describe());
                         if (memcmp(external.data(), piece.at + x, (size_t)n) != 0)
                           failTied(b, t, file);
                       }
                     });
    return;
  }
  forEachHeldPieceOfTensor(b, t, file, target, external, scratch, pieces,
                           [&](const ParamTarget::Piece &piece, const uint8_t *src) {
                             if (memcmp(piece.at, src, (size_t)piece.n) != 0)
                               failTied(b, t, file);
                           });
}

const NameMap *findMap(const ProgramInfo &program, const std::string &name) {
  for (int k = 0; k < program.numNameMaps; ++k)
    if (name == program.nameMaps[k].name)
      return &program.nameMaps[k];
  return nullptr;
}

} // namespace

void WholeParamsTarget::held(const ParamInfo &p, int64_t from, int64_t n,
                             std::vector<Piece> &out) const {
  out.clear();
  forEachSlicePiece(p, from, n, [&](int64_t addr, int64_t logical, int64_t len) {
    out.push_back({logical, len, params_ + p.offset + addr});
  });
}

const uint8_t *WholeParamsSource::slice(const ParamInfo &p, int64_t layer,
                                        std::vector<uint8_t> &scratch) {
  if (layer >= 0)
    return params_ + p.offset + layer * paramLayerStride(p);
  if (paramLayers(p) <= 1 || paramLayerStride(p) == paramSliceBytes(p))
    return params_ + p.offset; // the layers back to back
  scratch = wholeParamOut(p, params_, p.offset);
  return scratch.data();
}

LoadReport loadCheckpoint(const std::string &path, const ProgramInfo &program, void *params) {
  return loadCheckpoint(path, program, WholeParamsTarget(params));
}

LoadReport loadCheckpoint(const std::string &path, const ProgramInfo &program,
                          const ParamTarget &target) {
  CheckpointFiles cp = openCheckpoint(path);
  std::vector<Layout> layouts = candidateLayouts(program);
  const Layout *chosen = nullptr;
  for (const Layout &layout : layouts)
    if (missingTensors(layout, cp).empty()) {
      chosen = &layout;
      break;
    }
  if (!chosen)
    failNoLayout(path, program, layouts, cp);
  checkCoverage(program, chosen->bindings,
                std::string("program '") + program.model + "': " + chosen->title);
  checkNoUnexpected(path, *chosen, cp);
  for (const Binding &b : chosen->bindings) {
    const SafetensorsFile *file = nullptr;
    if (const FileTensor *t = cp.find(b.external, &file)) {
      checkShape(*t, *file, b);
      // Here, not while reading: under zero = 3 a rank reads only the
      // tensors that meet its partition, and every rank must fail alike.
      file->checkReadable(*t, b.dtype, b.describe());
    }
  }

  LoadReport report;
  report.file = cp.describe();
  report.nameMap = chosen->name;
  std::vector<uint8_t> external, scratch;
  std::vector<ParamTarget::Piece> pieces;
  for (const Binding &b : chosen->bindings) {
    const SafetensorsFile *file = nullptr;
    const FileTensor *t = cp.find(b.external, &file);
    if (!b.tied && b.delta && !t) {
      report.freshDeltas.push_back(b.external);
      continue;
    }
    if (!b.tied) {
      loadBinding(b, *t, *file, target, external, scratch, pieces);
      ++report.tensors;
    }
  }
  // Tied tensors last: their parts are loaded by then.
  for (const Binding &b : chosen->bindings) {
    const SafetensorsFile *file = nullptr;
    const FileTensor *t = cp.find(b.external, &file);
    if (b.tied && t) {
      checkTied(b, *t, *file, target, external, scratch, pieces);
      ++report.tensors;
    }
  }
  return report;
}

void saveCheckpoint(const std::string &file, const ProgramInfo &program, const void *params,
                    const char *mapName) {
  WholeParamsSource source(params);
  saveCheckpoint(file, program, source, mapName);
}

void saveCheckpoint(const std::string &file, const ProgramInfo &program, ParamSource &source,
                    const char *mapName) {
  Layout layout;
  if (!mapName || !*mapName) {
    layout = {"", "our names", ourLayout(program)};
  } else {
    const NameMap *map = findMap(program, mapName);
    if (!map) {
      std::string known;
      for (int k = 0; k < program.numNameMaps; ++k)
        known += (k ? ", " : "") + std::string(program.nameMaps[k].name);
      fail(file + ": model '" + program.model + "' has no checkpoint name map '" + mapName +
           "' (it has: " + (known.empty() ? "none" : known) + ")");
    }
    layout = {map->name, std::string("name map '") + map->name + "'", mapLayout(program, *map)};
  }
  checkCoverage(program, layout.bindings,
                std::string("program '") + program.model + "': " + layout.title);
  std::unordered_map<std::string, bool> seen;
  for (const Binding &b : layout.bindings)
    if (!seen.emplace(b.external, true).second)
      fail(std::string("program '") + program.model + "': " + layout.title +
           " names tensor '" + b.external + "' twice");
  if (!source.writes()) {
    // The same slices in the same order as the writer (the gathers match).
    std::vector<uint8_t> scratch;
    for (const Binding &b : layout.bindings)
      for (const ParamSlice &part : b.parts)
        source.slice(*part.param, part.layer, scratch);
    return;
  }
  std::vector<OutTensor> out;
  for (const Binding &b : layout.bindings) {
    OutTensor t{b.external, b.dtype, b.fileShape, nullptr};
    t.bytes = [&b, &source](std::vector<uint8_t> &scratch) -> const void * {
      if (b.parts.size() == 1 && !b.transpose)
        return source.slice(*b.parts[0].param, b.parts[0].layer, scratch);
      // Several parts (q, k, v) or a transpose: each part, then the tensor.
      std::vector<std::vector<uint8_t>> partScratch(b.parts.size());
      std::vector<const uint8_t *> parts;
      for (size_t k = 0; k < b.parts.size(); ++k)
        parts.push_back(source.slice(*b.parts[k].param, b.parts[k].layer, partScratch[k]));
      std::vector<uint8_t> transposeTemp;
      scratch.resize((size_t)b.numel * paramDTypeSize(b.dtype));
      gatherFromParts(b, parts, scratch.data(), transposeTemp);
      return scratch.data();
    };
    out.push_back(std::move(t));
  }
  writeSafetensors(file, out);
}

} // namespace bmrt
