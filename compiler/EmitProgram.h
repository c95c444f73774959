//===- EmitProgram.h - A bmb_exec program as one CUDA C++ source -*- C++ -*-===//
#ifndef BMB_COMPILER_EMITPROGRAM_H
#define BMB_COMPILER_EMITPROGRAM_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::bmb {

/// Prints the module's prepared bmb_exec.program (after the infer pipeline)
/// as one source that builds with nvcc or a C++ compiler against libbmrt.
/// The program's `source` attribute names the .bmb file in the header
/// comment and the program table.
LogicalResult emitProgram(ModuleOp module, llvm::raw_ostream &os);

} // namespace mlir::bmb

#endif // BMB_COMPILER_EMITPROGRAM_H
