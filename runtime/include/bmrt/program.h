//===- bmrt/program.h - What an emitted program tells the runtime ---------===//
//
// bmbc emits one source per program; besides the entry points it emits
// constant tables of this shape (the parameter table with offsets and shapes,
// the checkpoint name maps, the inputs and outputs of each entry point, the
// per-role buffer sizes of the memory plan). The app (`infer_main`), the
// checkpoint loader and the tests read only these tables: nothing about a
// model is known to the runtime otherwise.
//
//===----------------------------------------------------------------------===//
#ifndef BMRT_PROGRAM_H
#define BMRT_PROGRAM_H

#include "bmrt/context.h"

#include <cstdint>
#include <string>

namespace bmrt {

enum class DType : int { F32, F64, I32 };

constexpr int kMaxRank = 6;

/// A parameter's declared initializer (`param w: [n] = normal(0.02)`), for
/// programs that start from fresh parameters. None: not declared (tables
/// written by hand).
enum class InitKind : int { None, Zeros, Ones, Normal, Uniform, Constant };

/// One parameter: `name` is our symbol ("h.attn.q.w"); `stacked` params of a
/// repeat have shape [layers, ...] and slice i is layer i (DESIGN decision 2).
struct ParamInfo {
  const char *name;
  DType dtype;
  int rank;
  int64_t shape[kMaxRank];
  int64_t offset;   // bytes from the start of the params allocation
  bool stacked;
  bool frozen;
  InitKind init;    // Normal: std = initA; Uniform: [initA, initB); Constant: initA
  double initA, initB;
  // Training programs only (defaults = an infer program's table):
  int64_t gradOffset = -1; // bytes into the grads allocation; -1: no gradient (frozen).
                           // Also the param's place in the flat trainable group:
                           // offset = TrainInfo::groupParamOffset + gradOffset
  int64_t optOffset = -1;  // bytes into each optimizer-state slot of a one-rank
                           // run (= gradOffset; Partition says where slot k
                           // starts); -1: no optimizer state
  bool decay = false;      // AdamW applies weight decay to it
  bool delta = false;      // added by delta tuning (bmb-insert-deltas): saved under
                           // our name beside any name map; a checkpoint without it
                           // leaves it at its declared initializer (LoadReport::freshDeltas)
  int64_t layerStride = 0; // stacked: bytes from layer i's slice to layer i + 1's, in the
                           // params and the grads allocation alike (a trainable param's
                           // layers are one unit apart in the layer-major group,
                           // TrainInfo::groupUnits); 0: the slices are back to back.
};

/// Layers of a param (shape[0] when stacked, else 1), the bytes of one
/// layer's slice (of the whole param when not stacked) and from one slice
/// to the next. Code that reads or writes a whole param goes slice by slice
/// (bmrt::io's copyParamIn / copyParamOut).
int64_t paramLayers(const ParamInfo &p);
int64_t paramSliceBytes(const ParamInfo &p);
int64_t paramLayerStride(const ParamInfo &p);

/// One rule of a checkpoint name map (declared in the .bmb file with
/// `checkpoint <name> for <Model> { ... }`): the external tensor `external`
/// equals our params `parts` concatenated along `axis` (in our layout), then
/// transposed (2-D) when `transpose`. "{i}" in `external` stands for the layer
/// index of stacked parts. A `tied` rule names a tensor that the file may omit
/// (on load: if present it must equal the part; on save: it is written).
struct NameRule {
  const char *external;
  const char *const *parts;
  int numParts;
  int axis;
  bool transpose;
  bool tied;
};

struct NameMap {
  const char *name;         // "hf"
  const NameRule *rules;
  int numRules;
};

/// What an input of an entry point carries; the app fills it.
enum class InputKind : int {
  Tokens,      // i32 token ids
  TokenTypes,  // i32 segment ids (BERT): zeros
  Mask,        // i32 padding mask: 1 for the valid rows
};

/// A tensor in one of the role allocations (activations, state).
struct TensorRef {
  const char *name;
  DType dtype;
  int rank;
  int64_t shape[kMaxRank]; // at capacity; see rowsDim
  int64_t offset;          // bytes from the start of its role's allocation
  int rowsDim;             // the dim that is the run-time length (-1: none)
};

/// A training rank's part of the flat trainable group (issue 5; TrainInfo
/// has the group): elements [begin, end) of the group are the ones this rank
/// reduces, clips and updates. Partitions are `size` elements each, rank r's
/// starting at r * size (the last may end early: `end` is capped at the
/// group's length), so the grads allocation and the group's span of the
/// params allocation hold ranks * size elements. One rank, or zero = 0:
/// the whole group. Optimizer-state slot k of group element e lives at
/// element k * optStride + (e - begin) of the optimizer-state allocation.
///
/// zero = 2 on several ranks: the grads allocation holds only the
/// partition, gradient of group element e at grads[e - gradsFrom]
/// (gradsFrom = begin, gradElems = size). Otherwise gradsFrom = 0 and
/// gradElems = total.
///
/// zero = 3 on several ranks: the params allocation holds, after the frozen
/// params, only the partition as well: group element e at element
/// e - paramsFrom from groupParamOffset (paramsFrom = begin, paramElems =
/// size). Otherwise paramsFrom = 0 and paramElems = total.
struct Partition {
  int64_t begin = 0, end = 0, size = 0;
  int64_t optStride = 0;
  int64_t total = 0;     // elements of every rank's partitions together (ranks * size, or the group)
  int64_t gradsFrom = 0; // group element at grads[0]
  int64_t gradElems = 0; // elements of the grads allocation
  int64_t paramsFrom = 0; // group element at the group's start in the params allocation
  int64_t paramElems = 0; // elements of the group's span of the params allocation
};

/// The allocations of one program, one per role (DESIGN decision 3).
struct Buffers {
  void *params = nullptr;
  void *state = nullptr;       // persistent: KV cache
  void *activations = nullptr; // shared by the entry points
  void *grads = nullptr;       // training: one gradient per trainable param
  void *optState = nullptr;    // training: optimizer state (AdamW m, v)
  Partition part;              // training: this rank's part of the trainable group
  void *gradStaging = nullptr; // zero = 2: the backward's gradients of one unit at a time
                               // (TrainInfo::gradStagingBytes), before they are
                               // reduce-scattered into the rank's partition of grads
  void *paramStaging = nullptr; // zero = 3: the params of one unit at a time, gathered from
                                // the ranks' partitions (TrainInfo::paramStagingBytes);
                                // the entries read every trainable param here
  // Mixed precision (bf16/fp16 programs): the trainable group rounded to the
  // reduced type, 2 bytes per element, in the group's order; the autocast
  // GEMMs read their weights here. Refreshed from the fp32 params (the
  // master weights) after every update (bmrt::refresh_low_params).
  void *lowParams = nullptr;
  // offload = optimizer (TrainInfo::offloadOptimizer): optState is host
  // memory holding the offloaded state's kOffloadSlots slots (bmrt/offload.h).
  bool optStateOffloaded = false;
};

/// Entry points: `rows` valid rows starting at absolute position `start`
/// (prefill: start = 0, rows = prompt length; decode: start = position of the
/// new token, rows = 1). Inputs are read from and outputs written to the
/// activations allocation at the offsets in the tables below.
using EntryFn = void (*)(Context &ctx, const Buffers &buf, int64_t start, int64_t rows);

struct EntryPoint {
  const char *name;            // "prefill", "decode"
  EntryFn fn;
  int64_t capacity;            // the most rows one call takes (T of this entry)
  const TensorRef *inputs;
  const InputKind *inputKinds; // one per input
  int numInputs;
  const TensorRef *outputs;
  int numOutputs;
};

enum class ModelKind : int {
  CausalLM,  // output 0 is next-token logits [1, vocab] (of the last row)
  Encoder,   // outputs are hidden states (and a pooled vector when present)
};

struct TrainInfo;
struct TuneInfo;

/// A LoRA that an infer program merges into its weight after loading
/// (bmb-insert-deltas, infer jobs): weight += scale * b @ a, per layer for
/// stacked params (weight [out, in], a [rank, in], b [out, rank]).
struct DeltaMerge {
  const char *weight, *a, *b;
  double scale;
};

struct ProgramInfo {
  const char *source;          // the .bmb file it was compiled from
  const char *job;
  const char *model;
  const char *from;            // the job's default checkpoint ("" if none)
  ModelKind kind;
  int64_t vocab, ctx;
  const ParamInfo *params;
  int numParams;
  const NameMap *nameMaps;
  int numNameMaps;
  int64_t paramBytes, stateBytes, activationBytes;
  const EntryPoint *entries;   // prefill first; decode (CausalLM) second
  int numEntries;
  // Job settings the app uses as defaults (sampling = top_p(0.9, ...)).
  const char *sampling;        // "greedy", "temperature", "top_k", "top_p"
  double temperature, topP;
  int64_t topK;
  const char *tokenizer;       // job's `tokenizer` setting ("" = from the checkpoint dir)
  const TrainInfo *train = nullptr;      // train jobs only (entries is then empty)
  const DeltaMerge *merges = nullptr;    // infer jobs with a merged LoRA delta
  int numMerges = 0;
  const TuneInfo *tune = nullptr;        // tune jobs only (train is then set too)
};

/// Applies program.merges to the loaded params (infer_main, after loading).
void mergeDeltas(const ProgramInfo &program, void *params);

//===----------------------------------------------------------------------===//
// Training programs (issue 4)
//===----------------------------------------------------------------------===//

/// What one call of a training entry needs and reports. The app owns the
/// schedule (lr), the loss scale and the RNG counters; the compiler's code
/// only reads them.
struct StepArgs {
  int64_t step = 1;          // 1-based optimizer update (AdamW bias correction)
  double lr = 0;             // this update's learning rate, schedule applied
  double dlossScale = 1;     // 1 / non-ignored targets of the whole global batch
  uint64_t seed = 0;         // dropout: Philox key (seed, step, microStep, op, element)
  int64_t microStep = 0;     // index of the micro-batch within the step
  double gradNorm = 0;       // out (optimizerStep): global grad 2-norm before clipping
  // TrainInfo::overlapGrads programs. forwardBackward: this is the step's
  // last micro-batch, and its gradients are final as the backward finishes
  // each unit: issue their all-reduce there (Comm::defer). optimizerStep:
  // the last forwardBackward did; wait for those instead of issuing.
  bool overlapGrads = false;
  // zero = 3 programs: each repeat iteration issues the next layer's param
  // gather ahead, into the other slot (bmb_exec.prefetch_unit); false
  // (--no-overlap): every layer is gathered when its iteration starts.
  bool prefetchParams = true;
  // zero = 2 and 3 programs: each layer's gradient reduce-scatter stays in
  // flight through the next layer's backward (bmb_exec.reduce_scatter_ahead,
  // bmrt/zero2_ahead.h); false (--no-overlap): waited for at once. The
  // same sums either way.
  bool reduceScatterAhead = true;
};

/// A training entry. Inputs/outputs live in the activations allocation at
/// the offsets of its TensorRef tables, as for infer entries.
using TrainFn = void (*)(Context &ctx, const Buffers &buf, StepArgs &args);

struct TrainEntry {
  const char *name;
  TrainFn fn;
  const TensorRef *inputs;   // "tokens" i32 [B, T], "targets" i32 [B, T] (-100 = ignore)
  int numInputs;
  const TensorRef *outputs;  // "losses" f32 [B*T] (f64 in a precision = fp64 program):
                             // per-row loss, 0 where ignored
  int numOutputs;
};

enum class OptimizerKind : int { AdamW, SGD };
enum class TrainObjective : int { CausalLM, MaskedLM };

/// The train job, as compiled. Batch and sequence length are fixed.
struct TrainInfo {
  int64_t batch, seq;
  int64_t gradBytes, optStateBytes;
  OptimizerKind optimizer;
  int optSlots;                // per trainable param: AdamW 2 (exp_avg, exp_avg_sq), SGD 1 or 0
  double lr, beta1, beta2, eps, weightDecay, momentum;
  double clipNorm;             // 0: no clipping
  int schedule;                // LrSchedule of training.h (Constant, Linear, Cosine)
  int64_t warmup, steps;       // schedule warmup and the job's default --steps
  int64_t accumulate;          // micro-batches per optimizer update
  const char *data;            // the job's data path ("" = none)
  const char *dataTokenizer;   // the job's data tokenizer ("gpt2", "byte", ...)
  // forwardBackward: forward, losses, backward; ACCUMULATES into grads
  //                  (zero after optimizerStep and at start).
  // optimizerStep:   clip (clipNorm), update every trainable param, zero grads.
  // evaluate:        forward and losses only; grads untouched.
  TrainEntry forwardBackward, optimizerStep, evaluate;
  // The objective the app prepares batches for. CausalLM: targets are the
  // next tokens. MaskedLM: each token is picked with maskProb (BERT's
  // 80/10/10: maskId / a random id / kept), targets are the picked tokens'
  // ids, -100 elsewhere; inputs "token_types" (zeros) and "mask" (ones),
  // when the entry has them.
  TrainObjective objective = TrainObjective::CausalLM;
  double maskProb = 0;
  int64_t maskId = -1;
  // The job's eval_every / save_every / log_every (0 = not set): defaults of
  // --eval-every, --save-every and --print-every.
  int64_t evalEvery = 0, saveEvery = 0, logEvery = 0;
  // Data parallelism and ZeRO (issue 5). The trainable params form one flat
  // group, laid out alike in the params allocation (from groupParamOffset,
  // after the frozen params) and in the grads allocation (from 0): groupElems
  // elements of the trainables' dtype, gradBytes = groupElems * its size.
  // Ranks split it into partitions of a multiple of partitionAlign elements
  // (the chunk of the deterministic gradient norm). zeroStage 0: every rank
  // holds and updates everything (gradients all-reduced); 1: optimizer state
  // and updates partitioned (gradients reduce-scattered, params all-gathered);
  // 2: gradients partitioned as well (reduce-scattered unit by unit during
  // the backward, gradStagingBytes).
  int zeroStage = 0;
  int64_t groupParamOffset = 0;
  int64_t groupElems = 0;
  int64_t partitionAlign = 1;
  // Mixed precision (docs/training.md): "bf16" or "fp16", else "fp32" (an
  // fp64 program's dtypes say F64). bf16/fp16: the GEMMs round their inputs
  // to that type and accumulate in fp32; params, grads and optimizer state
  // stay fp32 (the params are the master weights).
  const char *precision = "fp32";
  // fp16: dynamic loss scaling (runtime/app/loss_scale.h) starts at
  // lossScale and doubles after lossScaleWindow updates without overflow.
  double lossScale = 65536;
  int64_t lossScaleWindow = 1000;
  // The units of the group (layer-major): unit u is elements
  // [groupUnits[u], groupUnits[u + 1]); unit 0 holds the params outside
  // repeats, each later unit one layer's slices of a repeat's params.
  const int64_t *groupUnits = nullptr;
  int numUnits = 0;
  // zero = 0: forwardBackward can issue the gradient all-reduces itself,
  // layer by layer as its backward finishes each unit (StepArgs::overlapGrads).
  bool overlapGrads = false;
  // zero = 2 (zeroStage 2: gradients partitioned too): bytes of the staging
  // allocation the backward writes each unit's gradients into (unit 0 and
  // two slots for the layers of each repeat, gradSlotStride bytes apart;
  // Buffers::gradStaging).
  int64_t gradStagingBytes = 0;
  // The schedule's floor (a job's `min_lr`, an absolute learning rate):
  // linear and cosine decay to it instead of 0 (lr_multiplier's minRate).
  double minLr = 0;
  // offload = optimizer (bmb-offload-optimizer; bmrt/offload.h): the
  // optimizer state and the AdamW update are in host memory, the state
  // allocation holds kOffloadSlots slots (m, v, the fp32 master, the
  // gradient staging), and the step copies in chunks of offloadChunk elements.
  bool offloadOptimizer = false;
  int64_t offloadChunk = 0;
  // zero = 3 (params partitioned too): bytes of the param staging (the
  // layout of gradStagingBytes; Buffers::paramStaging).
  int64_t paramStagingBytes = 0;
  // zero = 2 and 3: bytes from a layer's first gradient slot to its second
  // (layer l writes slot l % 2 while layer l + 1's reduce-scatter is in
  // flight from the other; bmrt/zero2_ahead.h).
  int64_t gradSlotStride = 0;
};

//===----------------------------------------------------------------------===//
// Tuning programs (issue 6; docs/tuning.md)
//===----------------------------------------------------------------------===//

/// A tune job's program. ProgramInfo::train holds what a train job's does
/// (batch B, seq T, optimizer, schedule, clip, the three entries, the flat
/// trainable group); the entries take prompt-assembled examples and score
/// classes instead of predicting tokens:
///
///   inputs  "tokens"      i32 [B, T]        ids; soft token k is id vocab + k
///           "mask"        i32 [B, T]        1 on real tokens, 0 on padding
///                                           (only when the model takes a mask)
///           "token_types" i32 [B, T]        zeros (only when the model takes them)
///           "mask_pos"    i32 [B, M]        the row whose logits score each {mask}
///           "labels"      i32 [B]           class index; -100: a padding example
///           "label_words" i32 [M, C, W, K]  token ids of word w of label c at
///                                           mask m; -1 pads words and tokens
///           "calibration" f32 [M, C, W]     divisor of each label word's
///                                           probability (all 1: none)
///   outputs "losses"      f32 [B]           per-example loss, 0 for padding
///           "scores"      f32 [B, C]        class scores; the prediction is the argmax
///           "word_probs"  f32 [B, M, C, W]  label-word probabilities before
///                                           calibration (evaluate only; calibration
///                                           is computed from these)
///
/// A soft verbalizer (labelParam set; one mask) scores the classes with its
/// trained rows, not with label-word probabilities: its entries have no
/// "label_words" and "calibration" inputs and no "word_probs" output (the
/// app writes and reads only what an entry's tables list). Its label words
/// (W, K) only initialise the rows (from labelInitParam's rows of each
/// class's first word).
///
/// StepArgs::dlossScale is 1 / the labelled examples of the global batch.
/// The app assembles examples with bmrt::assemblePrompt and fills these.
struct TuneInfo {
  const char *prompt;        // the job's bmb.prompt plan as JSON, the shape
                             // bmb-prompt reads (segments, truncate, max_len,
                             // labels, verbalizers)
  const char *data;          // the job's data config as JSON: {"kind": "tsv"|"jsonl",
                             // "path": ..., "text_a": 0, ..., "labels": [...]} ("" = none)
  int64_t numLabels, numMasks, maxWords, maxWordTokens; // C, M, W, K
  int64_t numSoft;           // soft tokens: rows of softParam
  const char *softParam;     // "prompt.soft" ("" when numSoft = 0)
  const char *embeddingParam;// the token embedding (soft-token init from words)
  const char *labelParam;    // soft verbalizer: "prompt.labels" [C, dim], else ""
  const char *headParam;     // the weight whose rows score the vocabulary
                             // ("" for a headless encoder: BERT's BertModel)
  const char *labelInitParam;// soft verbalizer: the table whose rows start
                             // labelParam's (the head's weight, or a headless
                             // encoder's token embedding), else ""
};

/// The tune executable's main (runtime/app/tune_run.cpp, with the host's
/// backend in app/tune_main.cpp or the GPU's in cuda/tune_main.cpp):
/// labelled data, prompt assembly, training of the delta and prompt params,
/// accuracy and macro-F1, delta-only checkpoints.
int tune_main(int argc, char **argv, const ProgramInfo &program);

/// The partition of `rank` of `ranks` (Partition's comment).
Partition partitionOf(const TrainInfo &train, int rank, int ranks);

/// Fails, naming `what`, unless buf.part is a consistent partition: the
/// *_part functions of every backend check this first.
inline void checkPartition(const char *what, const Buffers &buf) {
  const Partition &p = buf.part;
  if (p.begin < 0 || p.end < p.begin || p.end > p.total || p.optStride < p.end - p.begin ||
      p.gradsFrom < 0 || p.gradsFrom > p.begin || p.end - p.gradsFrom > p.gradElems ||
      p.paramsFrom < 0 || p.paramsFrom > p.begin || p.end - p.paramsFrom > p.paramElems)
    fail(std::string(what) + ": partition [" + std::to_string(p.begin) + ", " +
         std::to_string(p.end) + ") of " + std::to_string(p.total) +
         " elements is inconsistent (the app did not set Buffers::part?)");
}

/// Group elements [at, at + n) clipped to this rank's partition as [lo, hi);
/// false when they do not meet.
inline bool clipToPartition(const Buffers &buf, int64_t at, int64_t n, int64_t &lo, int64_t &hi) {
  lo = at > buf.part.begin ? at : buf.part.begin;
  hi = at + n < buf.part.end ? at + n : buf.part.end;
  return lo < hi;
}

/// Bytes of one element of the trainable group (4 for fp32, 8 for fp64);
/// 4 when nothing is trainable.
inline int64_t groupElemBytes(const TrainInfo &train) {
  return train.groupElems > 0 ? train.gradBytes / train.groupElems : 4;
}

/// The element type of the trainable group (of the gradients and the
/// optimizer state); F32 when nothing is trainable.
DType groupDType(const ProgramInfo &program);

/// The train executable's main (runtime/app): data, the step loop,
/// checkpoints, resume, metrics.
int train_main(int argc, char **argv, const ProgramInfo &program);

/// Fills every parameter from its declared initializer, reproducibly:
/// element e of parameter p draws from Philox keyed by (seed, p, e), so the
/// values do not depend on thread count or machine. Fails if a parameter has
/// no declared initializer.
void initParams(const ProgramInfo &program, void *params, uint64_t seed);
/// The same for the delta params only (ParamInfo::delta): before loading a
/// backbone checkpoint that lacks them.
void initDeltaParams(const ProgramInfo &program, void *params, uint64_t seed);

/// The infer executable's main (runtime/app): parses flags, loads the
/// checkpoint and tokenizer, runs prefill/decode, samples, streams.
int infer_main(int argc, char **argv, const ProgramInfo &program);

} // namespace bmrt

#endif // BMRT_PROGRAM_H
