//===- BmbExecDialect.cpp - The bmb_exec dialect ---------------------------===//
#include "dialects/BmbExec/BmbExecDialect.h"
#include "dialects/BmbExec/BmbExecOps.h"

using namespace mlir;
using namespace mlir::bmb::exec;

#include "dialects/BmbExec/BmbExecDialect.cpp.inc"

void BmbExecDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialects/BmbExec/BmbExecOps.cpp.inc"
      >();
}
