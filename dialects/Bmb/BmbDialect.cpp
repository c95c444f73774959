//===- BmbDialect.cpp - The bmb dialect -----------------------------------===//

#include "dialects/Bmb/BmbDialect.h"

#include "dialects/Bmb/BmbAttrs.h"
#include "dialects/Bmb/BmbOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;
using namespace mlir::bmb;

#include "dialects/Bmb/BmbDialect.cpp.inc"

void BmbDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialects/Bmb/BmbOps.cpp.inc"
      >();
  registerAttributes();
}
