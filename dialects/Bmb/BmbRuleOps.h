//===- BmbRuleOps.h - Shared implementation of rule ops ----------*- C++ -*-===//
//
// Private to dialects/Bmb: what BmbTensorOps.cpp and BmbGradOps.cpp share to
// implement ops whose result types a shape rule gives (Bmb_RuleOp in
// BmbTensorOps.td): reading operand signatures, inferring result types from
// a rule and verifying them against it, and the BMB_RULE_OP macro that
// defines inferReturnTypes, isCompatibleReturnTypes and verify().
//
//===----------------------------------------------------------------------===//
#ifndef BMB_DIALECTS_BMB_BMBRULEOPS_H
#define BMB_DIALECTS_BMB_BMBRULEOPS_H

#include "dialects/Bmb/BmbOps.h"

#include <array>
#include <cmath>
#include <string>

namespace mlir::bmb::rules {

using shapes::Result;

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
  /// The failure of another op's rule (a gradient op applies its forward
  /// op's), reworded as this op's: "<other>: what" becomes "<op>: what".
  Result failFrom(const Result &rule) const {
    return fail(rule.error.substr(rule.error.find(": ") + 2));
  }

private:
  const char *op;
  std::string message;
  std::array<shapes::Sig, 4> optionals;
  unsigned numOptionals = 0;
};

inline bool isPositiveFinite(double v) { return v > 0 && std::isfinite(v); }

//===----------------------------------------------------------------------===//
// Rules of ops that carry a forward op's attributes
//===----------------------------------------------------------------------===//
//
// A forward op (BmbTensorOps.cpp) and its gradient op (BmbGradOps.cpp) carry
// the same attributes, so both check them here, in the same order and with
// the same messages, under the name `s` was made with. Each first reports
// the operands' error, if reading them failed.

inline Result layerNormRule(const Sigs &s, const shapes::Sig &x,
                            const shapes::Sig &w, const shapes::Sig *b,
                            FloatAttr eps) {
  if (!s.ok())
    return s.error();
  if (!eps)
    return s.fail("missing attribute eps");
  return shapes::layerNorm(x, w, b, eps.getValueAsDouble());
}

inline Result rmsNormRule(const Sigs &s, const shapes::Sig &x,
                          const shapes::Sig &w, FloatAttr eps) {
  if (!s.ok())
    return s.error();
  if (!eps)
    return s.fail("missing attribute eps");
  return shapes::rmsNorm(x, w, eps.getValueAsDouble());
}

inline Result attentionRule(const Sigs &s, const shapes::Sig &q,
                            const shapes::Sig &k, const shapes::Sig &v,
                            const shapes::Sig *mask, IntegerAttr heads,
                            IntegerAttr kvHeads, FloatAttr scale) {
  if (!s.ok())
    return s.error();
  if (!heads || !kvHeads || !scale)
    return s.fail("missing attribute heads, kv_heads or scale");
  if (!isPositiveFinite(scale.getValueAsDouble()))
    return s.fail("scale must be positive and finite, got " +
                  formatReal(scale.getValueAsDouble()));
  return shapes::attention(q, k, v, mask, heads.getInt(), kvHeads.getInt());
}

/// Prefix tuning's key/value prefixes of an attention (both or neither):
/// [P, kv width] each, of the key's dtype. An error result, or `forward`.
inline Result attentionPrefixRule(const Sigs &s, const Result &forward,
                                  const shapes::Sig &k, const shapes::Sig *pk,
                                  const shapes::Sig *pv, const shapes::Sig *gate) {
  if (gate && (!pk || gate->shape != shapes::Shape{1}))
    return s.fail("a prefix gate must be one element, of an attention with a prefix");
  if (!forward.ok() || (!pk && !pv))
    return forward;
  if (!pk || !pv)
    return s.fail("prefix needs both a key and a value prefix");
  for (const shapes::Sig *p : {pk, pv})
    if (p->shape.size() != 2 || p->dtype != k.dtype || p->shape[1] != k.shape.back() ||
        !(p->shape == pk->shape))
      return s.fail("the prefixes must be [P, " + std::to_string(k.shape.back()) +
                    "] of the key's dtype, got " + shapes::str(*pk) + " and " +
                    shapes::str(*pv));
  return forward;
}

inline Result rotaryRule(const Sigs &s, const shapes::Sig &x,
                         const shapes::Sig &positions, IntegerAttr heads,
                         FloatAttr base) {
  if (!s.ok())
    return s.error();
  if (!heads || !base)
    return s.fail("missing attribute heads or base");
  if (!isPositiveFinite(base.getValueAsDouble()))
    return s.fail("base must be positive and finite, got " +
                  formatReal(base.getValueAsDouble()));
  return shapes::rotary(x, positions, heads.getInt());
}

/// The rule's result types; if the rule fails, the first operand's type (what
/// every unary op returns) so parsing and building go on and verify() reports
/// the rule's message.
inline LogicalResult inferFromRule(MLIRContext *ctx, const Result &rule,
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
inline LogicalResult verifyResults(Operation *op, const Result &rule) {
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
inline shapes::Sig sigOf(Value v) { return *getSig(v.getType()); }

} // namespace mlir::bmb::rules

/// inferReturnTypes, isCompatibleReturnTypes and verify() of a rule op.
#define BMB_RULE_OP(OP)                                                        \
  LogicalResult OP::inferReturnTypes(MLIRContext *ctx,                         \
                                     std::optional<Location>, Adaptor a,       \
                                     SmallVectorImpl<Type> &types) {           \
    return rules::inferFromRule(ctx, applyShapeRule(a), a.getOperands(),      \
                                types);                                        \
  }                                                                            \
  bool OP::isCompatibleReturnTypes(TypeRange, TypeRange) { return true; }      \
  LogicalResult OP::verify() {                                                 \
    return rules::verifyResults(*this, applyShapeRule(Adaptor(*this)));        \
  }

#endif // BMB_DIALECTS_BMB_BMBRULEOPS_H
