//===- Pipelines.cpp - Named bmb pass pipelines ---------------------------===//

#include "passes/Pipelines.h"
#include "passes/Passes.h"

#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void mlir::bmb::populateFrontendPipeline(OpPassManager &pm) {
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createSymbolDCEPass());
}

void mlir::bmb::populateInferPipeline(OpPassManager &pm) {
  populateFrontendPipeline(pm);
  pm.addPass(createInsertDeltasPass());
  pm.addPass(createLowerBmbToExecPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createFuseKernelsPass());
  pm.addPass(createPlanMemoryPass());
  pm.addPass(createPrepareForEmissionPass());
}

void mlir::bmb::populateAutodiffPipeline(OpPassManager &pm, const TrainingPipelineOptions &o) {
  pm.addPass(createInsertDeltasPass());
  pm.addPass(createAttachLossPass());
  AutocastPassOptions autocast;
  autocast.attention = o.autocastAttention;
  pm.addPass(createAutocastPass(autocast));
  pm.addPass(createAutodiffPass());
  pm.addPass(createCheckpointActivationsPass());
  pm.addPass(createInsertOptimizerPass());
  pm.addPass(createDataParallelPass());
  pm.addPass(createZeroPass());
}

// What a train and a tune job share after their bmb-level passes: lowering
// to the execution plan, fusion, the async check, memory planning.
static void populateTrainingLowering(OpPassManager &pm) {
  using namespace mlir::bmb;
  pm.addPass(createLowerBmbToExecPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createFuseKernelsPass());
  pm.addPass(createOffloadOptimizerPass());
  pm.addPass(createVerifyAsyncPass());
  pm.addPass(createPlanMemoryPass());
  pm.addPass(createPrepareForEmissionPass());
}

void mlir::bmb::populateTrainPipeline(OpPassManager &pm, const TrainingPipelineOptions &o) {
  populateFrontendPipeline(pm);
  populateAutodiffPipeline(pm, o);
  populateTrainingLowering(pm);
}

void mlir::bmb::populateTunePipeline(OpPassManager &pm, const TrainingPipelineOptions &o) {
  populateFrontendPipeline(pm);
  // The prompt plan first: it adds @prompt.soft and the soft embedding,
  // which the deltas' freezing and the loss then see.
  pm.addPass(createLowerPromptsPass());
  populateAutodiffPipeline(pm, o);
  populateTrainingLowering(pm);
}

void mlir::bmb::registerBmbPipelines() {
  PassPipelineRegistration<>(
      "bmb-tune-pipeline",
      "A tune job: frontend, bmb-lower-prompts, then the train job's passes (bmb-insert-deltas, "
      "bmb-attach-loss in tune mode, ..., bmb-prepare-for-emission)",
      [](OpPassManager &pm) { populateTunePipeline(pm); });
  PassPipelineRegistration<>(
      "bmb-train-pipeline",
      "A train job: frontend, bmb-insert-deltas, bmb-attach-loss, bmb-autocast, bmb-autodiff, "
      "bmb-checkpoint-activations, bmb-insert-optimizer, bmb-data-parallel, bmb-zero, "
      "bmb-lower-to-exec, canonicalize, bmb-fuse-kernels, bmb-offload-optimizer, "
      "bmb-verify-async, bmb-plan-memory, bmb-prepare-for-emission",
      [](OpPassManager &pm) { populateTrainPipeline(pm); });
  PassPipelineRegistration<>(
      "bmb-infer-pipeline",
      "An infer job: frontend, bmb-insert-deltas, bmb-lower-to-exec, canonicalize, bmb-fuse-kernels, "
      "bmb-plan-memory, bmb-prepare-for-emission",
      [](OpPassManager &pm) { populateInferPipeline(pm); });
  PassPipelineRegistration<>(
      "bmb-frontend-pipeline",
      "The passes that run right after MLIRGen: canonicalize, symbol-dce",
      [](OpPassManager &pm) { populateFrontendPipeline(pm); });
}
