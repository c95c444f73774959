//===- app/program_check.cpp - Bounds and shapes of the program tables ----===//
//
// What the app relies on: every tensor lies inside its allocation, entry
// points exist with positive capacities, a CausalLM's first output of each
// entry is its f32 logits [vocab], an encoder has "pooled" or "hidden".
//
//===----------------------------------------------------------------------===//
#include "app/program_check.h"
#include "app/tensors.h"

#include <cstring>
#include <string>

namespace bmrt {

[[noreturn]] static void inconsistent(const ProgramInfo &p, const std::string &what) {
  fail(std::string("program ") + p.job + " (" + p.source + ") is inconsistent: " + what +
       " (a bmbc bug)");
}

static void checkTensor(const ProgramInfo &p, const EntryPoint &e, const TensorRef &t) {
  std::string where = std::string("tensor ") + t.name + " of entry " + e.name;
  if (t.rank < 0 || t.rank > kMaxRank)
    inconsistent(p, where + " has rank " + std::to_string(t.rank));
  if (t.rowsDim < -1 || t.rowsDim >= t.rank)
    inconsistent(p, where + " has rowsDim " + std::to_string(t.rowsDim));
  for (int i = 0; i < t.rank; i++)
    if (t.shape[i] <= 0)
      inconsistent(p, where + " has shape " + describeTensor(t));
  int64_t end = t.offset + tensorElements(t) * dtypeBytes(t.dtype);
  if (t.offset < 0 || end > p.activationBytes)
    inconsistent(p, where + " (bytes " + std::to_string(t.offset) + ".." + std::to_string(end) +
                        ") lies outside the activations (" + std::to_string(p.activationBytes) +
                        " bytes)");
}

static void checkLogits(const ProgramInfo &p, const EntryPoint &e) {
  if (e.numOutputs < 1)
    inconsistent(p, std::string("entry ") + e.name + " has no logits output");
  const TensorRef &t = e.outputs[0];
  if (t.dtype != DType::F32 || tensorElements(t) != p.vocab)
    inconsistent(p, std::string("output 0 of ") + e.name + " is " + describeTensor(t) +
                        ", not f32 logits of " + std::to_string(p.vocab) + " tokens");
}

void checkProgram(const ProgramInfo &p) {
  if (p.vocab <= 0 || p.ctx <= 0)
    inconsistent(p, "vocab " + std::to_string(p.vocab) + ", ctx " + std::to_string(p.ctx));
  for (int i = 0; i < p.numParams; i++) {
    const ParamInfo &q = p.params[i];
    int64_t n = 1;
    for (int d = 0; d < q.rank; d++)
      n *= q.shape[d];
    if (q.offset < 0 || q.offset + n * dtypeBytes(q.dtype) > p.paramBytes)
      inconsistent(p, std::string("param ") + q.name + " lies outside the params allocation");
  }
  int needed = p.kind == ModelKind::CausalLM ? 2 : 1;
  if (p.numEntries < needed)
    inconsistent(p, "it has " + std::to_string(p.numEntries) + " entry points, " +
                        (needed == 2 ? "a CausalLM needs prefill and decode" : "needs prefill"));
  for (int i = 0; i < p.numEntries; i++) {
    const EntryPoint &e = p.entries[i];
    if (!e.fn || e.capacity <= 0)
      inconsistent(p, std::string("entry ") + e.name + " has no function or capacity");
    if (e.numInputs > 0 && !e.inputKinds)
      inconsistent(p, std::string("entry ") + e.name + " has no input kinds");
    for (int j = 0; j < e.numInputs; j++)
      checkTensor(p, e, e.inputs[j]);
    for (int j = 0; j < e.numOutputs; j++)
      checkTensor(p, e, e.outputs[j]);
  }
  if (p.kind == ModelKind::CausalLM) {
    checkLogits(p, p.entries[0]);
    checkLogits(p, p.entries[1]);
  } else if (!findOutput(p.entries[0], "pooled") && !findOutput(p.entries[0], "hidden")) {
    inconsistent(p, "the encoder's prefill has neither a 'pooled' nor a 'hidden' output");
  }
}

} // namespace bmrt
