//===- ZeroAuto.h - zero = auto: the cheapest plan that fits ----*- C++ -*-===//
//
// `zero = auto` with `memory = <bytes per rank>` and `ranks = N` in a train
// job: bmbc compiles the candidate plans (zero = 0, 1; then with the model's
// repeats checkpointed), takes the first whose per-rank params + grads +
// optimizer state + activations fit, writes it into the job's settings and
// says what it chose and why (docs/distributed.md). None fitting is an error
// at `memory` with the smallest plan's figures.
//
//===----------------------------------------------------------------------===//
#ifndef BMB_COMPILER_ZEROAUTO_H
#define BMB_COMPILER_ZEROAUTO_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::bmb {

/// Resolves `zero = auto` of the module's train job in place; notes go to
/// `notes`. `memory`/`ranks` without zero = auto are errors. `cudaTarget`:
/// the plans with `offload = optimizer` are candidates too (on the host
/// target the optimizer state would stay in the same RAM: never chosen).
LogicalResult resolveZeroAuto(ModuleOp module, bool cudaTarget, llvm::raw_ostream &notes);

} // namespace mlir::bmb

#endif // BMB_COMPILER_ZEROAUTO_H
