//===- BmbGradOps.cpp - Shapes of the gradient and optimizer ops ----------===//
//
// A gradient has the shape of what it is the gradient of, so most checks
// apply the forward op's ShapeRules rule to the forward's operands and
// compare its result with the incoming gradient `grad`: a layernorm_grad is
// valid when layernorm(x, w) has dy's type. Messages use the op's own name
// and the "<op>: ..." wording of the forward rules.
//
//===----------------------------------------------------------------------===//

#include "dialects/Bmb/BmbOps.h"
#include "dialects/Bmb/BmbRuleOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;
using namespace mlir::bmb;
using namespace mlir::bmb::rules;
using shapes::Result;
using shapes::Sig;

namespace {

/// The forward rule `forward` must give `want` (the incoming gradient's
/// signature); on success, `results`. Messages are reported under `s`'s op.
Result expectGrad(const Sigs &s, const Result &forward, const Sig &want,
                  std::vector<Sig> results) {
  if (!forward.ok())
    return s.failFrom(forward);
  if (!(forward.results.front() == want))
    return s.fail("grad " + shapes::str(want) +
                  " does not match the forward result " +
                  shapes::str(forward.results.front()));
  return Result{std::move(results), {}};
}

} // namespace

//===----------------------------------------------------------------------===//
// Rule ops
//===----------------------------------------------------------------------===//

BMB_RULE_OP(FusedClassifierOp)
Result FusedClassifierOp::applyShapeRule(Adaptor a) {
  Sigs s("fused_classifier");
  Sig x = s(a.getInput()), w = s(a.getWeight()), t = s(a.getTargets());
  if (!s.ok())
    return s.error();
  Result logits = shapes::linear(x, w, nullptr, "fused_classifier");
  if (!logits.ok())
    return logits;
  Result loss = shapes::crossEntropy(logits.results.front(), t);
  if (!loss.ok())
    return s.failFrom(loss);
  return Result{{loss.results.front(), logits.results.front()}, {}};
}

BMB_RULE_OP(CrossEntropyGradOp)
Result CrossEntropyGradOp::applyShapeRule(Adaptor a) {
  Sigs s("cross_entropy_grad");
  Sig logits = s(a.getLogits()), t = s(a.getTargets());
  if (!s.ok())
    return s.error();
  Result loss = shapes::crossEntropy(logits, t);
  return loss.ok() ? Result::of(logits) : s.failFrom(loss);
}

BMB_RULE_OP(LinearGradInputOp)
Result LinearGradInputOp::applyShapeRule(Adaptor a) {
  Sigs s("linear_grad_input");
  Sig dy = s(a.getGrad()), w = s(a.getWeight());
  if (!s.ok())
    return s.error();
  if (w.shape.size() != 2 || dy.shape.empty())
    return s.fail("weight must have rank 2 [out, in] and grad rank >= 1 "
                  "(grad " + shapes::str(dy) + ", weight " + shapes::str(w) +
                  ")");
  Sig dx{dy.dtype, dy.shape};
  dx.shape.back() = w.shape[1];
  return expectGrad(s, shapes::linear(dx, w, nullptr), dy, {dx});
}

BMB_RULE_OP(LinearGradWeightOp)
Result LinearGradWeightOp::applyShapeRule(Adaptor a) {
  Sigs s("linear_grad_weight");
  Sig dy = s(a.getGrad()), x = s(a.getInput());
  if (!s.ok())
    return s.error();
  if (dy.shape.empty() || x.shape.empty())
    return s.fail("grad and input must have rank >= 1 (grad " +
                  shapes::str(dy) + ", input " + shapes::str(x) + ")");
  Sig dw{x.dtype, {dy.shape.back(), x.shape.back()}};
  return expectGrad(s, shapes::linear(x, dw, nullptr), dy, {dw});
}

BMB_RULE_OP(ActGradOp)
Result ActGradOp::applyShapeRule(Adaptor a) {
  Sigs s("act_grad");
  Sig x = s(a.getInput()), dy = s(a.getGrad());
  return expectGrad(s, s.ok() ? shapes::unaryFloat(x, "act_grad") : s.error(),
                    dy, {x});
}

