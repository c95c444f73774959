//===- BmbTensorOps.cpp - Shape rules of the primitives -------------------===//
//
// Each primitive's applyShapeRule converts its operand types to ShapeRules
// signatures and applies the one shared rule; inferReturnTypes and verify()
// are generated around it (BMB_RULE_OP below, see BmbTensorOps.td for why
// verify() and not the interface reports). Checks on attributes that the
// rules do not cover (scale, base, rng_id) use the same "<op>: ..." wording.
//
// Attributes are read from the properties and may be null: the parser of an
// op whose format has no result type infers it before the attr-dict entries
// reach the properties. Such ops (scale, softmax, dropout) keep the input's
// type, so their rule then checks only what it can.
//
//===----------------------------------------------------------------------===//

#include "dialects/Bmb/BmbOps.h"
#include "dialects/Bmb/BmbRuleOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"

#include <cmath>

using namespace mlir;
using namespace mlir::bmb;
using namespace mlir::bmb::rules;
using shapes::Result;

BMB_RULE_OP(EmbeddingOp)
Result EmbeddingOp::applyShapeRule(Adaptor a) {
  Sigs s("embedding");
  shapes::Sig ids = s(a.getIds()), w = s(a.getWeight());
  return s.ok() ? shapes::embedding(ids, w) : s.error();
}

BMB_RULE_OP(LinearOp)
Result LinearOp::applyShapeRule(Adaptor a) {
  Sigs s("linear");
  shapes::Sig x = s(a.getInput()), w = s(a.getWeight());
  const shapes::Sig *b = s.optional(a.getBias());
  return s.ok() ? shapes::linear(x, w, b, "linear") : s.error();
}

BMB_RULE_OP(LMHeadOp)
Result LMHeadOp::applyShapeRule(Adaptor a) {
  Sigs s("lm_head");
  shapes::Sig x = s(a.getInput()), w = s(a.getWeight());
  const shapes::Sig *b = s.optional(a.getBias());
  return s.ok() ? shapes::linear(x, w, b, "lm_head") : s.error();
}

BMB_RULE_OP(LayerNormOp)
Result LayerNormOp::applyShapeRule(Adaptor a) {
  Sigs s("layernorm");
  shapes::Sig x = s(a.getInput()), w = s(a.getWeight());
  const shapes::Sig *b = s.optional(a.getBias());
  return layerNormRule(s, x, w, b, a.getProperties().eps);
}

BMB_RULE_OP(RMSNormOp)
Result RMSNormOp::applyShapeRule(Adaptor a) {
  Sigs s("rmsnorm");
  shapes::Sig x = s(a.getInput()), w = s(a.getWeight());
  return rmsNormRule(s, x, w, a.getProperties().eps);
}

BMB_RULE_OP(AttentionOp)
Result AttentionOp::applyShapeRule(Adaptor a) {
  Sigs s("attention");
  shapes::Sig q = s(a.getQuery()), k = s(a.getKey()), v = s(a.getValue());
  const shapes::Sig *mask = s.optional(a.getMask());
  const shapes::Sig *pk = s.optional(a.getPrefixKey()), *pv = s.optional(a.getPrefixValue());
  const shapes::Sig *gate = s.optional(a.getPrefixGate());
  const auto &p = a.getProperties();
  return attentionPrefixRule(s, attentionRule(s, q, k, v, mask, p.heads, p.kv_heads, p.scale),
                             k, pk, pv, gate);
}

BMB_RULE_OP(RotaryOp)
Result RotaryOp::applyShapeRule(Adaptor a) {
  Sigs s("rotary");
  shapes::Sig x = s(a.getInput()), positions = s(a.getPositions());
  const auto &p = a.getProperties();
  return rotaryRule(s, x, positions, p.heads, p.base);
}

/// The element-wise activations: a float tensor in, the same type out.
#define BMB_ACTIVATION(OP, NAME)                                               \
  BMB_RULE_OP(OP)                                                              \
  Result OP::applyShapeRule(Adaptor a) {                                       \
    Sigs s(NAME);                                                              \
    shapes::Sig x = s(a.getInput());                                           \
    return s.ok() ? shapes::unaryFloat(x, NAME) : s.error();                   \
  }
BMB_ACTIVATION(GeluOp, "gelu")
BMB_ACTIVATION(ReluOp, "relu")
BMB_ACTIVATION(SiluOp, "silu")
BMB_ACTIVATION(TanhOp, "tanh")
#undef BMB_ACTIVATION

