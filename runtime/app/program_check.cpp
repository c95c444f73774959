//===- app/program_check.cpp - Bounds and shapes of the program tables ----===//
//
// What the app relies on: every tensor lies inside its allocation, entry
// points exist with positive capacities, a CausalLM's first output of each
// entry is its f32 logits [vocab], an encoder has "pooled" or "hidden".
// A training program instead has its three train entries, whose "tokens",
// "targets" (i32 [B, T]) and "losses" (f32 [B*T]) the app fills and reads,
// and gradients and optimizer slots inside their own allocations.
//
//===----------------------------------------------------------------------===//
#include "app/program_check.h"
#include "app/tensors.h"
#include "bmrt/training.h"

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

// The train entry's tensor `name`, checked to be `dtype` with `elements`.
static void checkTrainTensor(const ProgramInfo &p, const TrainEntry &e, const TensorRef *list,
                             int count, const char *name, DType dtype, int64_t elements) {
  const TensorRef *t = nullptr;
  for (int i = 0; i < count; i++)
    if (std::strcmp(list[i].name, name) == 0)
      t = &list[i];
  std::string where = std::string("entry ") + e.name + "'s " + name;
  if (!t)
    inconsistent(p, "entry " + std::string(e.name) + " has no tensor '" + name + "'");
  if (t->rank < 0 || t->rank > kMaxRank || t->dtype != dtype || tensorElements(*t) != elements)
    inconsistent(p, where + " is " + describeTensor(*t) + ", expected " + dtypeName(dtype) +
                        " with " + std::to_string(elements) + " elements");
  int64_t end = t->offset + elements * dtypeBytes(dtype);
  if (t->offset < 0 || end > p.activationBytes)
    inconsistent(p, where + " lies outside the activations");
}

static void checkTrainProgram(const ProgramInfo &p) {
  const TrainInfo &t = *p.train;
  if (t.batch < 1 || t.seq < 1 || t.seq > p.ctx)
    inconsistent(p, "train batch " + std::to_string(t.batch) + " x seq " +
                        std::to_string(t.seq) + " (ctx " + std::to_string(p.ctx) + ")");
  if (t.accumulate < 1 || t.steps < 0 || t.warmup < 0 || !(t.lr >= 0))
    inconsistent(p, "train settings (accumulate, steps, warmup, lr)");
  if (t.schedule < (int)LrSchedule::Constant || t.schedule > (int)LrSchedule::Cosine)
    inconsistent(p, "lr schedule " + std::to_string(t.schedule));
  if (t.optSlots < 0 || t.optSlots > 2)
    inconsistent(p, std::to_string(t.optSlots) + " optimizer slots per parameter");
  const int64_t rows = t.batch * t.seq;
  const TrainEntry *entries[3] = {&t.forwardBackward, &t.optimizerStep, &t.evaluate};
  for (const TrainEntry *e : entries)
    if (!e->fn || !e->name)
      inconsistent(p, "a train entry has no function");
  for (const TrainEntry *e : {&t.forwardBackward, &t.evaluate}) {
    checkTrainTensor(p, *e, e->inputs, e->numInputs, "tokens", DType::I32, rows);
    checkTrainTensor(p, *e, e->inputs, e->numInputs, "targets", DType::I32, rows);
    // f32, or f64 in a program compiled with precision = fp64.
    DType lossType = DType::F32;
    for (int i = 0; i < e->numOutputs; i++)
      if (std::strcmp(e->outputs[i].name, "losses") == 0 && e->outputs[i].dtype == DType::F64)
        lossType = DType::F64;
    checkTrainTensor(p, *e, e->outputs, e->numOutputs, "losses", lossType, rows);
  }
  if (t.groupElems < 0 || t.partitionAlign < 1 || t.zeroStage < 0 || t.zeroStage > 3 ||
      (t.zeroStage >= 2) != (t.gradStagingBytes > 0) || t.gradSlotStride < 0 ||
      t.gradStagingBytes > t.gradBytes + t.gradSlotStride ||
      (t.zeroStage == 3) != (t.paramStagingBytes > 0) ||
      t.paramStagingBytes < (t.zeroStage == 3 ? t.gradStagingBytes : 0) ||
      t.groupParamOffset < 0 || t.groupParamOffset + t.gradBytes > p.paramBytes ||
      t.optStateBytes != t.optSlots * t.gradBytes)
    inconsistent(p, "the trainable group (ZeRO stage, offset, size) is inconsistent");
  // The units cover the group in order: unit 0 from element 0, the last
  // ending at the group's end.
  if (t.numUnits < 1 || !t.groupUnits || t.groupUnits[0] != 0 ||
      t.groupUnits[t.numUnits] != t.groupElems)
    inconsistent(p, "the units of the trainable group do not cover it");
  for (int u = 0; u < t.numUnits; u++)
    if (t.groupUnits[u + 1] < t.groupUnits[u])
      inconsistent(p, "the units of the trainable group are out of order");
  for (int i = 0; i < p.numParams; i++) {
    const ParamInfo &q = p.params[i];
    // From layer 0's slice to the end of the last (layers are a unit apart).
    const int64_t bytes = (paramLayers(q) - 1) * paramLayerStride(q) + paramSliceBytes(q);
    if (q.gradOffset >= 0 && t.groupElems * dtypeBytes(q.dtype) != t.gradBytes)
      inconsistent(p, "the trainable group's size does not match the grads allocation");
    if (q.frozen != (q.gradOffset < 0))
      inconsistent(p, std::string("param ") + q.name +
                          (q.frozen ? " is frozen but has a gradient"
                                    : " is trainable but has no gradient"));
    if (q.gradOffset >= 0 && q.gradOffset + bytes > t.gradBytes)
      inconsistent(p, std::string("the gradient of ") + q.name +
                          " lies outside the grads allocation");
    if (q.frozen ? q.optOffset >= 0 : (t.optSlots > 0) != (q.optOffset >= 0))
      inconsistent(p, std::string("param ") + q.name + " has the wrong optimizer state");
    if (q.optOffset >= 0 && q.optOffset != q.gradOffset)
      inconsistent(p, std::string("the optimizer state of ") + q.name +
                          " is not where its gradient is in the trainable group");
    if (q.gradOffset >= 0 && q.offset != t.groupParamOffset + q.gradOffset)
      inconsistent(p, std::string("param ") + q.name +
                          " is not where its gradient is in the trainable group");
  }
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
    if (q.layerStride != 0 && (!q.stacked || q.layerStride < paramSliceBytes(q)))
      inconsistent(p, std::string("param ") + q.name + " has a layer stride shorter than a layer");
    const int64_t extent = (paramLayers(q) - 1) * paramLayerStride(q) + paramSliceBytes(q);
    if (q.offset < 0 || q.offset + extent > p.paramBytes)
      inconsistent(p, std::string("param ") + q.name + " lies outside the params allocation");
  }
  if (p.train)
    return checkTrainProgram(p);
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