BMB_RULE_OP(LayerNormGradOp)
Result LayerNormGradOp::applyShapeRule(Adaptor a) {
  Sigs s("layernorm_grad");
  Sig dy = s(a.getGrad()), x = s(a.getInput()), w = s(a.getWeight());
  return expectGrad(s, layerNormRule(s, x, w, nullptr, a.getProperties().eps),
                    dy, {x, w, w});
}

BMB_RULE_OP(RMSNormGradOp)
Result RMSNormGradOp::applyShapeRule(Adaptor a) {
  Sigs s("rmsnorm_grad");
  Sig dy = s(a.getGrad()), x = s(a.getInput()), w = s(a.getWeight());
  return expectGrad(s, rmsNormRule(s, x, w, a.getProperties().eps), dy,
                    {x, w});
}

BMB_RULE_OP(AttentionGradOp)
Result AttentionGradOp::applyShapeRule(Adaptor a) {
  Sigs s("attention_grad");
  Sig dy = s(a.getGrad()), q = s(a.getQuery()), k = s(a.getKey()),
      v = s(a.getValue());
  const Sig *mask = s.optional(a.getMask());
  const Sig *pk = s.optional(a.getPrefixKey()), *pv = s.optional(a.getPrefixValue());
  const Sig *gate = s.optional(a.getPrefixGate());
  const auto &p = a.getProperties();
  std::vector<Sig> grads = {q, k, v};
  if (pk && pv)
    grads.insert(grads.end(), {*pk, *pv});
  return expectGrad(
      s,
      attentionPrefixRule(s, attentionRule(s, q, k, v, mask, p.heads, p.kv_heads, p.scale), k,
                          pk, pv, gate),
      dy, grads);
}

BMB_RULE_OP(RotaryGradOp)
Result RotaryGradOp::applyShapeRule(Adaptor a) {
  Sigs s("rotary_grad");
  Sig dy = s(a.getGrad()), positions = s(a.getPositions());
  const auto &p = a.getProperties();
  return expectGrad(s, rotaryRule(s, dy, positions, p.heads, p.base), dy,
                    {dy});
}

BMB_RULE_OP(SoftmaxGradOp)
Result SoftmaxGradOp::applyShapeRule(Adaptor a) {
  Sigs s("softmax_grad");
  Sig y = s(a.getOutput()), dy = s(a.getGrad());
  if (!s.ok())
    return s.error();
  IntegerAttr axis = a.getProperties().axis;
  if (!axis)
    return s.fail("missing attribute axis");
  return expectGrad(s, shapes::softmax(y, axis.getInt()), dy, {y});
}

BMB_RULE_OP(ConcatOp)
Result ConcatOp::applyShapeRule(Adaptor a) {
  Sigs s("concat");
  std::vector<Sig> in;
  for (Value v : a.getInputs())
    in.push_back(s(v));
  if (!s.ok())
    return s.error();
  IntegerAttr axisAttr = a.getProperties().axis;
  if (in.empty())
    return s.fail("needs at least one input");
  if (!axisAttr)
    return s.fail("missing attribute axis");
  std::optional<int64_t> axis =
      shapes::normalizeAxis(axisAttr.getInt(), int64_t(in[0].shape.size()));
  if (!axis)
    return s.fail("axis " + std::to_string(axisAttr.getInt()) +
                  " is out of range for rank " +
                  std::to_string(in[0].shape.size()));
  Sig out = in[0];
  for (size_t i = 1; i < in.size(); ++i) {
    Sig other = in[i];
    bool sameRank = other.shape.size() == out.shape.size();
    if (sameRank)
      other.shape[*axis] = out.shape[*axis];
    if (!sameRank || !(other == Sig{out.dtype, out.shape}))
      return s.fail("input #" + std::to_string(i) + " " + shapes::str(in[i]) +
                    " does not match input #0 " + shapes::str(in[0]) +
                    " outside axis " + std::to_string(*axis));
    out.shape[*axis] += in[i].shape[*axis];
  }
  return Result::of(out);
}

//===----------------------------------------------------------------------===//
// Ops with explicit result types
//===----------------------------------------------------------------------===//

LogicalResult ReduceSumOp::verify() {
  Sig x = sigOf(getInput()), r = sigOf(getResult());
  Result b = shapes::broadcast(x, r, "reduce_sum");
  if (r.shape.size() > x.shape.size() || !b.ok() || !(b.results[0] == x))
    return emitError("reduce_sum: result ")
           << shapes::str(r) << " does not broadcast to the input "
           << shapes::str(x);
  return success();
}

