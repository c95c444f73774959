//===- BmbCheckpointMap.cpp - Checkpoint name maps ------------------------===//
//
// bmb.checkpoint_map: its rule list and the checks against the model's
// parameters. #bmb.name_rule is in BmbAttrs.cpp, with the attribute storage;
// what a rule may say is dialects/Bmb/NameRules.h, shared with Sema.
//
//===----------------------------------------------------------------------===//
#include "dialects/Bmb/BmbOps.h"
#include "dialects/Bmb/NameRules.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace mlir::bmb;
namespace namerules = ::bmb::namerules;

//===----------------------------------------------------------------------===//
// bmb.checkpoint_map
//===----------------------------------------------------------------------===//

void CheckpointMapOp::build(OpBuilder &builder, OperationState &state,
                            StringRef name, ArrayRef<NameRuleAttr> rules) {
  SmallVector<Attribute> attrs(rules.begin(), rules.end());
  build(builder, state, builder.getStringAttr(name),
        builder.getArrayAttr(attrs));
}

LogicalResult CheckpointMapOp::verify() {
  for (Operation *op = (*this)->getPrevNode(); op; op = op->getPrevNode())
    if (auto other = dyn_cast<CheckpointMapOp>(op);
        other && other.getName() == getName())
      return emitOpError("name \"")
             << getName() << "\" is already used by another bmb.checkpoint_map "
             << "of this model";
  llvm::StringSet<> externals;
  for (Attribute attr : getRules()) {
    StringRef external = cast<NameRuleAttr>(attr).getExternal();
    if (!externals.insert(external).second)
      return emitOpError("has two rules for \"") << external << "\"";
  }
  return success();
}

LogicalResult
CheckpointMapOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  llvm::StringMap<StringRef> covered; // parameter -> its rule's external name
  for (Attribute attr : getRules()) {
    auto rule = cast<NameRuleAttr>(attr);
    std::vector<namerules::Part> parts;
    for (FlatSymbolRefAttr ref : rule.getParts()) {
      auto param = symbolTable.lookupNearestSymbolFrom<ParamOp>(*this, ref);
      if (!param)
        return emitOpError("rule \"")
               << rule.getExternal() << "\": " << ref
               << " does not name a bmb.param of the enclosing model";
      RankedTensorType type = param.getTensorType();
      std::optional<shapes::Sig> slice = getSig(param.getSliceType());
      if (!slice)
        return emitOpError("rule \"") << rule.getExternal() << "\": " << ref
                                      << " has an unsupported type " << type;
      int64_t stacked = param.getStacked();
      parts.push_back({ref.getValue().str(), *slice,
                       std::vector<int64_t>(type.getShape().begin(),
                                            type.getShape().begin() + stacked)});
      if (!rule.getTied())
        if (auto [it, inserted] =
                covered.try_emplace(ref.getValue(), rule.getExternal());
            !inserted)
          return emitOpError("parameter ")
                 << ref << " is part of the rules for \"" << it->second
                 << "\" and \"" << rule.getExternal()
                 << "\"; a parameter is part of one rule that is not tied";
    }
    namerules::Problem problem =
        namerules::check(rule.getExternal().str(), parts, rule.getAxis(),
                         rule.getTranspose());
    if (!problem.ok())
      return emitOpError("rule \"")
             << rule.getExternal() << "\": " << problem.message;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// The rule list: `[` rule (`,` rule)* `]`, one rule per line
//===----------------------------------------------------------------------===//

namespace mlir::bmb {

ParseResult parseNameRules(OpAsmParser &parser, ArrayAttr &rules) {
  SmallVector<Attribute> out;
  auto one = [&]() -> ParseResult {
    Attribute rule = NameRuleAttr::parseBody(parser);
    if (!rule)
      return failure();
    out.push_back(rule);
    return success();
  };
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, one))
    return failure();
  rules = parser.getBuilder().getArrayAttr(out);
  return success();
}

void printNameRules(OpAsmPrinter &printer, Operation *, ArrayAttr rules) {
  printer << "[";
  printer.increaseIndent();
  for (auto [i, rule] : llvm::enumerate(rules)) {
    printer << (i ? "," : "");
    printer.printNewline();
    cast<NameRuleAttr>(rule).printBody(printer);
  }
  printer.decreaseIndent();
  if (!rules.empty())
    printer.printNewline();
  printer << "]";
}

} // namespace mlir::bmb
