//===- Passes.h - bmb passes ------------------------------------*- C++ -*-===//
//
// Declarations of every pass in Passes.td (create*Pass(), option structs)
// and registerBmbPasses(), which makes them available to bmb-opt.
//
//===----------------------------------------------------------------------===//
#ifndef BMB_PASSES_PASSES_H
#define BMB_PASSES_PASSES_H

#include "dialects/BmbExec/BmbExecDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

#include <memory>

namespace mlir::bmb {

#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

} // namespace mlir::bmb

#endif // BMB_PASSES_PASSES_H
