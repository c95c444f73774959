//===- BmbExecOps.h - Ops of the execution plan -----------------*- C++ -*-===//
#ifndef BMB_DIALECTS_BMBEXEC_BMBEXECOPS_H
#define BMB_DIALECTS_BMBEXEC_BMBEXECOPS_H

#include "dialects/BmbExec/BmbExecDialect.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_TYPEDEF_CLASSES
#include "dialects/BmbExec/BmbExecTypes.h.inc"

#define GET_OP_CLASSES
#include "dialects/BmbExec/BmbExecOps.h.inc"

#endif // BMB_DIALECTS_BMBEXEC_BMBEXECOPS_H
