//===- Vjp.h - Vector-Jacobian product rules for bmb-autodiff ---*- C++ -*-===//
//
// bmb-autodiff (Autodiff.cpp) walks a forward block in reverse and, for each
// primitive whose results have gradients, calls that op's rule. A rule sees
// the forward op and a VjpContext, which hides where the backward is being
// written: a rule asks for forward values with primal() (the context saves,
// captures or recomputes them) and hands gradients back with addGrad() (the
// context sums several contributions and undoes broadcasting). So each rule
// is a few lines that state the math (docs/training-ir.md's table).
//
// Rules live in VjpNN.cpp (layers' primitives and losses) and VjpTensor.cpp
// (element-wise ops and data movement).
//
//===----------------------------------------------------------------------===//
#ifndef BMB_PASSES_VJP_H
#define BMB_PASSES_VJP_H

#include "dialects/Bmb/BmbOps.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"

namespace mlir::bmb {

/// What a rule may do while the backward of one forward op is written.
class VjpContext {
public:
  virtual ~VjpContext() = default;

  /// Where the rule creates its ops (the backward block being written).
  virtual OpBuilder &builder() = 0;
  /// The gradient of a forward op's result; null when it has none.
  virtual Value grad(Value result) = 0;
  /// Whether the forward value `v` needs a gradient (it depends on a
  /// trainable param). Rules skip the work for operands that do not.
  virtual bool needsGrad(Value v) = 0;
  /// The forward value `v` as seen by the backward block.
  virtual Value primal(Value v) = 0;
  /// Adds `g` to the gradient of the forward value `v`; `g` may have the
  /// broadcast shape of a use of `v` (it is then summed down to v's).
  virtual void addGrad(Value v, Value g) = 0;
  /// Whether `v` is the loss: its incoming gradient is 1, never a value.
  virtual bool isLoss(Value v) = 0;

  /// addGrad(inputs[i], grads[i]) for each input that needs a gradient: the
  /// rules of gradient ops with one result per forward operand. A null
  /// input (an absent optional operand) is skipped.
  void addGrads(ArrayRef<Value> inputs, ValueRange grads) {
    for (auto [in, g] : llvm::zip_equal(inputs, grads))
      if (in && needsGrad(in))
        addGrad(in, g);
  }
};

/// The backward of one forward op. Fails after reporting at the op.
using VjpRule = LogicalResult (*)(Operation *op, VjpContext &ctx);
using VjpRuleTable = llvm::DenseMap<TypeID, VjpRule>;

/// Registers `Fn`, a rule written on the op class, for `OpT`.
template <class OpT, LogicalResult (*Fn)(OpT, VjpContext &)>
void addVjpRule(VjpRuleTable &table) {
  table[TypeID::get<OpT>()] = [](Operation *op, VjpContext &ctx) {
    return Fn(cast<OpT>(op), ctx);
  };
}

void addNNVjpRules(VjpRuleTable &table);     // VjpNN.cpp
void addTensorVjpRules(VjpRuleTable &table); // VjpTensor.cpp
void addPromptVjpRules(VjpRuleTable &table); // VjpPrompt.cpp

} // namespace mlir::bmb

#endif // BMB_PASSES_VJP_H
