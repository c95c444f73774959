//===- BmbAttrs.cpp - bmb enums and attributes ----------------------------===//

#include "dialects/Bmb/BmbAttrs.h"

#include "dialects/Bmb/BmbDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

using namespace mlir;
using namespace mlir::bmb;

#include "dialects/Bmb/BmbEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/Bmb/BmbAttrs.cpp.inc"

void BmbDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialects/Bmb/BmbAttrs.cpp.inc"
      >();
}

std::string mlir::bmb::formatReal(double v) {
  if (!std::isfinite(v))
    return v != v ? "nan" : (v < 0 ? "-inf" : "inf");
  char buf[40];
  for (int precision = 6; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof(buf), "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v)
      break;
  }
  // MLIR's lexer wants a '.' in a float literal: 1e-05 -> 1.0e-05, 2 -> 2.0.
  std::string s = buf;
  if (s.find('.') == std::string::npos) {
    size_t e = s.find('e');
    s.insert(e == std::string::npos ? s.size() : e, ".0");
  }
  return s;
}

namespace {
/// How many numbers an initializer takes: normal(std), uniform(lo, hi), ...
unsigned arity(InitKind kind) {
  switch (kind) {
  case InitKind::Zeros:
  case InitKind::Ones:
    return 0;
  case InitKind::Normal:
  case InitKind::Constant:
    return 1;
  case InitKind::Uniform:
    return 2;
  }
  return 0;
}
} // namespace

Attribute InitAttr::parseBody(AsmParser &parser) {
  SMLoc loc = parser.getCurrentLocation();
  StringRef word;
  if (parser.parseKeyword(&word))
    return {};
  std::optional<InitKind> kind = symbolizeInitKind(word);
  if (!kind) {
    parser.emitError(loc, "expected an initializer (zeros, ones, normal, "
                          "uniform or constant), got '")
        << word << "'";
    return {};
  }
  double numbers[2] = {0, 0};
  unsigned n = arity(*kind);
  if (n) {
    if (parser.parseLParen())
      return {};
    for (unsigned i = 0; i < n; ++i)
      if ((i && parser.parseComma()) || parser.parseFloat(numbers[i]))
        return {};
    if (parser.parseRParen())
      return {};
  }
  return InitAttr::getChecked(
      [&] { return parser.emitError(loc); }, parser.getContext(), *kind,
      llvm::APFloat(numbers[0]), llvm::APFloat(numbers[1]));
}

void InitAttr::printBody(AsmPrinter &printer) const {
  printer << stringifyInitKind(getKind());
  unsigned n = arity(getKind());
  if (n == 0)
    return;
  printer << "(" << formatReal(getFirst());
  if (n == 2)
    printer << ", " << formatReal(getSecond());
  printer << ")";
}

Attribute InitAttr::parse(AsmParser &parser, Type) {
  if (parser.parseLess())
    return {};
  Attribute attr = parseBody(parser);
  if (!attr || parser.parseGreater())
    return {};
  return attr;
}

void InitAttr::print(AsmPrinter &printer) const {
  printer << "<";
  printBody(printer);
  printer << ">";
}

LogicalResult InitAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               InitKind kind, llvm::APFloat a,
                               llvm::APFloat b) {
  if (&a.getSemantics() != &llvm::APFloat::IEEEdouble() ||
      &b.getSemantics() != &llvm::APFloat::IEEEdouble())
    return emitError() << "initializer numbers must be f64";
  double x = a.convertToDouble(), y = b.convertToDouble();
  if (!std::isfinite(x) || !std::isfinite(y))
    return emitError() << "initializer numbers must be finite";
  unsigned n = arity(kind);
  if ((n < 1 && x != 0) || (n < 2 && y != 0))
    return emitError() << stringifyInitKind(kind) << " takes " << n
                       << " number(s); the unused ones must be 0";
  if (kind == InitKind::Normal && x < 0)
    return emitError() << "normal: std must be >= 0, got " << formatReal(x);
  if (kind == InitKind::Uniform && !(x < y))
    return emitError() << "uniform: low " << formatReal(x)
                       << " must be less than high " << formatReal(y);
  return success();
}
