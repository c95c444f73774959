//===- MLIRGen.h - The elaborated program as `bmb` IR -----------*- C++ -*-===//
//
// Maps a checked program::Program onto the `bmb` dialect 1:1: one bmb.model
// with its parameters (stacked [n, ...] under each repeat: DESIGN decision
// 2), a func.func @forward whose layer calls are bmb.layer / bmb.repeat
// regions, and one op per job, template, verbalizer and recipe. Every op
// carries the location of the user's source that produced it, so errors
// raised by later passes point at the user's line.
//
//===----------------------------------------------------------------------===//
#ifndef BMB_LANG_MLIRGEN_H
#define BMB_LANG_MLIRGEN_H

#include "lang/Diagnostics.h"
#include "lang/Program.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace bmb {

/// Returns null only if the generated module fails to verify, which is a bug
/// in Sema or here (the verifier's diagnostics have been emitted).
mlir::OwningOpRef<mlir::ModuleOp> mlirGen(mlir::MLIRContext &context,
                                          const program::Program &program,
                                          const SourceManager &sources,
                                          llvm::StringRef entryName = "forward");

/// Adds the root's forward of `program` as one more entry function named
/// `entryName` to the `bmb.model` of `module` (made by mlirGen from the same
/// job elaborated with another T: an infer job's decode entry). Returns
/// failure if the result does not verify.
mlir::LogicalResult addEntry(mlir::ModuleOp module, const program::Program &program,
                             const SourceManager &sources, llvm::StringRef entryName);

} // namespace bmb

#endif // BMB_LANG_MLIRGEN_H
