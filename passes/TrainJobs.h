//===- TrainJobs.h - The train jobs a bmb-level pass rewrites ---*- C++ -*-===//
//
// The passes between bmb-attach-loss and the lowering (autocast, insert-
// optimizer, data-parallel, zero, ...) each rewrite the model of every train
// job in the module; this is their shared loop.
//
//===----------------------------------------------------------------------===//
#ifndef BMB_PASSES_TRAINJOBS_H
#define BMB_PASSES_TRAINJOBS_H

#include "dialects/Bmb/BmbOps.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace mlir::bmb {

/// Calls `fn(job, model)` for every train or tune job (a tune job trains
/// its deltas and prompt params) of `module` whose model
/// exists (the job's verifier reports a missing one); stops at and returns
/// the first failure.
inline LogicalResult forEachTrainJob(ModuleOp module,
                                     llvm::function_ref<LogicalResult(JobOp, ModelOp)> fn) {
  for (JobOp job : module.getOps<JobOp>()) {
    if (job.getKind() != JobKind::Train && job.getKind() != JobKind::Tune)
      continue;
    auto model = SymbolTable::lookupNearestSymbolFrom<ModelOp>(job, job.getModelAttr());
    if (model && failed(fn(job, model)))
      return failure();
  }
  return success();
}

} // namespace mlir::bmb

#endif // BMB_PASSES_TRAINJOBS_H
