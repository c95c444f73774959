//===- app/tensors.cpp - Filling inputs, reading and dumping outputs ------===//
//
// A tensor [outer..., T, inner...] with rowsDim at T holds, per outer index,
// rows 0..rows-1 valid. Inputs are written for one sequence only: the infer
// app generates for batch 1, and a program with a larger batch fails loudly
// here rather than running sequences with garbage tokens.
//
//===----------------------------------------------------------------------===//
#include "app/tensors.h"
#include "app/entry_memory.h"
#include "app/npy.h"

#include <cstdio>
#include <cstring>

namespace bmrt {

int64_t dtypeBytes(DType dtype) { return dtype == DType::F64 ? 8 : 4; }

const char *dtypeName(DType dtype) {
  switch (dtype) {
  case DType::F32: return "f32";
  case DType::F64: return "f64";
  case DType::I32: return "i32";
  }
  return "?";
}

std::string describeTensor(const TensorRef &t) {
  std::string s = std::string(dtypeName(t.dtype)) + "[";
  for (int i = 0; i < t.rank; i++)
    s += (i ? ", " : "") + std::to_string(t.shape[i]);
  return s + "]";
}

int64_t tensorElements(const TensorRef &t) {
  int64_t n = 1;
  for (int i = 0; i < t.rank; i++)
    n *= t.shape[i];
  return n;
}

const TensorRef *findOutput(const EntryPoint &entry, const char *name) {
  for (int i = 0; i < entry.numOutputs; i++)
    if (std::strcmp(entry.outputs[i].name, name) == 0)
      return &entry.outputs[i];
  return nullptr;
}

// outer = prod(shape[:rowsDim]), inner = prod(shape[rowsDim+1:]).
static void splitAtRows(const TensorRef &t, int64_t &outer, int64_t &capacity, int64_t &inner) {
  outer = 1;
  inner = 1;
  capacity = 1;
  if (t.rowsDim < 0) { // no run-time length: all of it is valid
    inner = tensorElements(t);
    return;
  }
  for (int i = 0; i < t.rowsDim; i++)
    outer *= t.shape[i];
  capacity = t.shape[t.rowsDim];
  for (int i = t.rowsDim + 1; i < t.rank; i++)
    inner *= t.shape[i];
}

// The checks of one input: an i32 [1, T] token input, rows within T.
static int64_t checkedInputCapacity(const EntryPoint &entry, int i, int64_t rows) {
  const TensorRef &t = entry.inputs[i];
  int64_t outer, capacity, inner;
  splitAtRows(t, outer, capacity, inner);
  if (t.dtype != DType::I32)
    fail(std::string("input ") + t.name + " of " + entry.name + " is " + dtypeName(t.dtype) +
         "; the infer app fills i32 token inputs only");
  if (t.rowsDim < 0 || outer != 1 || inner != 1)
    fail(std::string("input ") + t.name + " of " + entry.name + " is " + describeTensor(t) +
         "; the infer app supports one sequence of tokens ([1, T]) only");
  if (rows > capacity)
    fail(std::string(entry.name) + " takes at most " + std::to_string(capacity) +
         " rows, not " + std::to_string(rows));
  return capacity;
}

int64_t entryInputElements(const EntryPoint &entry, int i) {
  return checkedInputCapacity(entry, i, 0);
}

void fillEntryInput(const EntryPoint &entry, int i, int32_t *dst, const int32_t *ids,
                    int64_t rows) {
  int64_t capacity = checkedInputCapacity(entry, i, rows);
  std::memset(dst, 0, (size_t)capacity * sizeof(int32_t));
  switch (entry.inputKinds[i]) {
  case InputKind::Tokens:
    std::memcpy(dst, ids, (size_t)rows * sizeof(int32_t));
    break;
  case InputKind::TokenTypes: // one segment: all zeros
    break;
  case InputKind::Mask:
    for (int64_t r = 0; r < rows; r++)
      dst[r] = 1;
    break;
  }
}

void writeEntryInputs(const EntryPoint &entry, void *activations, const int32_t *ids,
                      int64_t rows) {
  for (int i = 0; i < entry.numInputs; i++)
    fillEntryInput(entry, i, (int32_t *)((char *)activations + entry.inputs[i].offset), ids,
                   rows);
}

ValidRows gatherValidRows(const TensorRef &t, const void *activations, int64_t rows) {
  return gatherValidRowsOf(t, (const char *)activations + t.offset, rows);
}

ValidRows gatherValidRowsOf(const TensorRef &t, const void *tensor, int64_t rows) {
  int64_t outer, capacity, inner;
  splitAtRows(t, outer, capacity, inner);
  ValidRows v;
  v.rank = t.rank;
  for (int i = 0; i < t.rank; i++)
    v.shape[i] = t.shape[i];
  int64_t valid = t.rowsDim < 0 ? capacity : (rows < capacity ? rows : capacity);
  if (t.rowsDim >= 0)
    v.shape[t.rowsDim] = valid;
  int64_t elem = dtypeBytes(t.dtype);
  int64_t chunk = valid * inner * elem;
  v.bytes.resize((size_t)(outer * chunk));
  const char *base = (const char *)tensor;
  for (int64_t o = 0; o < outer; o++)
    std::memcpy(v.bytes.data() + o * chunk, base + o * capacity * inner * elem, (size_t)chunk);
  return v;
}

void dumpEntryOutputs(const std::string &dir, int64_t step, const EntryPoint &entry,
                      EntryMemory &mem, int64_t rows) {
  for (int i = 0; i < entry.numOutputs; i++) {
    const TensorRef &t = entry.outputs[i];
    ValidRows v = mem.readOutput(t, rows);
    char stepName[32];
    std::snprintf(stepName, sizeof stepName, "step%04lld_", (long long)step);
    std::string name = t.name;
    for (char &c : name) // a name is one file, never a path
      if (c == '/')
        c = '_';
    writeNpy(dir + "/" + stepName + name + ".npy", t.dtype, v.shape, v.rank, v.bytes.data());
  }
}

} // namespace bmrt