/// verify() of a gradient op whose result type is explicit: `forward`, the
/// forward rule applied to that result, must give the incoming `grad`.
static LogicalResult verifyGrad(Operation *op, const char *name,
                                const Result &forward, const Sig &grad) {
  Result r = expectGrad(Sigs(name), forward, grad, {});
  return r.ok() ? success() : op->emitError(r.error);
}

LogicalResult EmbeddingGradOp::verify() {
  Sig dy = sigOf(getGrad()), ids = sigOf(getIds()), dw = sigOf(getResult());
  return verifyGrad(*this, "embedding_grad", shapes::embedding(ids, dw), dy);
}

LogicalResult TakeGradOp::verify() {
  Sig dy = sigOf(getGrad()), dx = sigOf(getResult());
  return verifyGrad(
      *this, "take_grad",
      shapes::take(dx, int64_t(getIndex()), int64_t(getAxis())), dy);
}

void StackGetOp::build(OpBuilder &builder, OperationState &state, Value stack,
                       Value index) {
  auto type = cast<RankedTensorType>(stack.getType());
  build(builder, state,
        RankedTensorType::get(type.getShape().drop_front(),
                              type.getElementType()),
        stack, index);
}

LogicalResult StackGetOp::verify() {
  auto stack = cast<RankedTensorType>(getStack().getType());
  if (stack.getRank() < 1 ||
      getType() != RankedTensorType::get(stack.getShape().drop_front(),
                                         stack.getElementType()))
    return emitOpError("result type ")
           << getType() << " is not one slice of " << stack;
  return success();
}

//===----------------------------------------------------------------------===//
// Ops on parameters
//===----------------------------------------------------------------------===//

/// The trainable bmb.param that `op` names, or an error.
static FailureOr<ParamOp> lookupTrainable(Operation *op,
                                          FlatSymbolRefAttr name,
                                          SymbolTableCollection &table) {
  auto param = table.lookupNearestSymbolFrom<ParamOp>(op, name);
  if (!param)
    return op->emitOpError()
           << name << " does not name a bmb.param of the enclosing model";
  if (!param.isTrainable())
    return op->emitOpError()
           << name << " is frozen: it has no gradient and no optimizer state";
  return param;
}

LogicalResult GradAccumulateOp::verify() {
  if (!(*this)->getParentOfType<ModelOp>())
    return emitOpError("must be nested in a bmb.model");
  for (auto [j, index] : llvm::enumerate(getIndices())) {
    // A per-iteration delta's param: the slot of an iteration.
    auto slot = index.getDefiningOp<IterationSlotOp>();
    if (!getInductionVarOwner(slot ? slot.getIteration() : index))
      return emitOpError("index #")
             << j
             << " is not the induction variable of an enclosing bmb.repeat "
                "(or its bmb.iteration_slot)";
  }
  return success();
}

LogicalResult
GradAccumulateOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  FailureOr<ParamOp> param =
      lookupTrainable(*this, getParamAttr(), symbolTable);
  if (failed(param))
    return failure();
  int64_t stacked = param->getStacked();
  if (int64_t(getIndices().size()) != stacked)
    return emitOpError() << getParamAttr() << " is stacked " << stacked
                         << " deep, so it takes " << stacked
                         << " index(es), got " << getIndices().size();
  if (getValue().getType() != param->getSliceType())
    return emitOpError("value type ")
           << getValue().getType() << " does not match "
           << param->getSliceType() << ", what bmb.param_get of "
           << getParamAttr() << " reads";
  return success();
}

LogicalResult ClipGradNormOp::verify() {
  double maxNorm = getMaxNorm().convertToDouble();
  if (!isPositiveFinite(maxNorm))
    return emitOpError("max_norm must be positive and finite, got ")
           << formatReal(maxNorm);
  return success();
}

