//===- Pipelines.cpp - Named bmb pass pipelines ---------------------------===//

#include "passes/Pipelines.h"

#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void mlir::bmb::populateFrontendPipeline(OpPassManager &pm) {
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createSymbolDCEPass());
}

void mlir::bmb::registerBmbPipelines() {
  PassPipelineRegistration<>(
      "bmb-frontend-pipeline",
      "The passes that run right after MLIRGen: canonicalize, symbol-dce",
      [](OpPassManager &pm) { populateFrontendPipeline(pm); });
}
