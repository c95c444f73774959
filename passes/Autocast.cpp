//===- Autocast.cpp - Which ops of a train job compute in bf16 / fp16 -----===//
//
// bmb-autocast (docs/passes.md, docs/training.md "Mixed precision"). For a
// train job with `precision = bf16` (or fp16) it marks the GEMM-class ops of
// the loss function - `bmb.linear`, `bmb.lm_head`, the head GEMM of
// `bmb.fused_classifier` and the two matmuls of `bmb.attention` - with
// `bmb.autocast = bf16`: their inputs are rounded to bf16, the products
// accumulated in fp32 and written in fp32, as torch.autocast and the tensor
// cores do (attention: q, k, v and the probabilities before P.V; its
// softmax and scaling stay fp32). Norms, the loss and the optimizer are not
// marked: they stay fp32, and the params stay fp32 (the master weights). It runs before bmb-autodiff (DESIGN: autocast
// comes before autodiff), which gives the gradient GEMMs of a marked op the
// same mark; the lowering carries it to bmb_exec.gemm / bmb_exec.matmul, and
// the emitter calls the runtime's reduced-input GEMMs for marked ones.
//
//===----------------------------------------------------------------------===//
#include "dialects/Bmb/BmbOps.h"
#include "passes/Autocast.h"
#include "passes/EntryLowering.h"
#include "passes/Passes.h"
#include "passes/TrainJobs.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::bmb {
#define GEN_PASS_DEF_AUTOCASTPASS
#include "passes/Passes.h.inc"
} // namespace mlir::bmb

using namespace mlir;
using namespace mlir::bmb;

namespace {

bool isForwardGemm(Operation *op) {
  return isa<LinearOp, LMHeadOp, FusedClassifierOp, AttentionOp>(op);
}

struct AutocastPass : mlir::bmb::impl::AutocastPassBase<AutocastPass> {
  using AutocastPassBase::AutocastPassBase;

  void runOnOperation() override {
    if (failed(forEachTrainJob(getOperation(),
                               [&](JobOp job, ModelOp model) { return apply(job, model); })))
      signalPassFailure();
  }

  LogicalResult apply(JobOp job, ModelOp model) {
    auto precision = job.getSettings().getAs<StringAttr>("precision");
    if (!precision || !llvm::is_contained({"bf16", "fp16"}, precision.getValue()))
      return success(); // fp32, fp64: nothing computes in a reduced type
    Type reduced = precision.getValue() == "bf16" ? Type(Builder(&getContext()).getBF16Type())
                                                  : Type(Builder(&getContext()).getF16Type());
    auto loss = dyn_cast_or_null<func::FuncOp>(model.lookupSymbol("loss"));
    if (!loss)
      return emitError(settingLoc(job, "precision"), "bmb-autocast: model @")
             << model.getSymName() << " has no @loss (run bmb-attach-loss first)";
    if (loss.getBody().walk([](Operation *op) {
          return op->hasAttr(kAutocastAttr) ? WalkResult::interrupt() : WalkResult::advance();
        }).wasInterrupted())
      return loss.emitError("bmb-autocast: @loss is already autocast");
    auto mark = TypeAttr::get(reduced);
    loss.getBody().walk([&](Operation *op) {
      // Only f32 GEMMs: a reduced type is a narrowing of fp32.
      if (isForwardGemm(op) && (attention || !isa<AttentionOp>(op)) &&
          cast<ShapedType>(op->getOperand(0).getType()).getElementType().isF32())
        op->setAttr(kAutocastAttr, mark);
    });
    return success();
  }
};

} // namespace
