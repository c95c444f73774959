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

LogicalResult AllReduceGradsOp::verifySymbolUses(SymbolTableCollection &symbols) {
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

LogicalResult WaitOp::verify() {
  Operation *def = getRequest().getDefiningOp();
  if (!def || !isa<AllReduceGradsOp, ReduceScatterGradsOp, AllGatherParamsOp>(def))
    return emitOpError("waits on a value that no collective of this function issued");
  if (!getRequest().hasOneUse())
    return emitOpError("a request is waited on exactly once, this one has ")
           << std::distance(getRequest().use_begin(), getRequest().use_end()) << " uses";
  return success();
}
