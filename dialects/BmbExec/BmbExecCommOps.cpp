//===- BmbExecCommOps.cpp - Verifiers of the collectives -------------------===//
//
// Local checks only: a request comes from a collective of this plan and is
// waited on once; the params of a bucket are trainable. Whether buffers are
// left alone between issue and wait is bmb-verify-async's (it needs the
// whole function).
//
//===----------------------------------------------------------------------===//
#include "dialects/BmbExec/BmbExecOps.h"

using namespace mlir;
using namespace mlir::bmb::exec;

/// The param a collective names, which must have a gradient.
static FailureOr<ParamOp> trainableParam(Operation *op, FlatSymbolRefAttr name,
                                         SymbolTableCollection &symbols) {
  auto decl = symbols.lookupNearestSymbolFrom<ParamOp>(op, name);
  if (!decl)
    return op->emitOpError("refers to ") << name << ", which is not a bmb_exec.param";
  if (decl.getFrozen())
    return op->emitOpError("refers to the frozen param ") << name << ", which has no gradient";
  return decl;
}

LogicalResult AllReduceGradsOp::verifySymbolUses(SymbolTableCollection &symbols) {
  if (getParams().empty())
    return emitOpError("needs at least one param");
  for (Attribute a : getParams()) {
    auto name = cast<FlatSymbolRefAttr>(a);
    FailureOr<ParamOp> found = trainableParam(*this, name, symbols);
    if (failed(found))
      return failure();
    ParamOp decl = *found;
    if (auto layers = getLayers()) {
      auto t = cast<MemRefType>(decl.getType());
      if (layers->size() != 2 || (*layers)[0] < 0 || (*layers)[0] >= (*layers)[1])
        return emitOpError("layers must be [first, end) with 0 <= first < end");
      if (!decl.getStacked() || t.getDimSize(0) < (*layers)[1])
        return emitOpError("layers [")
               << (*layers)[0] << ", " << (*layers)[1] << ") of " << name
               << ", which is not stacked over at least " << (*layers)[1] << " layers";
    }
  }
  return success();
}

LogicalResult DeferAllReduceGradsOp::verifySymbolUses(SymbolTableCollection &symbols) {
  if (getParams().empty())
    return emitOpError("needs at least one param");
  for (Attribute a : getParams()) {
    auto name = cast<FlatSymbolRefAttr>(a);
    FailureOr<ParamOp> found = trainableParam(*this, name, symbols);
    if (failed(found))
      return failure();
    ParamOp decl = *found;
    // One layer of stacked params, or whole unstacked ones.
    if (getLayer() && !decl.getStacked())
      return emitOpError("takes a layer index, but ") << name << " is not stacked";
    if (!getLayer() && decl.getStacked())
      return emitOpError("needs a layer index of the stacked ") << name;
  }
  return success();
}

LogicalResult RoundUnitOp::verify() {
  if (!getTo().isBF16() && !getTo().isF16())
    return emitOpError("rounds to bf16 or f16 (the reduced type of the autocast GEMMs), not ")
           << getTo();
  return success();
}

LogicalResult WaitOp::verify() {
  Operation *def = getRequest().getDefiningOp();
  if (!def || !isa<AllReduceGradsOp, ReduceScatterGradsOp, AllGatherParamsOp, ReduceScatterUnitOp,
                   GatherUnitOp, OffloadAdamWUpdateOp>(def))
    return emitOpError("waits on a value that no collective or offloaded update of this "
                       "function issued");
  if (!getRequest().hasOneUse())
    return emitOpError("a request is waited on exactly once, this one has ")
           << std::distance(getRequest().use_begin(), getRequest().use_end()) << " uses";
  return success();
}
