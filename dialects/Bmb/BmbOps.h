//===- BmbOps.h - bmb operations --------------------------------*- C++ -*-===//
//
// The ops of the `bmb` dialect (BmbModelOps.td, BmbTensorOps.td) and the
// conversions between MLIR tensor types and ShapeRules signatures that
// MLIRGen, the verifiers and the passes share.
//
//===----------------------------------------------------------------------===//
#ifndef BMB_DIALECTS_BMB_BMBOPS_H
#define BMB_DIALECTS_BMB_BMBOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dialects/Bmb/BmbAttrs.h"
#include "dialects/Bmb/BmbDialect.h"
#include "dialects/Bmb/ShapeRules.h"

#include <optional>

#define GET_OP_CLASSES
#include "dialects/Bmb/BmbOps.h.inc"

namespace mlir::bmb {

/// The shape rules (plain C++, outside the mlir namespace) under a short name.
namespace shapes = ::bmb::shapes;

/// f32 -> F32, ..., i8/i32/i64 (signless) -> I8/I32/I64; nullopt otherwise.
std::optional<shapes::DType> getDType(Type elementType);
/// The element type of a dtype.
Type getElementType(MLIRContext *ctx, shapes::DType dtype);
/// The signature of a statically shaped tensor type with a supported dtype.
std::optional<shapes::Sig> getSig(Type type);
/// The tensor type of a signature (rank 0 gives tensor<f32>).
RankedTensorType getTensorType(MLIRContext *ctx, const shapes::Sig &sig);

/// The bmb.repeat whose induction variable `v` is, following it out of the
/// bmb.layer and bmb.repeat bodies it was passed into as an operand; null if
/// it is anything else.
RepeatOp getInductionVarOwner(Value v);

} // namespace mlir::bmb

#endif // BMB_DIALECTS_BMB_BMBOPS_H
