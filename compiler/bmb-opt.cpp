//===- bmb-opt.cpp - The bmb IR driver ------------------------------------===//
//
// MlirOptMain over the bmb dialect, func and the passes bmb's pipelines use:
// lit's IR driver, and the reader of what `bmbc --dump-ir` prints. Only what
// we use is registered (registerAll* would cost a minute of compile time).
//
//===----------------------------------------------------------------------===//

#include "dialects/Bmb/BmbDialect.h"
#include "passes/Passes.h"
#include "passes/Pipelines.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  registry.insert<mlir::bmb::BmbDialect, mlir::bmb::exec::BmbExecDialect,
                  mlir::func::FuncDialect, mlir::scf::SCFDialect, mlir::arith::ArithDialect,
                  mlir::math::MathDialect, mlir::memref::MemRefDialect>();
  mlir::registerTransformsPasses(); // canonicalize, cse, symbol-dce, ...
  mlir::bmb::registerBmbPasses();
  mlir::bmb::registerBmbPipelines();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "bmb IR driver\n", registry));
}
