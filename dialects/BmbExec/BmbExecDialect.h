//===- BmbExecDialect.h - The bmb_exec dialect ------------------*- C++ -*-===//
#ifndef BMB_DIALECTS_BMBEXEC_BMBEXECDIALECT_H
#define BMB_DIALECTS_BMBEXEC_BMBEXECDIALECT_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Dialect.h"

#include "dialects/BmbExec/BmbExecDialect.h.inc"

#endif // BMB_DIALECTS_BMBEXEC_BMBEXECDIALECT_H
