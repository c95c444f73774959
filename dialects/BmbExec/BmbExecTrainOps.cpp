//===- BmbExecTrainOps.cpp - Verifiers of the training ops -----------------===//
//
// The checks that keep a training plan printable: gradient views name
// trainable params, every backward kernel's operands have the sizes its
// runtime call assumes (the call takes element counts and row lengths
// derived from these types, so a mismatch would read out of bounds).
//
//===----------------------------------------------------------------------===//
#include "dialects/BmbExec/BmbExecOps.h"
#include "dialects/BmbExec/BufferShapes.h"

#include "llvm/ADT/StringSwitch.h"

using namespace mlir;
using namespace mlir::bmb::exec;

namespace {

int64_t dimOf(MemRefType t, bool lead) { return lead ? leadRows(t) : lastDim(t); }

/// A param of the program that an optimizer or gradient op names.
template <class OpT>
FailureOr<ParamOp> trainableParam(OpT op, SymbolTableCollection &symbols) {
  auto decl = symbols.lookupNearestSymbolFrom<ParamOp>(op, op.getParamAttr());
  if (!decl)
    return op.emitOpError("refers to '") << op.getParam() << "', which is not a bmb_exec.param";
  if (decl.getFrozen())
    return op.emitOpError("refers to the frozen param '")
           << op.getParam() << "', which has no gradient";
  return decl;
}

} // namespace

LogicalResult GradRefOp::verifySymbolUses(SymbolTableCollection &symbols) {
  FailureOr<ParamOp> decl = trainableParam(*this, symbols);
  if (failed(decl))
    return failure();
  return verifyStackedRef(*this, decl->getType(), decl->getStacked(), getLayer());
}

LogicalResult AdamWUpdateOp::verifySymbolUses(SymbolTableCollection &symbols) {
  return trainableParam(*this, symbols);
}

LogicalResult SGDUpdateOp::verifySymbolUses(SymbolTableCollection &symbols) {
  return trainableParam(*this, symbols);
}

LogicalResult LayerViewOp::verify() {
  auto src = cast<MemRefType>(getSource().getType());
  auto res = cast<MemRefType>(getResult().getType());
  if (src.getRank() == 0 || src.getShape().drop_front() != res.getShape() ||
      src.getElementType() != res.getElementType())
    return emitOpError("result ") << res << " is not one slice of " << src;
  return success();
}

LogicalResult StepArgOp::verify() {
  Type want = llvm::StringSwitch<Type>(getField())
                  .Cases("step", "seed", "micro_step", IntegerType::get(getContext(), 64))
                  .Cases("lr", "dloss_scale", Float64Type::get(getContext()))
                  .Default(Type());
  if (!want)
    return emitOpError("unknown field '")
           << getField() << "' (step, lr, dloss_scale, seed, micro_step)";
  if (getResult().getType() != want)
    return emitOpError("field '") << getField() << "' is " << want;
  return success();
}

LogicalResult SetStepArgOp::verify() {
  if (getField() != "grad_norm")
    return emitOpError("unknown field '") << getField() << "' (grad_norm)";
  return success();
}

int64_t MatmulOp::getM() { return dimOf(cast<MemRefType>(getA().getType()), !getTransA()); }
int64_t MatmulOp::getK() { return dimOf(cast<MemRefType>(getA().getType()), getTransA()); }
int64_t MatmulOp::getN() { return dimOf(cast<MemRefType>(getB().getType()), getTransB()); }

LogicalResult MatmulOp::verify() {
  auto b = cast<MemRefType>(getB().getType());
  int64_t kb = dimOf(b, !getTransB());
  if (kb != getK())
    return emitOpError("op(a) is [") << getM() << ", " << getK() << "] but op(b) is [" << kb
                                     << ", " << getN() << "]";
  if (leadRows(getC().getType()) != getM() || lastDim(getC().getType()) != getN())
    return emitOpError("c must be [") << getM() << ", " << getN() << "], got "
                                      << getC().getType();
  if (getC() == getA() || getC() == getB())
    return emitOpError("c must not alias a or b");
  return success();
}

LogicalResult SumRowsOp::verify() {
  int64_t c = numElements(getOut().getType());
  if (c == 0 || numElements(getX().getType()) % c != 0 || lastDim(getX().getType()) > c ||
      c % lastDim(getX().getType()) != 0)
    return emitOpError("cannot sum ") << getX().getType() << " into " << getOut().getType()
                                      << " (x must be rows of out's elements)";
  return success();
}

LogicalResult NormGradOp::verify() {
  bool ln = getKind() == "layernorm";
  if (!ln && getKind() != "rmsnorm")
    return emitOpError("unknown kind '") << getKind() << "'";
  if (!getDx() && !getDw() && !getDb())
    return emitOpError("computes no gradient");
  if (!ln && getDb())
    return emitOpError("rmsnorm has no bias gradient");
  int64_t c = lastDim(getX().getType());
  if (numElements(getW().getType()) != c)
    return emitOpError("weight must have ") << c << " elements";
  if (getDy().getType() != getX().getType() || (getDx() && getDx().getType() != getX().getType()))
    return emitOpError("dy and dx must have x's type");
  for (Value g : {getDw(), getDb()})
    if (g && numElements(g.getType()) != c)
      return emitOpError("dw and db must have ") << c << " elements";
  return success();
}

