//===- io/checkpoint.cpp - loadCheckpoint / saveCheckpoint ----------------===//
//
// Loading: open the files, pick the layout (our names, else the first name
// map whose every non-tied tensor is present), then check everything that
// can be checked before writing a byte of params: coverage of the layout,
// tensors nobody uses, shapes. Only then are tensors converted and scattered.
// (A dtype error found while reading can still leave params half-filled; the
// caller treats any failure as fatal.)
//
// Saving: the same bindings read in the other direction, streamed to an
// atomic writer.
//
//===----------------------------------------------------------------------===//
#include "bmrt/checkpoint.h"

#include "checkpoint_files.h"
#include "layout.h"
#include "safetensors.h"

#include "bmrt/context.h"

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

// One tensor into its param slices. The common case (one part, no
// transpose, its bytes back to back) converts straight into the params
// allocation.
void loadBinding(const Binding &b, const FileTensor &t, const SafetensorsFile &file,
                 uint8_t *params, std::vector<uint8_t> &external,
                 std::vector<uint8_t> &scratch) {
  if (b.parts.size() == 1 && !b.transpose && isContiguous(b.parts[0])) {
    file.read(t, b.dtype, params + b.parts[0].byteOffset, b.describe());
    return;
  }
  external.resize((size_t)b.numel * paramDTypeSize(b.dtype));
  file.read(t, b.dtype, external.data(), b.describe());
  scatterToParams(b, external.data(), params, scratch);
}

// A tied tensor present in the file must equal what its part holds already.
void checkTied(const Binding &b, const FileTensor &t, const SafetensorsFile &file,
               const uint8_t *params, std::vector<uint8_t> &external,
               std::vector<uint8_t> &scratch) {
  size_t bytes = (size_t)b.numel * paramDTypeSize(b.dtype);
  std::vector<uint8_t> fromFile(bytes);
  file.read(t, b.dtype, fromFile.data(), b.describe());
  external.resize(bytes);
  gatherFromParams(b, params, external.data(), scratch);
  if (memcmp(fromFile.data(), external.data(), bytes) != 0)
    fail(file.path() + ": tensor '" + t.name + "' is declared tied to " + b.describe() +
         ", but its values differ from the tensor that " + b.describe() + " was loaded from");
}

const NameMap *findMap(const ProgramInfo &program, const std::string &name) {
  for (int k = 0; k < program.numNameMaps; ++k)
    if (name == program.nameMaps[k].name)
      return &program.nameMaps[k];
  return nullptr;
}

} // namespace

LoadReport loadCheckpoint(const std::string &path, const ProgramInfo &program, void *params) {
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
    if (const FileTensor *t = cp.find(b.external, &file))
      checkShape(*t, *file, b);
  }

  LoadReport report;
  report.file = cp.describe();
  report.nameMap = chosen->name;
  std::vector<uint8_t> external, scratch;
  for (const Binding &b : chosen->bindings) {
    const SafetensorsFile *file = nullptr;
    const FileTensor *t = cp.find(b.external, &file);
    if (!b.tied && b.delta && !t) {
      report.freshDeltas.push_back(b.external);
      continue;
    }
    if (!b.tied) {
      loadBinding(b, *t, *file, (uint8_t *)params, external, scratch);
      ++report.tensors;
    }
  }
  // Tied tensors last: their parts are loaded by then.
  for (const Binding &b : chosen->bindings) {
    const SafetensorsFile *file = nullptr;
    const FileTensor *t = cp.find(b.external, &file);
    if (b.tied && t) {
      checkTied(b, *t, *file, (const uint8_t *)params, external, scratch);
      ++report.tensors;
    }
  }
  return report;
}

void saveCheckpoint(const std::string &file, const ProgramInfo &program, const void *params,
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
  std::vector<OutTensor> out;
  const uint8_t *base = (const uint8_t *)params;
  for (const Binding &b : layout.bindings) {
    if (!seen.emplace(b.external, true).second)
      fail(std::string("program '") + program.model + "': " + layout.title +
           " names tensor '" + b.external + "' twice");
    OutTensor t{b.external, b.dtype, b.fileShape, nullptr};
    t.bytes = [&b, base](std::vector<uint8_t> &scratch) -> const void * {
      if (b.parts.size() == 1 && !b.transpose && isContiguous(b.parts[0]))
        return base + b.parts[0].byteOffset;
      std::vector<uint8_t> transposeTemp;
      scratch.resize((size_t)b.numel * paramDTypeSize(b.dtype));
      gatherFromParams(b, base, scratch.data(), transposeTemp);
      return scratch.data();
    };
    out.push_back(std::move(t));
  }
  writeSafetensors(file, out);
}

} // namespace bmrt
