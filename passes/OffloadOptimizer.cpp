//===- OffloadOptimizer.cpp - AdamW's state and update in host memory -----===//
//
// bmb-offload-optimizer (docs/distributed.md, "Optimizer offload"). A train
// job with `offload = optimizer` keeps AdamW's m and v, and an fp32 master
// copy of the params, for the rank's partition in host memory; the update
// runs there (runtime/include/bmrt/offload.h). On @optimizer_step, after
// the gradient collectives and the norm:
//
//   bmb_exec.clip_grads %n {max_norm}       ->  %c = bmb_exec.clip_coefficient %n {max_norm}
//   bmb_exec.adamw_update @p lr %lr step %s ->  %out = bmb_exec.offload_grads_out {chunk}
//   ... (one per trainable param)               %in = bmb_exec.offload_adamw_update %out
//                                                       [@p, ...] lr %lr step %s scale %c
//                                               bmb_exec.wait %in
//
// at the place of the last update, so the ZeRO all-gather and the zeroing
// of the gradients follow as before. Clipping becomes a coefficient the
// host applies to the gradients it copied out (the device's gradients are
// zeroed afterwards anyway), which saves a pass over them. The host update
// is the non-offloaded AdamW's element function on the same elements, so
// the result is the same bits.
//
// Programs without the setting are left alone. The job's setting reaches
// the program through its `settings` attribute (bmb-lower-to-exec keeps it).
//
//===----------------------------------------------------------------------===//
#include "dialects/BmbExec/BmbExecOps.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::bmb {
#define GEN_PASS_DEF_OFFLOADOPTIMIZERPASS
#include "passes/Passes.h.inc"
} // namespace mlir::bmb

using namespace mlir;
using namespace mlir::bmb::exec;

namespace {

struct OffloadOptimizerPass
    : mlir::bmb::impl::OffloadOptimizerPassBase<OffloadOptimizerPass> {
  using OffloadOptimizerPassBase::OffloadOptimizerPassBase;

  void runOnOperation() override {
    for (ProgramOp program : getOperation().getOps<ProgramOp>())
      if (failed(apply(program)))
        return signalPassFailure();
  }

  LogicalResult apply(ProgramOp program) {
    auto settings = program->getAttrOfType<DictionaryAttr>("settings");
    auto offload = settings ? settings.getAs<StringAttr>("offload") : StringAttr();
    if (!offload || offload.getValue() == "none")
      return success();
    if (offload.getValue() != "optimizer")
      return program.emitError("bmb-offload-optimizer: offload = ")
             << offload.getValue() << " is not implemented (offload = optimizer is)";
    if (chunkElems < 1)
      return program.emitError("bmb-offload-optimizer: chunk-elems must be at least 1, got ")
             << static_cast<int64_t>(chunkElems);
    auto step = program.lookupSymbol<func::FuncOp>("optimizer_step");
    if (!step || step.getBody().empty())
      return program.emitError("bmb-offload-optimizer: offload = optimizer needs the "
                               "program's @optimizer_step (a train program)");
    Block &body = step.getBody().front();
    if (auto sgd = body.getOps<SGDUpdateOp>(); !sgd.empty())
      return (*sgd.begin()).emitError("bmb-offload-optimizer: offload = optimizer updates AdamW (adamw, "
                           "adam); an SGD step on the host is not implemented");
    SmallVector<AdamWUpdateOp> updates = llvm::to_vector(body.getOps<AdamWUpdateOp>());
    if (updates.empty())
      return step.emitError("bmb-offload-optimizer: @optimizer_step has no "
                            "bmb_exec.adamw_update to offload");
    // One call updates every param: the hyperparameters other than weight
    // decay must be shared (bmb-insert-optimizer makes them so).
    AdamWUpdateOp first = updates.front();
    // The same value, or the same field of StepArgs read again.
    auto same = [](Value a, Value b) {
      if (a == b)
        return true;
      auto sa = a.getDefiningOp<StepArgOp>(), sb = b.getDefiningOp<StepArgOp>();
      return sa && sb && sa.getField() == sb.getField();
    };
    SmallVector<Attribute> params;
    SmallVector<double> decays;
    for (AdamWUpdateOp u : updates) {
      if (!same(u.getLr(), first.getLr()) || !same(u.getStep(), first.getStep()) ||
          u.getBeta1Attr() != first.getBeta1Attr() || u.getBeta2Attr() != first.getBeta2Attr() ||
          u.getEpsAttr() != first.getEpsAttr()) {
        InFlightDiagnostic d = u.emitError("bmb-offload-optimizer: the offloaded step updates "
                                           "every param with one lr, step, betas and eps; this "
                                           "update differs from the first");
        d.attachNote(first.getLoc()) << "the first";
        return d;
      }
      params.push_back(u.getParamAttr());
      decays.push_back(u.getWeightDecay().convertToDouble());
    }
    SmallVector<ClipGradsOp> clips = llvm::to_vector(body.getOps<ClipGradsOp>());
    if (clips.size() > 1)
      return clips[1].emitError("bmb-offload-optimizer: more than one bmb_exec.clip_grads");
    if (!clips.empty() && !clips.front()->isBeforeInBlock(first))
      return clips.front().emitError("bmb-offload-optimizer: clipping after the updates");

    OpBuilder b(program.getContext());
    Value scale;
    if (!clips.empty()) {
      ClipGradsOp clip = clips.front();
      b.setInsertionPoint(clip);
      scale = b.create<ClipCoefficientOp>(clip.getLoc(), b.getF64Type(), clip.getNorm(),
                                          clip.getMaxNormAttr());
      clip.erase();
    }
    AdamWUpdateOp last = updates.back();
    b.setInsertionPoint(last);
    Location loc = last.getLoc();
    auto requestType = RequestType::get(b.getContext());
    auto out = b.create<OffloadGradsOutOp>(loc, requestType, b.getI64IntegerAttr(chunkElems));
    auto in = b.create<OffloadAdamWUpdateOp>(
        loc, requestType, out, b.getArrayAttr(params), first.getLr(), first.getStep(), scale,
        first.getBeta1Attr(), first.getBeta2Attr(), first.getEpsAttr(),
        b.getDenseF64ArrayAttr(decays));
    b.create<WaitOp>(loc, in);
    // The updates, and the StepArgs reads only they used.
    SmallVector<Operation *> reads;
    for (AdamWUpdateOp u : updates) {
      for (Value v : std::initializer_list<Value>{u.getLr(), u.getStep()})
        if (auto r = v.getDefiningOp<StepArgOp>(); r && v != first.getLr() && v != first.getStep())
          reads.push_back(r);
      u.erase();
    }
    for (Operation *r : reads)
      if (r->use_empty())
        r->erase();
    return success();
  }
};

} // namespace
