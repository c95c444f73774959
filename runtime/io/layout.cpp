//===- io/layout.cpp - Name maps expanded into bindings; their transforms -===//
//
// The tables come from bmbc, so a malformed one is a compiler bug; it still
// fails with a message naming the map, rule and param (never a wild write):
// every slice is checked to lie inside program.paramBytes before any copy.
//
//===----------------------------------------------------------------------===//
#include "layout.h"

#include "param_slices.h"

#include "safetensors.h"

#include "bmrt/context.h"

#include <cstring>

namespace bmrt::io {

namespace {

int64_t product(const std::vector<int64_t> &shape, size_t from, size_t to) {
  int64_t n = 1;
  for (size_t k = from; k < to; ++k)
    n *= shape[k];
  return n;
}

// The param table itself: ranks, dims and extents inside the allocation.
void validateParams(const ProgramInfo &program) {
  for (int k = 0; k < program.numParams; ++k) {
    const ParamInfo &p = program.params[k];
    std::string where = std::string("program '") + program.model + "': param '" +
                        (p.name ? p.name : "?") + "'";
    if (!p.name || p.rank < 0 || p.rank > kMaxRank)
      fail(where + " has a malformed table entry (rank " + std::to_string(p.rank) + ")");
    for (int d = 0; d < p.rank; ++d)
      if (p.shape[d] < 0)
        fail(where + " has a negative dimension");
    if (p.stacked && p.rank < 1)
      fail(where + " is stacked but has rank 0");
    if (p.layerStride != 0 && (!p.stacked || p.layerStride < paramSliceBytes(p)))
      fail(where + " has a layer stride of " + std::to_string(p.layerStride) +
           " bytes, less than one layer's " + std::to_string(paramSliceBytes(p)));
    if (p.offset < 0 || p.offset + paramExtent(p) > program.paramBytes)
      fail(where + " lies outside the params allocation (" + std::to_string(program.paramBytes) +
           " bytes)");
  }
}

const ParamInfo &findParam(const ProgramInfo &program, const char *name,
                           const std::string &where) {
  for (int k = 0; k < program.numParams; ++k)
    if (strcmp(program.params[k].name, name) == 0)
      return program.params[k];
  fail(where + " names unknown param '" + name + "'");
}

ParamSlice wholeParam(const ParamInfo &p) {
  return ParamSlice{&p, -1, std::vector<int64_t>(p.shape, p.shape + p.rank)};
}

ParamSlice layerOf(const ParamInfo &p, int64_t layer) {
  std::vector<int64_t> shape(p.shape + 1, p.shape + p.rank);
  return ParamSlice{&p, layer, shape};
}

std::string expandLayer(const std::string &pattern, int64_t layer) {
  std::string out;
  for (size_t k = 0; k < pattern.size();) {
    if (pattern.compare(k, 3, "{i}") == 0) {
      out += std::to_string(layer);
      k += 3;
    } else {
      out += pattern[k++];
    }
  }
  return out;
}

// Fills the derived fields of a binding whose external name and parts are set.
void finishBinding(Binding &b, int axis, const std::string &where) {
  const std::vector<int64_t> &first = b.parts[0].shape;
  int rank = (int)first.size();
  b.dtype = b.parts[0].param->dtype;
  if (b.parts.size() > 1 && rank == 0)
    fail(where + " concatenates scalars");
  b.axis = axis < 0 ? axis + rank : axis;
  if (rank > 0 && (b.axis < 0 || b.axis >= rank))
    fail(where + " has axis " + std::to_string(axis) + " for parts of rank " +
         std::to_string(rank));
  b.concatShape = first;
  for (size_t k = 1; k < b.parts.size(); ++k) {
    const ParamSlice &part = b.parts[k];
    if (part.param->dtype != b.dtype)
      fail(where + " concatenates params of different dtypes");
    bool compatible = (int)part.shape.size() == rank;
    for (int d = 0; compatible && d < rank; ++d)
      compatible = d == b.axis || part.shape[d] == first[d];
    if (!compatible)
      fail(where + " concatenates '" + b.parts[0].param->name + "' " + shapeString(first) +
           " and '" + part.param->name + "' " + shapeString(part.shape) + " along axis " +
           std::to_string(b.axis));
    b.concatShape[b.axis] += part.shape[b.axis];
  }
  b.fileShape = b.concatShape;
  if (b.transpose) {
    if (rank != 2)
      fail(where + " transposes a tensor of rank " + std::to_string(rank) +
           " (only 2-D tensors can be transposed)");
    std::swap(b.fileShape[0], b.fileShape[1]);
  }
  b.numel = product(b.concatShape, 0, b.concatShape.size());
}

// dst[c][r] = src[r][c] for a rows x cols src, in 32 x 32 tiles (cache).
template <typename T>
void transposeTyped(const T *src, T *dst, int64_t rows, int64_t cols) {
  const int64_t tile = 32;
  for (int64_t r0 = 0; r0 < rows; r0 += tile)
    for (int64_t c0 = 0; c0 < cols; c0 += tile)
      for (int64_t r = r0; r < r0 + tile && r < rows; ++r)
        for (int64_t c = c0; c < c0 + tile && c < cols; ++c)
          dst[c * rows + r] = src[r * cols + c];
}

void transpose(const uint8_t *src, uint8_t *dst, int64_t rows, int64_t cols, size_t elem) {
  if (elem == 8)
    transposeTyped((const uint64_t *)src, (uint64_t *)dst, rows, cols);
  else
    transposeTyped((const uint32_t *)src, (uint32_t *)dst, rows, cols);
}

} // namespace

std::string Binding::describe() const {
  std::string s;
  for (size_t k = 0; k < parts.size(); ++k)
    s += (k ? " + " : "") + std::string(parts[k].param->name);
  if (parts[0].layer >= 0)
    s += ", layer " + std::to_string(parts[0].layer);
  return s;
}

std::vector<Binding> ourLayout(const ProgramInfo &program) {
  validateParams(program);
  std::vector<Binding> bindings;
  for (int k = 0; k < program.numParams; ++k) {
    Binding b;
    b.external = program.params[k].name;
    b.parts.push_back(wholeParam(program.params[k]));
    b.delta = program.params[k].delta;
    finishBinding(b, 0, std::string("param '") + b.external + "'");
    bindings.push_back(std::move(b));
  }
  return bindings;
}

namespace {

/// Delta params have no rule in a backbone's name map: they go under our
/// names beside it.
void appendDeltaBindings(const ProgramInfo &program, std::vector<Binding> &bindings) {
  for (int k = 0; k < program.numParams; ++k) {
    if (!program.params[k].delta)
      continue;
    Binding b;
    b.external = program.params[k].name;
    b.parts.push_back(wholeParam(program.params[k]));
    b.delta = true;
    finishBinding(b, 0, std::string("delta param '") + b.external + "'");
    bindings.push_back(std::move(b));
  }
}

} // namespace

std::vector<Binding> mapLayout(const ProgramInfo &program, const NameMap &map) {
  validateParams(program);
  std::vector<Binding> bindings;
  for (int r = 0; r < map.numRules; ++r) {
    const NameRule &rule = map.rules[r];
    std::string where = std::string("name map '") + map.name + "' rule '" +
                        (rule.external ? rule.external : "?") + "'";
    if (!rule.external || rule.numParts < 1 || !rule.parts)
      fail(where + " is malformed (no parts)");
    std::vector<const ParamInfo *> parts;
    for (int k = 0; k < rule.numParts; ++k)
      parts.push_back(&findParam(program, rule.parts[k], where));
    bool perLayer = std::string(rule.external).find("{i}") != std::string::npos;
    int64_t layers = perLayer ? parts[0]->shape[0] : 1;
    for (const ParamInfo *p : parts) {
      if (perLayer && !p->stacked)
        fail(where + " has \"{i}\" but its part '" + p->name + "' is not stacked");
      if (perLayer && p->shape[0] != layers)
        fail(where + " has parts with different layer counts");
    }
    for (int64_t layer = 0; layer < layers; ++layer) {
      Binding b;
      b.external = perLayer ? expandLayer(rule.external, layer) : rule.external;
      for (const ParamInfo *p : parts)
        b.parts.push_back(perLayer ? layerOf(*p, layer) : wholeParam(*p));
      b.transpose = rule.transpose;
      b.tied = rule.tied;
      finishBinding(b, rule.axis, where);
      bindings.push_back(std::move(b));
    }
  }
  appendDeltaBindings(program, bindings);
  return bindings;
}

void checkCoverage(const ProgramInfo &program, const std::vector<Binding> &bindings,
                   const std::string &layoutName) {
  // writes[param][layer]: how many non-tied bindings write that slice.
  std::vector<std::vector<int>> writes(program.numParams);
  for (int k = 0; k < program.numParams; ++k) {
    const ParamInfo &p = program.params[k];
    writes[k].assign(p.stacked ? (size_t)p.shape[0] : 1, 0);
  }
  for (const Binding &b : bindings) {
    if (b.tied)
      continue;
    for (const ParamSlice &part : b.parts) {
      std::vector<int> &count = writes[part.param - program.params];
      if (part.layer >= 0)
        ++count[(size_t)part.layer];
      else
        for (int &c : count)
          ++c;
    }
  }
  for (int k = 0; k < program.numParams; ++k) {
    const ParamInfo &p = program.params[k];
    for (size_t layer = 0; layer < writes[k].size(); ++layer) {
      if (writes[k][layer] == 1)
        continue;
      std::string slice = std::string("param '") + p.name + "'" +
                          (p.stacked ? " layer " + std::to_string(layer) : "");
      fail(layoutName + (writes[k][layer] == 0 ? " does not cover " : " writes ") + slice +
           (writes[k][layer] == 0 ? "" : " " + std::to_string(writes[k][layer]) + " times"));
    }
  }
}

int64_t partLogicalStart(const ParamSlice &part) {
  return part.layer >= 0 ? part.layer * paramSliceBytes(*part.param) : 0;
}

int64_t partLogicalBytes(const ParamSlice &part) {
  return part.layer >= 0 ? paramSliceBytes(*part.param)
                         : paramLayers(*part.param) * paramSliceBytes(*part.param);
}

void scatterToParts(const Binding &b, const uint8_t *external, const PartBytesFn &put,
                    std::vector<uint8_t> &scratch) {
  size_t elem = paramDTypeSize(b.dtype);
  const uint8_t *src = external;
  if (b.transpose) {
    scratch.resize((size_t)b.numel * elem);
    transpose(external, scratch.data(), b.fileShape[0], b.fileShape[1], elem);
    src = scratch.data();
  }
  size_t rank = b.concatShape.size();
  int64_t outer = rank ? product(b.concatShape, 0, (size_t)b.axis) : 1;
  int64_t inner = rank ? product(b.concatShape, (size_t)b.axis + 1, rank) : 1;
  for (int64_t o = 0; o < outer; ++o)
    for (size_t k = 0; k < b.parts.size(); ++k) {
      size_t chunk = (size_t)((rank ? b.parts[k].shape[b.axis] : 1) * inner) * elem;
      put(k, (int64_t)(o * chunk), (int64_t)chunk, src);
      src += chunk;
    }
}

void gatherFromParts(const Binding &b, const std::vector<const uint8_t *> &parts,
                     uint8_t *external, std::vector<uint8_t> &scratch) {
  size_t elem = paramDTypeSize(b.dtype);
  uint8_t *dst = external;
  if (b.transpose) {
    scratch.resize((size_t)b.numel * elem);
    dst = scratch.data();
  }
  uint8_t *out = dst;
  size_t rank = b.concatShape.size();
  int64_t outer = rank ? product(b.concatShape, 0, (size_t)b.axis) : 1;
  int64_t inner = rank ? product(b.concatShape, (size_t)b.axis + 1, rank) : 1;
  for (int64_t o = 0; o < outer; ++o)
    for (size_t k = 0; k < b.parts.size(); ++k) {
      size_t chunk = (size_t)((rank ? b.parts[k].shape[b.axis] : 1) * inner) * elem;
      memcpy(out, parts[k] + o * chunk, chunk);
      out += chunk;
    }
  if (b.transpose)
    transpose(dst, external, b.concatShape[0], b.concatShape[1], elem);
}

} // namespace bmrt::io
