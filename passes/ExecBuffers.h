//===- ExecBuffers.h - Who reads and writes which bmb_exec buffer -*- C++ -*-===//
//
// bmb_exec ops work in destination-passing style on memrefs; fusion, memory
// planning and emission all need to know which operands an op writes. This
// is the one place that knows it.
//
//===----------------------------------------------------------------------===//
#ifndef BMB_PASSES_EXECBUFFERS_H
#define BMB_PASSES_EXECBUFFERS_H

#include "dialects/BmbExec/BmbExecOps.h"

namespace mlir::bmb::exec {

/// The memref operands `op` writes (its destinations).
SmallVector<Value, 2> writtenBuffers(Operation *op);

/// Whether `op` adds into its destinations (the backward kernels, an
/// accumulating matmul) instead of overwriting them.
bool accumulates(Operation *op);

/// Whether `op` reads `buf` (uses it as a non-destination operand).
bool readsBuffer(Operation *op, Value buf);

/// The one op that writes `buf` directly, or null if none or several.
Operation *soleWriter(Value buf);

/// The buffer a view (reshape, row_view, layer_view) looks into, through any chain of
/// views: an alloc, input, param_ref or state_ref result.
Value rootBuffer(Value v);

} // namespace mlir::bmb::exec

#endif // BMB_PASSES_EXECBUFFERS_H
