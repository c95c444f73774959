//===- EntryLowering.h - One entry of a bmb_exec program (private) -*- C++ -*-===//
//
// The walk that lowers one `func` of a model to one entry function of a
// bmb_exec.program. Shared by the inference lowering (LowerBmbToExec.cpp:
// the forward ops, prefill/decode) and the training lowering
// (LowerTrain.cpp: gradient ops, saves, reverse repeats, the loss, the
// optimizer). Not a public interface.
//
//===----------------------------------------------------------------------===//
#ifndef BMB_PASSES_ENTRYLOWERING_H
#define BMB_PASSES_ENTRYLOWERING_H

#include "dialects/Bmb/BmbOps.h"
#include "dialects/BmbExec/BmbExecOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::bmb {

namespace ex = mlir::bmb::exec;

/// Inlines every bmb.layer of `func` (forward and backward instances).
void inlineLayers(func::FuncOp func);

/// The params of `model` as bmb_exec.params at the end of `program`.
LogicalResult lowerParams(ModelOp model, ex::ProgramOp program);

/// The checkpoint name maps of `model` as bmb_exec.name_maps.
void lowerNameMaps(ModelOp model, ex::ProgramOp program);

/// Where the job's setting `key` was written: MLIRGen gives a job the
/// location fused["job", "key"("setting"), ...], so an error about one
/// setting points at its line; the job's own location otherwise.
inline Location settingLoc(JobOp job, StringRef key) {
  if (auto fused = dyn_cast<FusedLoc>(job.getLoc()))
    for (Location l : fused.getLocations())
      if (auto n = dyn_cast<NameLoc>(l); n && n.getName() == key)
        return n.getChildLoc();
  return job.getLoc();
}

/// The softmax kernels (forward and backward) work along rows, so `axis` must
/// be the last dim of `x`; otherwise an error at `op` naming the `lowering`.
inline LogicalResult checkSoftmaxAxis(Operation *op, Value x, int64_t axis,
                                      StringRef lowering) {
  if (axis != cast<RankedTensorType>(x.getType()).getRank() - 1)
    return op->emitError("softmax over a dim other than the last is not "
                         "supported by the ")
           << lowering << " lowering yet";
  return success();
}

/// Lowers the module's train job (LowerTrain.cpp).
LogicalResult lowerTrainJob(ModuleOp module, JobOp job);

/// A tune job's program attribute `tune` (LowerTune.cpp): what the runtime's
/// TuneInfo holds (the prompt plan and data config as JSON, C/M/W/K, the
/// soft/embedding/label/head param names), read off the job and @loss.
LogicalResult recordTune(JobOp job, ModelOp model, ex::ProgramOp program, func::FuncOp loss);

/// The job's `precision` and fp16 loss-scaling settings, checked
/// (errors at the setting), and recorded on the train program for the
/// emitter's TrainInfo (LowerMixedPrecision.cpp).
LogicalResult checkLossScaling(JobOp job);
void recordMixedPrecision(JobOp job, ex::ProgramOp program);

class EntryLowering {
public:
  /// An infer entry (prefill or decode); `train`: a training entry, built by
  /// runTrain (LowerTrain.cpp).
  EntryLowering(ex::ProgramOp program, func::FuncOp source, bool prefill, int64_t capacity,
                bool train = false)
      : program(program), source(source), prefill(prefill), train(train), capacity(capacity),
        b(program.getContext()) {}

  /// Builds the exec function; returns failure after reporting.
  FailureOr<func::FuncOp> run();
  /// Builds a training entry named `name` (no arguments; StepArgs through
  /// bmb_exec.step_arg). `backward`: the dlogits of the loss are computed.
  FailureOr<func::FuncOp> runTrain(StringRef name, bool backward);

  bool sawBidirectional = false;
  int64_t vocab = 0;
  bool tune = false; // a tune job's entry: @loss also returns scores (and word_probs)

private:
  ex::ProgramOp program;
  func::FuncOp source;
  bool prefill;
  bool train;
  bool backward = false;     // train: the entry computes gradients
  int64_t capacity; // T of the prefill entry = the KV cache rows
  OpBuilder b;
  Value start, rows;
  DenseMap<Value, Value> buffers; // tensor -> memref (or index -> index)
  DenseMap<Value, int64_t> seqDims;
  int attentionCount = 0;
  Value tokensArg; // the input of kind "tokens": its embedding gives `vocab`
  scf::ForOp currentLoop; // the loop of the repeat being lowered

