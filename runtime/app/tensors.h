//===- app/tensors.h - Entry-point inputs and outputs in the activations --===//
//
// Entry points read their inputs from and write their outputs to the
// activations allocation, at the offsets of the program's tables; only
// `rows` rows along each tensor's rowsDim are valid (the buffers are planned
// at capacity, the length is a run-time scalar: DESIGN decision 1). These
// helpers are the only code that turns a TensorRef into bytes.
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_APP_TENSORS_H
#define BMRT_APP_TENSORS_H

#include "bmrt/program.h"

#include <cstdint>
#include <string>
#include <vector>

namespace bmrt {

class EntryMemory; // app/entry_memory.h

int64_t dtypeBytes(DType dtype);
const char *dtypeName(DType dtype);
/// "f32[1, 12, 4]"
std::string describeTensor(const TensorRef &t);

/// Elements at capacity.
int64_t tensorElements(const TensorRef &t);

/// The output called `name`, or null.
const TensorRef *findOutput(const EntryPoint &entry, const char *name);

/// Fills every input of `entry` for `rows` valid rows of `ids`: Tokens get
/// the ids, TokenTypes zeros, Mask ones; rows past the valid ones are zeros.
void writeEntryInputs(const EntryPoint &entry, void *activations, const int32_t *ids,
                      int64_t rows);
/// Input `i` of `entry` alone, written to `dst` (its capacity of i32s, the
/// input's entryInputElements): what writeEntryInputs writes at its offset.
/// A backend that stages inputs elsewhere (cuda) fills them with this.
void fillEntryInput(const EntryPoint &entry, int i, int32_t *dst, const int32_t *ids,
                    int64_t rows);
/// The i32 elements of input `i` of `entry` (after fillEntryInput's checks).
int64_t entryInputElements(const EntryPoint &entry, int i);

/// The valid part of an output: shape with rowsDim set to `rows`, and the
/// elements copied contiguous.
struct ValidRows {
  int rank = 0;
  int64_t shape[kMaxRank] = {};
  std::vector<unsigned char> bytes;
};
ValidRows gatherValidRows(const TensorRef &t, const void *activations, int64_t rows);
/// The same from a copy of the tensor alone (its capacity, from byte 0).
ValidRows gatherValidRowsOf(const TensorRef &t, const void *tensor, int64_t rows);

/// --dump: writes every output of one entry call as dir/stepNNNN_<name>.npy.
void dumpEntryOutputs(const std::string &dir, int64_t step, const EntryPoint &entry,
                      EntryMemory &mem, int64_t rows);

} // namespace bmrt

#endif // BMRT_APP_TENSORS_H
