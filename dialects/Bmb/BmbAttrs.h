//===- BmbAttrs.h - bmb enums and attributes --------------------*- C++ -*-===//
#ifndef BMB_DIALECTS_BMB_BMBATTRS_H
#define BMB_DIALECTS_BMB_BMBATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/OpImplementation.h"

#include <string>

#include "dialects/Bmb/BmbEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/Bmb/BmbAttrs.h.inc"

namespace mlir::bmb {

/// The shortest decimal that reads back as `v` and that MLIR's lexer takes
/// as a float ("0.02", "1.0e-05", "2.0"): used wherever we print a number
/// that a human reads and bmb-opt parses back.
std::string formatReal(double v);

} // namespace mlir::bmb

#endif // BMB_DIALECTS_BMB_BMBATTRS_H