LogicalResult AdamWUpdateOp::verify() {
  for (auto [name, v] : {std::pair{"beta1", getBeta1().convertToDouble()},
                         std::pair{"beta2", getBeta2().convertToDouble()}})
    if (!(v >= 0 && v < 1))
      return emitOpError() << name << " must be in [0, 1), got "
                           << formatReal(v);
  if (!isPositiveFinite(getEps().convertToDouble()))
    return emitOpError("eps must be positive and finite, got ")
           << formatReal(getEps().convertToDouble());
  if (!std::isfinite(getWeightDecay().convertToDouble()))
    return emitOpError("weight_decay must be finite");
  return success();
}

LogicalResult
AdamWUpdateOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return lookupTrainable(*this, getParamAttr(), symbolTable);
}

LogicalResult SGDUpdateOp::verify() {
  double momentum = getMomentum().convertToDouble();
  if (!(momentum >= 0 && momentum <= 1))
    return emitOpError("momentum must be in [0, 1], got ")
           << formatReal(momentum);
  if (!std::isfinite(getWeightDecay().convertToDouble()))
    return emitOpError("weight_decay must be finite");
  return success();
}

LogicalResult SGDUpdateOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return lookupTrainable(*this, getParamAttr(), symbolTable);
}

LogicalResult GradAllReduceOp::verify() {
  if (getParams().empty())
    return emitOpError("needs at least one param");
  if (auto layers = getLayers())
    if (layers->size() != 2 || (*layers)[0] < 0 || (*layers)[0] >= (*layers)[1])
      return emitOpError("layers must be [first, end) with 0 <= first < end");
  if (getLayer() && getLayers())
    return emitOpError("takes a layer range or a layer index, not both");
  if (getLayer() && !getInductionVarOwner(getLayer()))
    return emitOpError("layer is not the induction variable of an enclosing bmb.repeat");
  return success();
}

// One unit of the layer-major group (ZeRO-2's reduce-scatter, ZeRO-3's
// gather): params, and the layer for a repeat's unit.
static LogicalResult verifyUnit(Operation *op, ArrayAttr params, Value layer) {
  if (params.empty())
    return op->emitOpError("needs at least one param");
  if (layer && !getInductionVarOwner(layer))
    return op->emitOpError("layer is not the induction variable of an enclosing bmb.repeat");
  return success();
}

static LogicalResult verifyUnitSymbols(Operation *op, ArrayAttr params, Value layer,
                                       SymbolTableCollection &symbolTable) {
  for (Attribute a : params) {
    FailureOr<ParamOp> p = lookupTrainable(op, cast<FlatSymbolRefAttr>(a), symbolTable);
    if (failed(p))
      return failure();
    if (layer && p->getStacked() != 1)
      return op->emitOpError("layer of ") << a << ", which is not stacked by one repeat";
    if (!layer && p->getStacked())
      return op->emitOpError("the unit outside repeats holds ") << a << ", a stacked param";
  }
  return success();
}

LogicalResult GradReduceScatterUnitOp::verify() {
  return verifyUnit(*this, getParams(), getLayer());
}

LogicalResult GradReduceScatterUnitOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyUnitSymbols(*this, getParams(), getLayer(), symbolTable);
}

LogicalResult ParamGatherUnitOp::verify() {
  if (auto low = getLow(); low && !low->isBF16() && !low->isF16())
    return emitOpError("low must be bf16 or f16 (the reduced type of the autocast GEMMs), got ")
           << *low;
  return verifyUnit(*this, getParams(), getLayer());
}

LogicalResult ParamGatherUnitOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyUnitSymbols(*this, getParams(), getLayer(), symbolTable);
}

LogicalResult GradAllReduceOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  for (Attribute a : getParams()) {
    FailureOr<ParamOp> p = lookupTrainable(*this, cast<FlatSymbolRefAttr>(a), symbolTable);
    if (failed(p))
      return failure();
    // A layer index or range names slices of params stacked by one repeat.
    if (getLayer() && p->getStacked() != 1)
      return emitOpError("layer of ") << a << ", which is not stacked by one repeat";
    if (auto layers = getLayers()) {
      auto t = cast<RankedTensorType>(p->getType());
      if (p->getStacked() != 1 || t.getDimSize(0) < (*layers)[1])
        return emitOpError("layers [")
               << (*layers)[0] << ", " << (*layers)[1] << ") of " << a
               << ", which is not stacked by one repeat of at least " << (*layers)[1]
               << " layers";
    }
  }
  return success();
}
