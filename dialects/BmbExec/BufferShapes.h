//===- BufferShapes.h - Shape helpers of the bmb_exec verifiers -*- C++ -*-===//
//
// How the runtime sees a buffer: [rows, last dim], rows the product of the
// leading dims. Shared by the verifiers of the inference and training ops.
//
//===----------------------------------------------------------------------===//
#ifndef BMB_DIALECTS_BMBEXEC_BUFFERSHAPES_H
#define BMB_DIALECTS_BMBEXEC_BUFFERSHAPES_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Value.h"
#include "mlir/Support/LogicalResult.h"

namespace mlir::bmb::exec {

inline int64_t numElements(Type t) { return cast<MemRefType>(t).getNumElements(); }

inline int64_t lastDim(Type t) {
  auto m = cast<MemRefType>(t);
  return m.getRank() == 0 ? 1 : m.getShape().back();
}

/// The rows of `t` seen as [rows, lastDim]: the product of the leading dims.
/// Not numElements / lastDim, which divides by zero on an empty last dim.
inline int64_t leadRows(Type t) {
  int64_t rows = 1;
  for (int64_t d : cast<MemRefType>(t).getShape().drop_back())
    rows *= d;
  return rows;
}

/// A view of one declared symbol (param_ref, state_ref, grad_ref): one
/// layer's slice when the symbol is stacked, else the whole of it.
template <class RefOp>
LogicalResult verifyStackedRef(RefOp op, Type declType, bool stacked,
                               Value layer) {
  auto full = cast<MemRefType>(declType);
  auto view = cast<MemRefType>(op.getResult().getType());
  if (stacked != static_cast<bool>(layer))
    return op.emitOpError(stacked ? "of a stacked symbol needs a layer index"
                                  : "of an unstacked symbol takes no layer index");
  ArrayRef<int64_t> want = stacked ? full.getShape().drop_front() : full.getShape();
  if (view.getShape() != want || view.getElementType() != full.getElementType())
    return op.emitOpError("type ") << view << " does not match the declaration " << full
                                   << (stacked ? " (one layer's slice)" : "");
  return success();
}

} // namespace mlir::bmb::exec

#endif // BMB_DIALECTS_BMBEXEC_BUFFERSHAPES_H
