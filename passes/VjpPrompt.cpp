//===- VjpPrompt.cpp - VJP rules of the prompt-tuning ops -----------------===//
//
// The backward of a tune job's loss (docs/training-ir.md's table):
// bmb.verbalizer_loss computes its dlogits in the forward (as
// bmb.fused_classifier), so its rule only carries them through the head's
// GEMMs; the gather of the mask rows scatters back; the soft embedding
// sends each row's gradient to the table its id reads.
//
//===----------------------------------------------------------------------===//

#include "passes/Vjp.h"

using namespace mlir;
using namespace mlir::bmb;

namespace {

LogicalResult vjpVerbalizerLoss(VerbalizerLossOp op, VjpContext &ctx) {
  if (!ctx.isLoss(op.getLoss()) || ctx.grad(op.getDlogits()) || ctx.grad(op.getScores()) ||
      ctx.grad(op.getWordProbs()))
    return op.emitError("bmb-autodiff: bmb.verbalizer_loss is differentiable only as the loss "
                        "itself");
  OpBuilder &b = ctx.builder();
  Value dlogits = ctx.primal(op.getDlogits());
  if (ctx.needsGrad(op.getWeight()))
    ctx.addGrad(op.getWeight(),
                b.create<LinearGradWeightOp>(op.getLoc(), dlogits, ctx.primal(op.getInput())));
  if (op.getBias() && ctx.needsGrad(op.getBias()))
    ctx.addGrad(op.getBias(), dlogits); // summed down to [V] by addGrad
  if (ctx.needsGrad(op.getInput()))
    ctx.addGrad(op.getInput(),
                b.create<LinearGradInputOp>(op.getLoc(), dlogits, ctx.primal(op.getWeight())));
  return success();
}

LogicalResult vjpGatherRows(GatherRowsOp op, VjpContext &ctx) {
  if (ctx.needsGrad(op.getInput()))
    ctx.addGrad(op.getInput(), ctx.builder().create<GatherRowsGradOp>(
                                   op.getLoc(), op.getInput().getType(),
                                   ctx.grad(op.getResult()), ctx.primal(op.getPositions())));
  return success();
}

LogicalResult vjpSoftEmbedding(SoftEmbeddingOp op, VjpContext &ctx) {
  if (!ctx.needsGrad(op.getWeight()) && !ctx.needsGrad(op.getSoft()))
    return success();
  auto g = ctx.builder().create<SoftEmbeddingGradOp>(
      op.getLoc(), op.getWeight().getType(), op.getSoft().getType(), ctx.grad(op.getResult()),
      ctx.primal(op.getIds()));
  ctx.addGrads({op.getWeight(), op.getSoft()}, g.getResults());
  return success();
}

} // namespace

void mlir::bmb::addPromptVjpRules(VjpRuleTable &table) {
  addVjpRule<VerbalizerLossOp, vjpVerbalizerLoss>(table);
  addVjpRule<GatherRowsOp, vjpGatherRows>(table);
  addVjpRule<SoftEmbeddingOp, vjpSoftEmbedding>(table);
}
