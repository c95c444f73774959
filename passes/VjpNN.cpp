//===- VjpNN.cpp - VJP rules of the layers' primitives and the losses -----===//
//
// One function per forward op, registered in addNNVjpRules. Each states the
// math of docs/training-ir.md's table: the gradient ops carry the forward's
// numerics (eps, heads, scale, ...) so the backward recomputes statistics
// and probabilities exactly as the forward computed them.
//
//===----------------------------------------------------------------------===//

#include "passes/Vjp.h"

using namespace mlir;
using namespace mlir::bmb;

namespace {

/// y = x W^T (+ b): dx = dy W, dW = dy^T x, db = sum(dy).
LogicalResult linearLike(Operation *op, Value x, Value w, Value bias,
                         VjpContext &ctx) {
  Value dy = ctx.grad(op->getResult(0));
  OpBuilder &b = ctx.builder();
  Location loc = op->getLoc();
  if (ctx.needsGrad(w))
    ctx.addGrad(w, b.create<LinearGradWeightOp>(loc, dy, ctx.primal(x)));
  if (bias && ctx.needsGrad(bias))
    ctx.addGrad(bias, dy); // summed down to [out] by addGrad
  if (ctx.needsGrad(x))
    ctx.addGrad(x, b.create<LinearGradInputOp>(loc, dy, ctx.primal(w)));
  return success();
}

LogicalResult vjpLinear(LinearOp op, VjpContext &ctx) {
  return linearLike(op, op.getInput(), op.getWeight(), op.getBias(), ctx);
}

LogicalResult vjpLMHead(LMHeadOp op, VjpContext &ctx) {
  return linearLike(op, op.getInput(), op.getWeight(), op.getBias(), ctx);
}

/// The loss's dlogits are computed by the forward itself; the backward only
/// carries them through the head's GEMMs.
LogicalResult vjpFusedClassifier(FusedClassifierOp op, VjpContext &ctx) {
  if (!ctx.isLoss(op.getLoss()) || ctx.grad(op.getDlogits()))
    return op.emitError("bmb-autodiff: bmb.fused_classifier is differentiable "
                        "only as the loss itself");
  OpBuilder &b = ctx.builder();
  Value dlogits = ctx.primal(op.getDlogits());
  if (ctx.needsGrad(op.getWeight()))
    ctx.addGrad(op.getWeight(),
                b.create<LinearGradWeightOp>(op.getLoc(), dlogits,
                                             ctx.primal(op.getInput())));
  if (ctx.needsGrad(op.getInput()))
    ctx.addGrad(op.getInput(),
                b.create<LinearGradInputOp>(op.getLoc(), dlogits,
                                            ctx.primal(op.getWeight())));
  return success();
}

LogicalResult vjpCrossEntropy(CrossEntropyOp op, VjpContext &ctx) {
  if (!ctx.isLoss(op.getResult()))
    return op.emitError("bmb-autodiff: bmb.cross_entropy is differentiable "
                        "only as the loss itself (a scaled or combined loss "
                        "is not implemented)");
  if (ctx.needsGrad(op.getLogits()))
    ctx.addGrad(op.getLogits(),
                ctx.builder().create<CrossEntropyGradOp>(
                    op.getLoc(), ctx.primal(op.getLogits()),
                    ctx.primal(op.getTargets()), op.getIgnoreIndex()));
  return success();
}

LogicalResult vjpLayerNorm(LayerNormOp op, VjpContext &ctx) {
  auto g = ctx.builder().create<LayerNormGradOp>(
      op.getLoc(), ctx.grad(op.getResult()), ctx.primal(op.getInput()),
      ctx.primal(op.getWeight()), op.getEpsAttr());
  ctx.addGrads({op.getInput(), op.getWeight(), op.getBias()}, g.getResults());
  return success();
}

LogicalResult vjpRMSNorm(RMSNormOp op, VjpContext &ctx) {
  auto g = ctx.builder().create<RMSNormGradOp>(
      op.getLoc(), ctx.grad(op.getResult()), ctx.primal(op.getInput()),
      ctx.primal(op.getWeight()), op.getEpsAttr());
  ctx.addGrads({op.getInput(), op.getWeight()}, g.getResults());
  return success();
}

LogicalResult vjpAttention(AttentionOp op, VjpContext &ctx) {
  Value mask = op.getMask() ? ctx.primal(op.getMask()) : Value();
  // Prefix tuning's key/value prefixes get gradients too (summed over the
  // batch by the kernel).
  Value pk = op.getPrefixKey() ? ctx.primal(op.getPrefixKey()) : Value();
  Value pv = op.getPrefixValue() ? ctx.primal(op.getPrefixValue()) : Value();
  Value gate = op.getPrefixGate() ? ctx.primal(op.getPrefixGate()) : Value();
  auto g = ctx.builder().create<AttentionGradOp>(
      op.getLoc(), ctx.grad(op.getResult()), ctx.primal(op.getQuery()),
      ctx.primal(op.getKey()), ctx.primal(op.getValue()), mask, pk, pv, gate,
      op.getHeadsAttr(), op.getKvHeadsAttr(), op.getCausalAttr(),
      op.getScaleAttr());
  SmallVector<Value> inputs = {op.getQuery(), op.getKey(), op.getValue()};
  if (pk)
    inputs.append({op.getPrefixKey(), op.getPrefixValue()});
  ctx.addGrads(inputs, g.getResults());
  return success();
}

LogicalResult vjpRotary(RotaryOp op, VjpContext &ctx) {
  if (ctx.needsGrad(op.getInput()))
    ctx.addGrad(op.getInput(),
                ctx.builder().create<RotaryGradOp>(
                    op.getLoc(), ctx.grad(op.getResult()),
                    ctx.primal(op.getPositions()), op.getHeadsAttr(),
                    op.getBaseAttr()));
  return success();
}

LogicalResult vjpEmbedding(EmbeddingOp op, VjpContext &ctx) {
  if (ctx.needsGrad(op.getWeight()))
    ctx.addGrad(op.getWeight(),
                ctx.builder().create<EmbeddingGradOp>(
                    op.getLoc(), op.getWeight().getType(),
                    ctx.grad(op.getResult()), ctx.primal(op.getIds())));
  return success();
}

} // namespace

void mlir::bmb::addNNVjpRules(VjpRuleTable &table) {
  addVjpRule<LinearOp, vjpLinear>(table);
  addVjpRule<LMHeadOp, vjpLMHead>(table);
  addVjpRule<FusedClassifierOp, vjpFusedClassifier>(table);
  addVjpRule<CrossEntropyOp, vjpCrossEntropy>(table);
  addVjpRule<LayerNormOp, vjpLayerNorm>(table);
  addVjpRule<RMSNormOp, vjpRMSNorm>(table);
  addVjpRule<AttentionOp, vjpAttention>(table);
  addVjpRule<RotaryOp, vjpRotary>(table);
  addVjpRule<EmbeddingOp, vjpEmbedding>(table);
}