LogicalResult AttentionGradOp::verify() {
  int64_t heads = getHeads(), kvHeads = getKvHeads(), headDim = getHeadDim();
  if (heads <= 0 || kvHeads <= 0 || heads % kvHeads != 0)
    return emitOpError("heads must be a positive multiple of kv_heads");
  auto q = cast<MemRefType>(getQ().getType());
  if (q.getRank() != 3)
    return emitOpError("q must be [batch, rows, heads x head_dim], got ") << q;
  if (lastDim(q) != heads * headDim)
    return emitOpError("q rows must be heads x head_dim");
  for (Value kv : {getK(), getV()})
    if (cast<MemRefType>(kv.getType()).getRank() != 3 ||
        cast<MemRefType>(kv.getType()).getDimSize(0) != q.getDimSize(0) ||
        lastDim(kv.getType()) != kvHeads * headDim)
      return emitOpError("k and v must be [batch, rows, kv_heads x head_dim]");
  if (getDy().getType() != q || getDq().getType() != q || getDk().getType() != getK().getType() ||
      getDv().getType() != getV().getType())
    return emitOpError("dy and dq must have q's type, dk k's and dv v's");
  bool anyPrefix = getPrefixK() || getPrefixV() || getDprefixK() || getDprefixV();
  if (anyPrefix && !(getPrefixK() && getPrefixV() && getDprefixK() && getDprefixV()))
    return emitOpError("needs both prefixes and both prefix gradients, or none");
  if (anyPrefix) {
    Type t = getPrefixK().getType();
    if (cast<MemRefType>(t).getRank() != 2 || lastDim(t) != kvHeads * headDim ||
        getPrefixV().getType() != t || getDprefixK().getType() != t ||
        getDprefixV().getType() != t)
      return emitOpError("the prefixes and their gradients must be [P, kv_heads x head_dim] "
                         "of one type");
  }
  return success();
}

LogicalResult RotaryGradOp::verify() {
  if (getDy().getType() != getDx().getType())
    return emitOpError("dx must have dy's type");
  if ((int64_t)(getHeads() * getHeadDim()) > lastDim(getDy().getType()))
    return emitOpError("heads x head_dim exceeds the row");
  return success();
}

LogicalResult SoftmaxGradOp::verify() {
  if (getY().getType() != getDy().getType() || getY().getType() != getDx().getType())
    return emitOpError("y, dy and dx must have one type");
  return success();
}

LogicalResult EmbeddingGradOp::verify() {
  auto table = cast<MemRefType>(getDtable().getType());
  if (table.getRank() != 2 || lastDim(getDy().getType()) != table.getDimSize(1))
    return emitOpError("dtable must be [vocab, ") << lastDim(getDy().getType()) << "]";
  if (numElements(getIds().getType()) != leadRows(getDy().getType()))
    return emitOpError("one id per row of dy");
  return success();
}

LogicalResult TakeGradOp::verify() {
  auto x = cast<MemRefType>(getDx().getType());
  int64_t axis = getAxis(), index = getIndex();
  if (axis < 0 || axis >= x.getRank())
    return emitOpError("axis ") << axis << " out of range for " << x;
  if (index < 0 || index >= x.getDimSize(axis))
    return emitOpError("index ") << index << " out of range";
  if (numElements(getDy().getType()) * x.getDimSize(axis) != x.getNumElements())
    return emitOpError("dy must have dx's elements without the axis");
  return success();
}

LogicalResult ClassifierOp::verify() {
  int64_t rows = leadRows(getLogits().getType());
  if (numElements(getTargets().getType()) != rows || numElements(getLosses().getType()) != rows)
    return emitOpError("one target and one loss per row of the logits (") << rows << ")";
  if (getDlogits() && getDlogits().getType() != getLogits().getType())
    return emitOpError("dlogits must have the logits' type");
  if (static_cast<bool>(getDlogits()) != static_cast<bool>(getScale()))
    return emitOpError("dlogits and scale go together");
  return success();
}

LogicalResult ElemCallOp::verify() {
  if (getCallee() == "dropout") {
    // (x, p, seed, step, micro_step, rng_id, layer, index) -> typeof(x)
    ValueRange a = getArgs();
    if (a.size() != 8 || a[0].getType() != getResult().getType() || !a[1].getType().isF64() ||
        !llvm::all_of(a.drop_front(2), [](Value v) { return v.getType().isInteger(64); }))
      return emitOpError("'dropout' takes (x, p: f64, seed, step, micro_step, rng_id, layer, "
                         "index: i64) and returns x's type");
    return success();
  }
  if (!llvm::is_contained({"gelu_tanh_backward", "gelu_erf_backward", "relu_backward",
                           "silu_backward", "tanh_backward"},
                          getCallee()))
    return emitOpError("unknown runtime function '") << getCallee() << "'";
  if (getArgs().size() != 2)
    return emitOpError("'") << getCallee() << "' takes (x, dy)";
  for (Value a : getArgs())
    if (a.getType() != getResult().getType())
      return emitOpError("arguments and result must have one type");
  return success();
}
