//===- Autocast.h - The mark bmb-autocast leaves on reduced-precision ops -===//
//
// bmb-autocast (passes/Autocast.cpp) marks the GEMM-class ops of a mixed
// precision train job with `bmb.autocast = bf16` (or f16): their inputs are
// rounded to that type, the products are accumulated and stored in fp32
// (an attention op: the inputs of its two matmuls, not its softmax).
// Everything else (norms, softmax, the loss, the optimizer) stays fp32.
// Passes that create ops from marked ops carry the mark on: bmb-autodiff to
// the gradient GEMMs of a marked op (AutocastMarker), the lowering to the
// bmb_exec.gemm / bmb_exec.matmul it builds for one (same attribute name).
//
//===----------------------------------------------------------------------===//
#ifndef BMB_PASSES_AUTOCAST_H
#define BMB_PASSES_AUTOCAST_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

namespace mlir::bmb {

/// The discardable attribute: a TypeAttr holding bf16 or f16.
inline constexpr llvm::StringLiteral kAutocastAttr = "bmb.autocast";

/// The reduced type `op` computes in, or null (fp32).
inline Type autocastType(Operation *op) {
  auto t = op->getAttrOfType<TypeAttr>(kAutocastAttr);
  return t ? t.getValue() : Type();
}

/// While alive, every op that `b` creates and `isGemm` accepts gets the mark
/// of `source` (nothing happens when `source` has none). The builder's
/// previous listener is restored on destruction and still notified.
class AutocastMarker : public OpBuilder::Listener {
public:
  using Filter = bool (*)(Operation *);
  AutocastMarker(OpBuilder &b, Operation *source, Filter isGemm)
      : b(b), mark(source->getAttrOfType<TypeAttr>(kAutocastAttr)), isGemm(isGemm),
        previous(b.getListener()) {
    if (mark)
      b.setListener(this);
  }
  ~AutocastMarker() override {
    if (mark)
      b.setListener(previous);
  }
  AutocastMarker(const AutocastMarker &) = delete;
  AutocastMarker &operator=(const AutocastMarker &) = delete;

  void notifyOperationInserted(Operation *op, OpBuilder::InsertPoint from) override {
    if (isGemm(op))
      op->setAttr(kAutocastAttr, mark);
    if (previous)
      previous->notifyOperationInserted(op, from);
  }

private:
  OpBuilder &b;
  TypeAttr mark;
  Filter isGemm;
  OpBuilder::Listener *previous;
};

} // namespace mlir::bmb

#endif // BMB_PASSES_AUTOCAST_H