  MemRefType memrefOf(Type t) {
    auto r = cast<RankedTensorType>(t);
    return MemRefType::get(r.getShape(), r.getElementType());
  }
  int64_t seqDim(Value v) {
    auto it = seqDims.find(v);
    return it == seqDims.end() ? -1 : it->second;
  }
  /// The `rows` operand for an op over a value with sequence dim `d`.
  Value rowsFor(int64_t d) { return prefill && d >= 0 ? rows : Value(); }
  Value alloc(Location loc, Type tensorType) {
    return b.create<ex::AllocOp>(loc, memrefOf(tensorType), IntegerAttr());
  }
  Value lookup(Value v) { return buffers.lookup(v); }
  /// Result sequence dim of a broadcast: operands align from the right.
  int64_t broadcastSeqDim(Operation *op) {
    int64_t rank = cast<RankedTensorType>(op->getResult(0).getType()).getRank();
    for (Value in : op->getOperands()) {
      int64_t d = seqDim(in);
      if (d >= 0)
        return d + rank - cast<RankedTensorType>(in.getType()).getRank();
    }
    return -1;
  }

  LogicalResult lowerInputs(func::FuncOp f);
  LogicalResult lowerBlock(Block &block);
  LogicalResult lowerOp(Operation *op);
  LogicalResult lowerRepeat(RepeatOp op);
  /// Lowers the ops of `op`'s body but its yield into `loop` (currentLoop
  /// while they are lowered); returns the yield. Shared with
  /// lowerTrainRepeat, which handles the yield differently.
  FailureOr<YieldOp> lowerRepeatBody(RepeatOp op, scf::ForOp loop);
  /// The buffers a repeat's carried values live in (the initial value's
  /// buffer when nothing else reads it, else a copy).
  SmallVector<Value> carriedBuffers(RepeatOp op);
  /// At the end of `loop`'s body: the next carried values `yielded` into
  /// their buffers; maps the repeat's carried results to them.
  void yieldCarried(RepeatOp op, scf::ForOp loop, ArrayRef<Value> carried, ValueRange yielded);
  LogicalResult lowerAttention(AttentionOp op);
  LogicalResult lowerReturn(func::ReturnOp op);
  void ewise(Operation *op, StringRef kind, FloatAttr factor = {});

  // Training (LowerTrain.cpp).
  Value lossBuffer;          // the per-row losses of the loss op
  Value gradNorm;            // optimizer_step: the norm before clipping
  SmallVector<Value> pendingRequests; // optimizer_step: issued, not yet waited
  /// forward_backward under zero = 2: the repeats' layer units whose last
  /// reduce-scatters are still in flight after their reverse loop.
  struct LayersInFlight {
    ArrayAttr params;
    int64_t count;
    Location loc;
  };
  SmallVector<LayersInFlight> layersInFlight;
  LogicalResult lowerLayerReduceScatter(GradReduceScatterUnitOp r);
  void finishLayerReduceScatters(Location loc);
  void finishGradientCollectives(Location loc);
  DenseSet<Operation *> fusedAccumulates; // grad_accumulates a producer did
  LogicalResult lowerTrainInputs();
  /// Lowers `op` if it is one of the training ops; failure() with handled
  /// set when it failed, handled false when it is not a training op.
  LogicalResult lowerTrainOp(Operation *op, bool &handled);
  /// The same for the prompt-tuning ops (LowerTune.cpp).
  LogicalResult lowerTuneOp(Operation *op, bool &handled);
  LogicalResult lowerTrainRepeat(RepeatOp op);
  /// forward_backward's dropout with p > 0: a kernel drawing the mask.
  LogicalResult lowerTrainDropout(DropoutOp op);
  LogicalResult lowerTrainReturn(func::ReturnOp op);
  /// A zeroed fresh buffer for an accumulating kernel's output.
  Value zeroed(Location loc, Type tensorType);
  /// When `result`'s only use is a grad_accumulate in the same block: the
  /// parameter's gradient view to accumulate into directly (the
  /// grad_accumulate becomes a no-op); else null.
  Value accumulateTarget(Value result);
  /// Where a gradient result of a multi-result backward kernel goes: the
  /// parameter's gradient (accumulateTarget), a zeroed fresh buffer, or
  /// null when the result is unused.
  Value gradientOutput(Location loc, Value result);
  Value stepArg(Location loc, StringRef field);
};

} // namespace mlir::bmb

#endif // BMB_PASSES_ENTRYLOWERING_H