BMB_RULE_OP(ScaleOp)
Result ScaleOp::applyShapeRule(Adaptor a) {
  Sigs s("scale");
  shapes::Sig x = s(a.getInput());
  if (!s.ok())
    return s.error();
  if (FloatAttr factor = a.getProperties().factor;
      factor && !std::isfinite(factor.getValueAsDouble()))
    return s.fail("factor must be finite, got " +
                  formatReal(factor.getValueAsDouble()));
  return shapes::unaryFloat(x, "scale");
}

BMB_RULE_OP(SoftmaxOp)
Result SoftmaxOp::applyShapeRule(Adaptor a) {
  Sigs s("softmax");
  shapes::Sig x = s(a.getInput());
  if (!s.ok())
    return s.error();
  IntegerAttr axis = a.getProperties().axis;
  return axis ? shapes::softmax(x, axis.getInt())
              : shapes::unaryFloat(x, "softmax");
}

BMB_RULE_OP(DropoutOp)
Result DropoutOp::applyShapeRule(Adaptor a) {
  Sigs s("dropout");
  shapes::Sig x = s(a.getInput());
  const auto &p = a.getProperties();
  if (!s.ok())
    return s.error();
  if (p.rng_id && p.rng_id.getInt() < 0)
    return s.fail("rng_id must be >= 0, got " +
                  std::to_string(p.rng_id.getInt()));
  return p.p ? shapes::dropout(x, p.p.getValueAsDouble())
             : shapes::unaryFloat(x, "dropout");
}

#define BMB_BROADCAST(OP, NAME)                                                \
  BMB_RULE_OP(OP)                                                              \
  Result OP::applyShapeRule(Adaptor a) {                                       \
    Sigs s(NAME);                                                              \
    shapes::Sig lhs = s(a.getLhs()), rhs = s(a.getRhs());                      \
    return s.ok() ? shapes::broadcast(lhs, rhs, NAME) : s.error();             \
  }
BMB_BROADCAST(AddOp, "add")
BMB_BROADCAST(SubOp, "sub")
BMB_BROADCAST(MulOp, "mul")
#undef BMB_BROADCAST

BMB_RULE_OP(CrossEntropyOp)
Result CrossEntropyOp::applyShapeRule(Adaptor a) {
  Sigs s("cross_entropy");
  shapes::Sig logits = s(a.getLogits()), targets = s(a.getTargets());
  return s.ok() ? shapes::crossEntropy(logits, targets) : s.error();
}

BMB_RULE_OP(ArangeOp)
Result ArangeOp::applyShapeRule(Adaptor a) {
  IntegerAttr n = a.getProperties().n;
  return n ? shapes::arange(n.getInt())
           : Sigs("arange").fail("missing attribute n");
}

BMB_RULE_OP(TakeOp)
Result TakeOp::applyShapeRule(Adaptor a) {
  Sigs s("take");
  shapes::Sig x = s(a.getInput());
  const auto &p = a.getProperties();
  if (!s.ok())
    return s.error();
  if (!p.index || !p.axis)
    return s.fail("missing attribute index or axis");
  return shapes::take(x, p.index.getInt(), p.axis.getInt());
}

BMB_RULE_OP(TransposeOp)
Result TransposeOp::applyShapeRule(Adaptor a) {
  Sigs s("transpose");
  shapes::Sig x = s(a.getInput());
  DenseI64ArrayAttr perm = a.getProperties().perm;
  if (!s.ok())
    return s.error();
  if (!perm)
    return s.fail("missing attribute perm");
  ArrayRef<int64_t> p = perm.asArrayRef();
  return shapes::transpose(x, std::vector<int64_t>(p.begin(), p.end()));
}

#undef BMB_RULE_OP

LogicalResult SplitOp::verify() {
  return verifyResults(*this, shapes::split(sigOf(getInput()), getNumResults(),
                                            int64_t(getAxis())));
}

LogicalResult ReshapeOp::verify() {
  ArrayRef<int64_t> shape = getType().getShape();
  return verifyResults(
      *this, shapes::reshape(sigOf(getInput()),
                             shapes::Shape(shape.begin(), shape.end())));
}

LogicalResult RandomOp::verify() {
  if (int64_t(getRngId()) < 0)
    return emitError("random: rng_id must be >= 0, got ")
           << int64_t(getRngId());
  shapes::Sig sig = sigOf(getResult());
  if (!shapes::isFloat(sig.dtype))
    return emitError("random: result must have a float dtype, got ")
           << shapes::spelling(sig.dtype);
  return success();
}
