//===- BmbExecOps.cpp - Verifiers of the execution plan --------------------===//
//
// The checks that keep the plan printable: symbols resolve, element counts
// and row lengths of every kernel's operands agree, generated kernel bodies
// take one scalar per input. Shapes were checked on the `bmb` level; these
// verifiers catch lowering and hand-written-IR mistakes.
//
//===----------------------------------------------------------------------===//
#include "dialects/BmbExec/BmbExecOps.h"
#include "dialects/BmbExec/BufferShapes.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::bmb::exec;

LogicalResult ProgramOp::verifyRegions() {
  for (Operation &op : getBody().front())
    if (!isa<ParamOp, StateOp, NameMapOp, func::FuncOp>(op))
      return op.emitOpError("cannot appear in a bmb_exec.program (params, state, name maps "
                            "and entry functions only)");
  return success();
}

LogicalResult NameMapOp::verify() {
  auto program = (*this)->getParentOfType<ProgramOp>();
  for (auto [i, attr] : llvm::enumerate(getRules())) {
    auto rule = cast<DictionaryAttr>(attr);
    auto ext = rule.getAs<StringAttr>("external");
    auto parts = rule.getAs<ArrayAttr>("parts");
    if (!ext || !parts || parts.empty() || !rule.getAs<IntegerAttr>("axis") ||
        !rule.getAs<BoolAttr>("transpose") || !rule.getAs<BoolAttr>("tied"))
      return emitOpError("rule ") << i << " needs external, parts, axis, transpose and tied";
    for (Attribute p : parts) {
      auto ref = dyn_cast<FlatSymbolRefAttr>(p);
      // A part must be a param, not just any symbol (a state or an entry
      // function passed this check before).
      if (!ref || !isa_and_nonnull<ParamOp>(SymbolTable::lookupSymbolIn(program, ref.getAttr())))
        return emitOpError("rule '") << ext.getValue() << "' names " << p
                                     << ", which is not a param of the program";
    }
  }
  return success();
}

LogicalResult ParamOp::verify() {
  if (getFrozen() && (getGradOffset() || getOptOffset() || getDecay()))
    return emitOpError("is frozen: it has no gradient, optimizer state or weight decay");
  if (getLayerStride() && !getStacked())
    return emitOpError("has a layer_stride but is not stacked");
  if (getLayerStride() && (int64_t)*getLayerStride() < getSliceBytes())
    return emitOpError("layer_stride ") << *getLayerStride() << " is less than one layer's "
                                        << getSliceBytes() << " bytes";
  return success();
}

int64_t ParamOp::getSliceBytes() {
  auto t = cast<MemRefType>(getType());
  int64_t n = t.getNumElements();
  if (getStacked() && t.getRank() > 0)
    n = t.getDimSize(0) ? n / t.getDimSize(0) : 0;
  return n * ((t.getElementTypeBitWidth() + 7) / 8);
}

int64_t ParamOp::getLayerStrideBytes() {
  return getLayerStride() ? *getLayerStride() : getSliceBytes();
}

LogicalResult ParamRefOp::verifySymbolUses(SymbolTableCollection &symbols) {
  auto decl = symbols.lookupNearestSymbolFrom<ParamOp>(*this, getParamAttr());
  if (!decl)
    return emitOpError("refers to '") << getParam() << "', which is not a bmb_exec.param";
  return verifyStackedRef(*this, decl.getType(), decl.getStacked(), getLayer());
}

LogicalResult StateRefOp::verifySymbolUses(SymbolTableCollection &symbols) {
  auto decl = symbols.lookupNearestSymbolFrom<StateOp>(*this, getStateAttr());
  if (!decl)
    return emitOpError("refers to '") << getState() << "', which is not a bmb_exec.state";
  return verifyStackedRef(*this, decl.getType(), decl.getStacked(), getLayer());
}

void AllocOp::getAsmResultNames(function_ref<void(Value, StringRef)> setName) {
  setName(getResult(), "buf");
}

LogicalResult ReshapeOp::verify() {
  if (numElements(getSource().getType()) != numElements(getResult().getType()))
    return emitOpError("changes the element count: ")
           << getSource().getType() << " to " << getResult().getType();
  return success();
}

LogicalResult EwiseOp::verify() {
  StringRef k = getKind();
  size_t want = llvm::StringSwitch<size_t>(k)
                    .Cases("add", "sub", "mul", 2)
                    .Cases("gelu_tanh_grad", "gelu_erf_grad", "relu_grad", "silu_grad",
                           "tanh_grad", 2)
                    .Cases("scale", "gelu_tanh", "gelu_erf", "relu", "silu", "tanh", "copy", 1)
                    .Default(0);
  if (want == 0)
    return emitOpError("unknown element-wise kind '") << k << "'";
  if (getInputs().size() != want)
    return emitOpError("'") << k << "' takes " << want << " input(s), not "
                            << getInputs().size();
  if (k == "scale" && !getFactor())
    return emitOpError("'scale' needs a factor");
  return success();
}

