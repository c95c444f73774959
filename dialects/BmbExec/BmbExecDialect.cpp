//===- BmbExecDialect.cpp - The bmb_exec dialect ---------------------------===//
#include "dialects/BmbExec/BmbExecDialect.h"
#include "dialects/BmbExec/BmbExecOps.h"

using namespace mlir;
using namespace mlir::bmb::exec;

#include "dialects/BmbExec/BmbExecDialect.cpp.inc"

#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

#define GET_TYPEDEF_CLASSES
#include "dialects/BmbExec/BmbExecTypes.cpp.inc"

void BmbExecDialect::initialize() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "dialects/BmbExec/BmbExecTypes.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "dialects/BmbExec/BmbExecOps.cpp.inc"
      >();
}
