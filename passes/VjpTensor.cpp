//===- VjpTensor.cpp - VJP rules of element-wise ops and data movement ----===//
//
// One function per forward op, registered in addTensorVjpRules. Broadcast
// operands need nothing here: VjpContext::addGrad sums a gradient down to
// the operand's shape.
//
//===----------------------------------------------------------------------===//

#include "passes/Vjp.h"

using namespace mlir;
using namespace mlir::bmb;

namespace {

/// dx = act'(x) * dy, from the activation's input.
LogicalResult activation(Operation *op, Activation act, VjpContext &ctx) {
  Value x = op->getOperand(0);
  if (ctx.needsGrad(x))
    ctx.addGrad(x, ctx.builder().create<ActGradOp>(
                       op->getLoc(), act, ctx.primal(x),
                       ctx.grad(op->getResult(0))));
  return success();
}

LogicalResult vjpGelu(GeluOp op, VjpContext &ctx) {
  return activation(op,
                    op.getApproximate() == GeluApproximation::Tanh
                        ? Activation::GeluTanh
                        : Activation::GeluErf,
                    ctx);
}
LogicalResult vjpRelu(ReluOp op, VjpContext &ctx) {
  return activation(op, Activation::Relu, ctx);
}
LogicalResult vjpSilu(SiluOp op, VjpContext &ctx) {
  return activation(op, Activation::Silu, ctx);
}
LogicalResult vjpTanh(TanhOp op, VjpContext &ctx) {
  return activation(op, Activation::Tanh, ctx);
}

LogicalResult vjpAdd(AddOp op, VjpContext &ctx) {
  Value dy = ctx.grad(op.getResult());
  for (Value in : {op.getLhs(), op.getRhs()})
    if (ctx.needsGrad(in))
      ctx.addGrad(in, dy);
  return success();
}

LogicalResult vjpSub(SubOp op, VjpContext &ctx) {
  Value dy = ctx.grad(op.getResult());
  if (ctx.needsGrad(op.getLhs()))
    ctx.addGrad(op.getLhs(), dy);
  if (ctx.needsGrad(op.getRhs()))
    ctx.addGrad(op.getRhs(), ctx.builder().create<ScaleOp>(
                                 op.getLoc(), dy,
                                 ctx.builder().getF64FloatAttr(-1.0)));
  return success();
}

/// d(a * b) = dy * b da + dy * a db, each summed down if it was broadcast.
LogicalResult vjpMul(MulOp op, VjpContext &ctx) {
  Value dy = ctx.grad(op.getResult());
  OpBuilder &b = ctx.builder();
  if (ctx.needsGrad(op.getLhs()))
    ctx.addGrad(op.getLhs(),
                b.create<MulOp>(op.getLoc(), dy, ctx.primal(op.getRhs())));
  if (ctx.needsGrad(op.getRhs()))
    ctx.addGrad(op.getRhs(),
                b.create<MulOp>(op.getLoc(), dy, ctx.primal(op.getLhs())));
  return success();
}

LogicalResult vjpScale(ScaleOp op, VjpContext &ctx) {
  if (ctx.needsGrad(op.getInput()))
    ctx.addGrad(op.getInput(),
                ctx.builder().create<ScaleOp>(op.getLoc(),
                                              ctx.grad(op.getResult()),
                                              op.getFactorAttr()));
  return success();
}

LogicalResult vjpSoftmax(SoftmaxOp op, VjpContext &ctx) {
  if (ctx.needsGrad(op.getInput()))
    ctx.addGrad(op.getInput(), ctx.builder().create<SoftmaxGradOp>(
                                   op.getLoc(), ctx.primal(op.getResult()),
                                   ctx.grad(op.getResult()), op.getAxisAttr()));
  return success();
}

/// The same rng_id draws the same mask (DESIGN decision 6), so the backward
/// is the same dropout applied to the gradient.
LogicalResult vjpDropout(DropoutOp op, VjpContext &ctx) {
  if (ctx.needsGrad(op.getInput()))
    ctx.addGrad(op.getInput(), ctx.builder().create<DropoutOp>(
                                   op.getLoc(), ctx.grad(op.getResult()),
                                   op.getPAttr(), op.getRngIdAttr()));
  return success();
}

LogicalResult vjpReshape(ReshapeOp op, VjpContext &ctx) {
  if (ctx.needsGrad(op.getInput()))
    ctx.addGrad(op.getInput(), ctx.builder().create<ReshapeOp>(
                                   op.getLoc(), op.getInput().getType(),
                                   ctx.grad(op.getResult())));
  return success();
}

LogicalResult vjpTranspose(TransposeOp op, VjpContext &ctx) {
  if (!ctx.needsGrad(op.getInput()))
    return success();
  ArrayRef<int64_t> perm = op.getPerm();
  SmallVector<int64_t> inverse(perm.size());
  for (auto [i, p] : llvm::enumerate(perm))
    inverse[p] = int64_t(i);
  ctx.addGrad(op.getInput(),
              ctx.builder().create<TransposeOp>(op.getLoc(),
                                                ctx.grad(op.getResult()),
                                                inverse));
  return success();
}

LogicalResult vjpTake(TakeOp op, VjpContext &ctx) {
  if (ctx.needsGrad(op.getInput()))
    ctx.addGrad(op.getInput(), ctx.builder().create<TakeGradOp>(
                                   op.getLoc(), op.getInput().getType(),
                                   ctx.grad(op.getResult()), op.getIndexAttr(),
                                   op.getAxisAttr()));
  return success();
}

LogicalResult vjpSplit(SplitOp op, VjpContext &ctx) {
  if (!ctx.needsGrad(op.getInput()))
    return success();
  SmallVector<Value> parts;
  for (Value r : op.getResults()) {
    Value g = ctx.grad(r);
    // A part without a gradient would need zeros; no op makes them yet.
    if (!g)
      return op.emitError("bmb-autodiff: bmb.split result #")
             << cast<OpResult>(r).getResultNumber()
             << " has no gradient while the others have; zero gradients are "
                "not implemented";
    parts.push_back(g);
  }
  ctx.addGrad(op.getInput(), ctx.builder().create<ConcatOp>(
                                 op.getLoc(), parts, op.getAxisAttr()));
  return success();
}

} // namespace

void mlir::bmb::addTensorVjpRules(VjpRuleTable &table) {
  addVjpRule<GeluOp, vjpGelu>(table);
  addVjpRule<ReluOp, vjpRelu>(table);
  addVjpRule<SiluOp, vjpSilu>(table);
  addVjpRule<TanhOp, vjpTanh>(table);
  addVjpRule<AddOp, vjpAdd>(table);
  addVjpRule<SubOp, vjpSub>(table);
  addVjpRule<MulOp, vjpMul>(table);
  addVjpRule<ScaleOp, vjpScale>(table);
  addVjpRule<SoftmaxOp, vjpSoftmax>(table);
  addVjpRule<DropoutOp, vjpDropout>(table);
  addVjpRule<ReshapeOp, vjpReshape>(table);
  addVjpRule<TransposeOp, vjpTranspose>(table);
  addVjpRule<TakeOp, vjpTake>(table);
  addVjpRule<SplitOp, vjpSplit>(table);
}