LogicalResult KernelOp::verifyRegions() {
  Block &body = getBody().front();
  size_t numInputs = getInputs().size();
  if (body.getNumArguments() != numInputs + getScalars().size())
    return emitOpError("body takes ") << body.getNumArguments() << " scalars for "
                                      << numInputs << " inputs and " << getScalars().size()
                                      << " scalar operands";
  for (auto [arg, in] : llvm::zip(body.getArguments(), getInputs()))
    if (arg.getType() != cast<MemRefType>(in.getType()).getElementType())
      return emitOpError("body argument type ") << arg.getType()
                                                << " differs from its input's element type";
  for (auto [arg, s] : llvm::zip(body.getArguments().drop_front(numInputs), getScalars()))
    if (arg.getType() != s.getType())
      return emitOpError("body argument type ") << arg.getType()
                                                << " differs from its scalar operand's";
  auto yield = dyn_cast<KernelYieldOp>(body.getTerminator());
  if (!yield)
    return emitOpError("body must end in bmb_exec.kernel_yield");
  if (yield.getValue().getType() != cast<MemRefType>(getOut().getType()).getElementType())
    return emitOpError("yields ") << yield.getValue().getType()
                                  << ", not the output's element type";
  for (Operation &op : body.without_terminator())
    // getDialect() is null for an unregistered op (--allow-unregistered-dialect):
    // isa<> on it crashed.
    if (!isa_and_nonnull<arith::ArithDialect, math::MathDialect>(op.getDialect()) &&
        !isa<ElemCallOp, ElemIndexOp>(op))
      return op.emitOpError("is not scalar arith/math, bmb_exec.elem_call or "
                            "bmb_exec.elem_index: generated kernel bodies are printed as C++ "
                            "expressions");
  return success();
}

LogicalResult GemmOp::verify() {
  auto b = cast<MemRefType>(getB().getType());
  if (b.getRank() != 2)
    return emitOpError("needs a 2-D b, got ") << b;
  int64_t n = getTransB() ? b.getDimSize(0) : b.getDimSize(1);
  int64_t k = getTransB() ? b.getDimSize(1) : b.getDimSize(0);
  if (lastDim(getA().getType()) != k)
    return emitOpError("a's last dim ") << lastDim(getA().getType()) << " is not k = " << k;
  if (lastDim(getOut().getType()) != n)
    return emitOpError("out's last dim ") << lastDim(getOut().getType()) << " is not n = " << n;
  // leadRows, not a division by k or n: either may be 0 in hand-written IR,
  // which crashed the verifier.
  if (leadRows(getA().getType()) != leadRows(getOut().getType()))
    return emitOpError("a and out have different row counts");
  if (getBias() && numElements(getBias().getType()) != n)
    return emitOpError("bias must have n = ") << n << " elements";
  if (getResidual() && getResidual().getType() != getOut().getType())
    return emitOpError("residual must have out's type");
  if (!llvm::is_contained({"none", "gelu_tanh", "gelu_erf", "relu", "silu", "tanh"}, getAct()))
    return emitOpError("unknown epilogue '") << getAct() << "'";
  return success();
}

LogicalResult NormOp::verify() {
  if (getKind() != "layernorm" && getKind() != "rmsnorm")
    return emitOpError("unknown kind '") << getKind() << "'";
  if (static_cast<bool>(getResidual()) != static_cast<bool>(getSum()))
    return emitOpError("takes a residual and a sum buffer together");
  int64_t c = lastDim(getX().getType());
  if (numElements(getW().getType()) != c)
    return emitOpError("weight must have ") << c << " elements";
  if (getKind() == "rmsnorm" && getBias())
    return emitOpError("rmsnorm takes no bias");
  if (getX().getType() != getOut().getType())
    return emitOpError("out must have x's type");
  return success();
}

LogicalResult AttentionOp::verify() {
  // The I64Attr getters return uint64_t: read them signed, or negative
  // heads (and a negative head_dim to match) wrapped around the checks.
  int64_t heads = getHeads(), kvHeads = getKvHeads(), headDim = getHeadDim();
  int64_t capacity = getCapacity();
  if (heads <= 0 || kvHeads <= 0 || heads % kvHeads != 0)
    return emitOpError("heads must be a positive multiple of kv_heads");
  if (lastDim(getQ().getType()) != heads * headDim)
    return emitOpError("q rows must be heads x head_dim");
  if (lastDim(getK().getType()) != kvHeads * headDim ||
      lastDim(getKCache().getType()) != kvHeads * headDim)
    return emitOpError("k and the cache rows must be kv_heads x head_dim");
  if (capacity <= 0)
    return emitOpError("capacity must be positive, got ") << capacity;
  // leadRows: dividing by an empty cache row crashed the verifier.
  if (leadRows(getKCache().getType()) < capacity)
    return emitOpError("the cache holds fewer than capacity = ") << capacity << " rows";
  if (!getPrefixK() != !getPrefixV())
    return emitOpError("needs both prefixes or neither");
  if (getPrefixK() && (getPrefixK().getType() != getPrefixV().getType() ||
                       lastDim(getPrefixK().getType()) != kvHeads * headDim ||
                       cast<MemRefType>(getPrefixK().getType()).getRank() != 2))
    return emitOpError("the prefixes must be [P, kv_heads x head_dim] of one type");
  return success();
}

LogicalResult TakeOp::verify() {
  auto x = cast<MemRefType>(getX().getType());
  // Signed, as in AttentionOp::verify: a negative axis printed as 2^64 - 1.
  int64_t axis = getAxis(), index = getIndex();
  if (axis < 0 || axis >= x.getRank())
    return emitOpError("axis ") << axis << " out of range for " << x;
  if (index < 0 || index >= x.getDimSize(axis))
    return emitOpError("index ") << index << " out of range";
  if (numElements(getOut().getType()) * x.getDimSize(axis) != x.getNumElements())
    return emitOpError("out must have x's elements without the axis");
  return success();
}

#define GET_OP_CLASSES
#include "dialects/BmbExec/BmbExecOps.cpp.inc"
