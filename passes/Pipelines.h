//===- Pipelines.h - Named bmb pass pipelines -------------------*- C++ -*-===//
//
// Each pipeline is built by a populate* function, so bmbc (which runs it for
// a job) and lit (which runs it by name through bmb-opt) run the same passes.
//
//===----------------------------------------------------------------------===//
#ifndef BMB_PASSES_PIPELINES_H
#define BMB_PASSES_PIPELINES_H

#include "mlir/Pass/PassManager.h"

namespace mlir::bmb {

/// What runs right after MLIRGen, for every job: canonicalize (folds
/// identity dropouts, scales, reshapes and transposes) and symbol-dce
/// (drops private symbols nothing references).
void populateFrontendPipeline(OpPassManager &pm);

/// An infer job: the frontend pipeline, then lowering to the execution
/// plan, fusion, memory planning and preparation for emission.
void populateInferPipeline(OpPassManager &pm);

/// What a train or tune pipeline leaves to its caller (bmbc: the target).
struct TrainingPipelineOptions {
  /// bmb-autocast's `attention` option: autocast attention's two matmuls
  /// under precision = bf16 / fp16 (the host kernels can; the cuda target's
  /// cannot yet).
  bool autocastAttention = true;
};

/// The training passes on `bmb` (docs/training-ir.md): bmb-attach-loss,
/// bmb-autodiff, bmb-checkpoint-activations, bmb-insert-optimizer. The train
/// pipeline runs them after the frontend pipeline and before the lowering.
void populateAutodiffPipeline(OpPassManager &pm, const TrainingPipelineOptions &o = {});

/// A train job: the frontend pipeline, the autodiff pipeline (loss,
/// reverse pass, optimizer), then lowering to the execution plan (entries
/// forward_backward, optimizer_step, evaluate), fusion, memory planning
/// (with the grads and optimizer-state roles) and preparation for emission.
void populateTrainPipeline(OpPassManager &pm, const TrainingPipelineOptions &o = {});

/// A tune job: frontend, bmb-lower-prompts, then the train pipeline's passes
/// (bmb-attach-loss builds the verbalizer loss).
void populateTunePipeline(OpPassManager &pm, const TrainingPipelineOptions &o = {});

/// Registers the pipelines by name: `bmb-frontend-pipeline`,
/// `bmb-infer-pipeline`, `bmb-train-pipeline`.
void registerBmbPipelines();

} // namespace mlir::bmb

#endif // BMB_PASSES_PIPELINES_H
