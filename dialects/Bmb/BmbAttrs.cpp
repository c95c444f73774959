//===- BmbAttrs.cpp - bmb enums and attributes ----------------------------===//

#include "dialects/Bmb/BmbAttrs.h"

#include "dialects/Bmb/BmbDialect.h"
#include "dialects/Bmb/NameRules.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

using namespace mlir;
using namespace mlir::bmb;
namespace namerules = ::bmb::namerules;

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

// Attributes whose body is also printed bare inside ops (InitAttr in
// bmb.param, NameRuleAttr in bmb.checkpoint_map): on their own they read
// `#bmb.kind<body>`.
template <class Attr> static Attribute parseAngled(AsmParser &parser) {
  if (parser.parseLess())
    return {};
  Attribute attr = Attr::parseBody(parser);
  if (!attr || parser.parseGreater())
    return {};
  return attr;
}

template <class Attr> static void printAngled(Attr attr, AsmPrinter &printer) {
  printer << "<";
  attr.printBody(printer);
  printer << ">";
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
  return parseAngled<InitAttr>(parser);
}

void InitAttr::print(AsmPrinter &printer) const { printAngled(*this, printer); }

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

//===----------------------------------------------------------------------===//
// #bmb.name_rule
//===----------------------------------------------------------------------===//

Attribute NameRuleAttr::parseBody(AsmParser &parser) {
  SMLoc loc = parser.getCurrentLocation();
  std::string external;
  SmallVector<FlatSymbolRefAttr> parts;
  int64_t axis = 0;
  bool transpose = false, tied = false;
  auto part = [&]() -> ParseResult {
    StringAttr name;
    if (parser.parseSymbolName(name))
      return failure();
    parts.push_back(FlatSymbolRefAttr::get(name));
    return success();
  };
  // `@p` or `concat(@a, @b[, axis = k])`.
  auto partList = [&]() -> ParseResult {
    if (failed(parser.parseOptionalKeyword("concat")))
      return part();
    if (parser.parseLParen() || part())
      return failure();
    while (succeeded(parser.parseOptionalComma())) {
      if (succeeded(parser.parseOptionalKeyword("axis")))
        return failure(parser.parseEqual() || parser.parseInteger(axis) ||
                       parser.parseRParen());
      if (part())
        return failure();
    }
    return parser.parseRParen();
  };
  if (parser.parseString(&external) || parser.parseEqual())
    return {};
  if (succeeded(parser.parseOptionalKeyword("tied"))) {
    tied = true;
    if (parser.parseLParen() || part() || parser.parseRParen())
      return {};
  } else if (succeeded(parser.parseOptionalKeyword("transpose"))) {
    transpose = true;
    if (parser.parseLParen() || partList() || parser.parseRParen())
      return {};
  } else if (partList()) {
    return {};
  }
  return NameRuleAttr::getChecked([&] { return parser.emitError(loc); },
                                  parser.getContext(), external, parts, axis,
                                  transpose, tied);
}

void NameRuleAttr::printBody(AsmPrinter &printer) const {
  printer.printString(getExternal());
  printer << " = ";
  if (getTied())
    printer << "tied(";
  if (getTranspose())
    printer << "transpose(";
  bool concat = getParts().size() > 1;
  if (concat)
    printer << "concat(";
  llvm::interleaveComma(getParts(), printer);
  if (concat && getAxis() != 0)
    printer << ", axis = " << getAxis();
  if (concat)
    printer << ")";
  if (getTranspose() || getTied())
    printer << ")";
}

Attribute NameRuleAttr::parse(AsmParser &parser, Type) {
  return parseAngled<NameRuleAttr>(parser);
}

void NameRuleAttr::print(AsmPrinter &printer) const { printAngled(*this, printer); }

unsigned NameRuleAttr::getNumLayerIndices() const {
  return namerules::countLayerIndices(getExternal().str());
}

LogicalResult NameRuleAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                   StringRef external,
                                   ArrayRef<FlatSymbolRefAttr> parts,
                                   int64_t axis, bool transpose, bool tied) {
  if (std::string problem = namerules::checkExternal(external.str());
      !problem.empty())
    return emitError() << "\"" << external << "\": " << problem;
  if (parts.empty() || llvm::is_contained(parts, FlatSymbolRefAttr()))
    return emitError() << "\"" << external
                       << "\": a rule needs one or more parameter symbols";
  if (axis < 0 || (parts.size() == 1 && axis != 0))
    return emitError() << "\"" << external << "\": axis " << axis
                       << " must be >= 0, and is only for concat(...) of two "
                          "or more parameters";
  if (tied && (parts.size() != 1 || transpose))
    return emitError() << "\"" << external
                       << "\": tied(...) names one parameter, untransposed";
  return success();
}
