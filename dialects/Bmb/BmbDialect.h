//===- BmbDialect.h - The bmb dialect ---------------------------*- C++ -*-===//
#ifndef BMB_DIALECTS_BMB_BMBDIALECT_H
#define BMB_DIALECTS_BMB_BMBDIALECT_H

#include "mlir/IR/Dialect.h"

#include "dialects/Bmb/BmbDialect.h.inc"

#endif // BMB_DIALECTS_BMB_BMBDIALECT_H
