//===- BmbExecOffloadOps.cpp - Verifiers of the offloaded optimizer step --===//
//
// Local checks only: the copy of the gradients is consumed by exactly one
// offloaded update, whose params are trainable and have one weight decay
// each. That nothing touches the gradients or params while they are being
// copied is bmb-verify-async's (it needs the whole function).
//
//===----------------------------------------------------------------------===//
#include "dialects/BmbExec/BmbExecOps.h"

using namespace mlir;
using namespace mlir::bmb::exec;

LogicalResult OffloadGradsOutOp::verify() {
  if (getChunk() < 1)
    return emitOpError("chunk must be at least 1 element, got ") << getChunk();
  return success();
}

LogicalResult OffloadAdamWUpdateOp::verify() {
  if (!getOut().getDefiningOp<OffloadGradsOutOp>())
    return emitOpError("updates from the gradients a bmb_exec.offload_grads_out copied out; "
                       "this operand is not one");
  if (!getOut().hasOneUse())
    return emitOpError("the gradients' copy is consumed exactly once, this one has ")
           << std::distance(getOut().use_begin(), getOut().use_end()) << " uses";
  if (getWeightDecays().size() != getParams().size())
    return emitOpError("has ") << getParams().size() << " params but "
                               << getWeightDecays().size() << " weight decays";
  return success();
}

LogicalResult OffloadAdamWUpdateOp::verifySymbolUses(SymbolTableCollection &symbols) {
  if (getParams().empty())
    return emitOpError("needs at least one param");
  for (Attribute a : getParams()) {
    auto name = cast<FlatSymbolRefAttr>(a);
    auto decl = symbols.lookupNearestSymbolFrom<ParamOp>(*this, name);
    if (!decl)
      return emitOpError("refers to ") << name << ", which is not a bmb_exec.param";
    if (decl.getFrozen())
      return emitOpError("refers to the frozen param ") << name << ", which has no gradient";
  }
  return success();
}
