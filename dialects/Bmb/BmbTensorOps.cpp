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

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"

#include <array>
#include <cmath>

using namespace mlir;
using namespace mlir::bmb;
using shapes::Result;

namespace {

/// Reads operand signatures for one rule application. During parsing and
/// building, operands may break the ODS constraints (those are checked
/// later), so a non-tensor operand becomes an error result, not a crash.
class Sigs {
public:
  explicit Sigs(const char *op) : op(op) {}

  shapes::Sig operator()(Value v) {
    std::optional<shapes::Sig> sig = v ? getSig(v.getType()) : std::nullopt;
    if (sig)
      return *sig;
    if (message.empty())
      message = std::string(op) +
                ": operands must be statically shaped "
                "tensors of f32, f64, f16, bf16, i8, i32 or i64";
    return {};
  }

  /// An optional operand: nullptr when absent.
  const shapes::Sig *optional(Value v) {
    if (!v)
      return nullptr;
    optionals[numOptionals] = (*this)(v);
    return &optionals[numOptionals++];
  }

  bool ok() const { return message.empty(); }
  Result error() const { return Result::fail(message); }
  Result fail(const std::string &what) const {
    return Result::fail(std::string(op) + ": " + what);
  }

private:
  const char *op;
  std::string message;
  std::array<shapes::Sig, 2> optionals;
  unsigned numOptionals = 0;
};

bool isPositiveFinite(double v) { return v > 0 && std::isfinite(v); }

/// The rule's result types; if the rule fails, the first operand's type (what
/// every unary op returns) so parsing and building go on and verify() reports
/// the rule's message.
LogicalResult inferFromRule(MLIRContext *ctx, const Result &rule,
                            ValueRange operands, SmallVectorImpl<Type> &types) {
  if (rule.ok()) {
    for (const shapes::Sig &sig : rule.results)
      types.push_back(getTensorType(ctx, sig));
    return success();
  }
  types.push_back(operands.empty() ? Type(RankedTensorType::get(
                                         {0}, IntegerType::get(ctx, 32)))
                                   : operands.front().getType());
  return success();
}

/// The rule's message, or the result types compared with the rule's.
LogicalResult verifyResults(Operation *op, const Result &rule) {
  if (!rule.ok())
    return op->emitError(rule.error);
  if (rule.results.size() != op->getNumResults())
    return op->emitOpError("has ")
           << op->getNumResults() << " results, expected "
           << rule.results.size();
  for (auto [i, sig] : llvm::enumerate(rule.results)) {
    Type want = getTensorType(op->getContext(), sig);
    if (op->getResult(i).getType() != want)
      return op->emitOpError("result #")
             << i << " has type " << op->getResult(i).getType() << ", expected "
             << want;
  }
  return success();
}

/// The signature of a value whose ODS constraint has been checked (verify()
/// runs after the constraints).
shapes::Sig sigOf(Value v) { return *getSig(v.getType()); }

} // namespace

/// inferReturnTypes, isCompatibleReturnTypes and verify() of a rule op.
#define BMB_RULE_OP(OP)                                                        \
  LogicalResult OP::inferReturnTypes(MLIRContext *ctx,                         \
                                     std::optional<Location>, Adaptor a,       \
                                     SmallVectorImpl<Type> &types) {           \
    return inferFromRule(ctx, applyShapeRule(a), a.getOperands(), types);      \
  }                                                                            \
  bool OP::isCompatibleReturnTypes(TypeRange, TypeRange) { return true; }      \
  LogicalResult OP::verify() {                                                 \
    return verifyResults(*this, applyShapeRule(Adaptor(*this)));               \
  }

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
  FloatAttr eps = a.getProperties().eps;
  if (!s.ok())
    return s.error();
  if (!eps)
    return s.fail("missing attribute eps");
  return shapes::layerNorm(x, w, b, eps.getValueAsDouble());
}

BMB_RULE_OP(RMSNormOp)
Result RMSNormOp::applyShapeRule(Adaptor a) {
  Sigs s("rmsnorm");
  shapes::Sig x = s(a.getInput()), w = s(a.getWeight());
  FloatAttr eps = a.getProperties().eps;
  if (!s.ok())
    return s.error();
  if (!eps)
    return s.fail("missing attribute eps");
  return shapes::rmsNorm(x, w, eps.getValueAsDouble());
}

BMB_RULE_OP(AttentionOp)
Result AttentionOp::applyShapeRule(Adaptor a) {
  Sigs s("attention");
  shapes::Sig q = s(a.getQuery()), k = s(a.getKey()), v = s(a.getValue());
  const shapes::Sig *mask = s.optional(a.getMask());
  const auto &p = a.getProperties();
  if (!s.ok())
    return s.error();
  if (!p.heads || !p.kv_heads || !p.scale)
    return s.fail("missing attribute heads, kv_heads or scale");
  double scale = p.scale.getValueAsDouble();
  if (!isPositiveFinite(scale))
    return s.fail("scale must be positive and finite, got " +
                  formatReal(scale));
  return shapes::attention(q, k, v, mask, p.heads.getInt(),
                           p.kv_heads.getInt());
}

BMB_RULE_OP(RotaryOp)
Result RotaryOp::applyShapeRule(Adaptor a) {
  Sigs s("rotary");
  shapes::Sig x = s(a.getInput()), positions = s(a.getPositions());
  const auto &p = a.getProperties();
  if (!s.ok())
    return s.error();
  if (!p.heads || !p.base)
    return s.fail("missing attribute heads or base");
  double base = p.base.getValueAsDouble();
  if (!isPositiveFinite(base))
    return s.fail("base must be positive and finite, got " + formatReal(base));
  return shapes::rotary(x, positions, p.heads.getInt());
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
