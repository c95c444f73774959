//===- BmbOps.cpp - Models, parameters, layer regions, jobs ---------------===//
//
// Builders and verifiers of the structural ops (BmbModelOps.td), the
// type <-> signature conversions, and the generated op definitions. The
// primitives' shape rules are in BmbTensorOps.cpp, folds and patterns in
// BmbCanonicalize.cpp.
//
//===----------------------------------------------------------------------===//

#include "dialects/Bmb/BmbOps.h"
#include "dialects/Bmb/TemplateRules.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace mlir::bmb;
namespace templates = ::bmb::templates;

//===----------------------------------------------------------------------===//
// Types <-> signatures
//===----------------------------------------------------------------------===//

std::optional<shapes::DType> mlir::bmb::getDType(Type t) {
  using shapes::DType;
  if (t.isF32())
    return DType::F32;
  if (t.isF64())
    return DType::F64;
  if (t.isF16())
    return DType::F16;
  if (t.isBF16())
    return DType::BF16;
  if (t.isSignlessInteger(8))
    return DType::I8;
  if (t.isSignlessInteger(32))
    return DType::I32;
  if (t.isSignlessInteger(64))
    return DType::I64;
  return std::nullopt;
}

Type mlir::bmb::getElementType(MLIRContext *ctx, shapes::DType dtype) {
  Builder b(ctx);
  switch (dtype) {
  case shapes::DType::F32:
    return b.getF32Type();
  case shapes::DType::F64:
    return b.getF64Type();
  case shapes::DType::F16:
    return b.getF16Type();
  case shapes::DType::BF16:
    return b.getBF16Type();
  case shapes::DType::I8:
    return b.getI8Type();
  case shapes::DType::I32:
    return b.getI32Type();
  case shapes::DType::I64:
    return b.getI64Type();
  }
  return {};
}

std::optional<shapes::Sig> mlir::bmb::getSig(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape())
    return std::nullopt;
  std::optional<shapes::DType> dtype = getDType(tensor.getElementType());
  if (!dtype)
    return std::nullopt;
  return shapes::Sig{*dtype, shapes::Shape(tensor.getShape().begin(),
                                           tensor.getShape().end())};
}

RankedTensorType mlir::bmb::getTensorType(MLIRContext *ctx,
                                          const shapes::Sig &sig) {
  return RankedTensorType::get(sig.shape, getElementType(ctx, sig.dtype));
}

namespace {
/// "(tensor<8xf32>, index)" for diagnostics.
std::string str(TypeRange types) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "(";
  llvm::interleaveComma(types, os);
  os << ")";
  return s;
}

/// A layer instance's name is one segment of its parameters' dotted paths.
LogicalResult verifyInstanceName(Operation *op, StringRef name) {
  if (name.empty() || name.contains('.'))
    return op->emitOpError("instance name \"")
           << name << "\" must be one non-empty path segment";
  return success();
}

/// The body's terminator, or an error if it is not a bmb.yield.
FailureOr<YieldOp> getYield(Operation *op, Block &body) {
  if (body.empty() || !isa<YieldOp>(body.back()))
    return op->emitOpError("body must end in bmb.yield");
  return cast<YieldOp>(body.back());
}

/// Checks the block's argument types against `want`, starting at `first`.
LogicalResult verifyArgTypes(Operation *op, Block &body, unsigned first,
                             TypeRange want, StringRef what) {
  for (auto [i, type] : llvm::enumerate(want)) {
    Type have = body.getArgument(first + i).getType();
    if (have != type)
      return op->emitOpError("body argument #")
             << first + i << " has type " << have << " but " << what << " #"
             << i << " has type " << type;
  }
  return success();
}
} // namespace

//===----------------------------------------------------------------------===//
// bmb.model
//===----------------------------------------------------------------------===//

void ModelOp::build(OpBuilder &builder, OperationState &state, StringRef name,
                    StringRef layer) {
  state.addAttribute(getSymNameAttrName(state.name),
                     builder.getStringAttr(name));
  state.addAttribute(getLayerAttrName(state.name),
                     builder.getStringAttr(layer));
  state.addRegion()->emplaceBlock();
}

llvm::iterator_range<Block::op_iterator<ParamOp>> ModelOp::getParams() {
  return getBody().front().getOps<ParamOp>();
}

LogicalResult ModelOp::verifyRegions() {
  for (Operation &op : getBody().front())
    if (!isa<ParamOp, CheckpointMapOp, FunctionOpInterface>(op))
      return op.emitOpError("is not allowed in a bmb.model, which holds only "
                            "bmb.param, bmb.checkpoint_map and functions");
  return success();
}

//===----------------------------------------------------------------------===//
// bmb.param
//===----------------------------------------------------------------------===//

RankedTensorType ParamOp::getSliceType() {
  RankedTensorType type = getTensorType();
  int64_t k = std::clamp<int64_t>(getStacked(), 0, type.getRank());
  return RankedTensorType::get(type.getShape().drop_front(k),
                               type.getElementType());
}

LogicalResult ParamOp::verify() {
  RankedTensorType type = getTensorType();
  int64_t stacked = getStacked();
  if (stacked < 0 || stacked > type.getRank())
    return emitOpError("stacked ")
           << stacked << " must be in [0, " << type.getRank()
           << "], the rank of " << type;
  InitKind kind = getInit().getKind();
  if ((kind == InitKind::Normal || kind == InitKind::Uniform) &&
      !isa<FloatType>(type.getElementType()))
    return emitOpError("initializer ")
           << stringifyInitKind(kind) << " needs a float dtype, got "
           << type.getElementType();
  return success();
}

//===----------------------------------------------------------------------===//
// bmb.param_get
//===----------------------------------------------------------------------===//

void ParamGetOp::build(OpBuilder &builder, OperationState &state, ParamOp param,
                       ValueRange indices) {
  RankedTensorType type = param.getTensorType();
  Type result =
      indices.empty()
          ? Type(type)
          : RankedTensorType::get(type.getShape().drop_front(indices.size()),
                                  type.getElementType());
  build(builder, state, result, param.getSymName(), indices);
}

RepeatOp mlir::bmb::getInductionVarOwner(Value v) {
  while (auto arg = dyn_cast<BlockArgument>(v)) {
    Operation *parent = arg.getOwner()->getParentOp();
    unsigned n = arg.getArgNumber();
    if (auto layer = dyn_cast_or_null<LayerOp>(parent)) {
      if (n >= layer.getInputs().size())
        return {};
      v = layer.getInputs()[n];
      continue;
    }
    auto repeat = dyn_cast_or_null<RepeatOp>(parent);
    if (!repeat)
      return {};
    if (n == 0)
      return repeat;
    size_t carried = repeat.getIter().size();
    if (n <= carried || n - 1 - carried >= repeat.getInvariant().size())
      return {};
    v = repeat.getInvariant()[n - 1 - carried];
  }
  return {};
}

namespace {
/// Slots of a per-iteration delta: one per iteration, each -1 or an entry of
/// the compact stack, which every entry of uses exactly once in order.
LogicalResult verifySlots(Operation *op, Value iteration, ArrayRef<int64_t> slots) {
  int64_t next = 0;
  for (int64_t s : slots) {
    if (s != -1 && s != next)
      return op->emitOpError("slots must be -1 or the next entry of the stack (0, 1, ...), got ")
             << s;
    next += s != -1;
  }
  if (next == 0)
    return op->emitOpError("no iteration has a slot");
  RepeatOp owner = getInductionVarOwner(iteration);
  if (!owner)
    return op->emitOpError("the iteration is not the induction variable of an enclosing "
                           "bmb.repeat");
  if (int64_t(owner.getCount()) != int64_t(slots.size()))
    return op->emitOpError("has ") << slots.size() << " slots for the " << owner.getCount()
                                   << " iterations of bmb.repeat '" << owner.getInstance()
                                   << "'";
  return success();
}
} // namespace

LogicalResult IterationSlotOp::verify() {
  return verifySlots(*this, getIteration(), getSlots());
}

int64_t IterationSlotOp::getStackSize() {
  int64_t n = 0;
  for (int64_t s : getSlots())
    n = std::max(n, s + 1);
  return n;
}

LogicalResult IterationGateOp::verify() {
  auto t = cast<RankedTensorType>(getType());
  if (t.getShape() != ArrayRef<int64_t>{1} || !isa<FloatType>(t.getElementType()))
    return emitOpError("result must be a one-element float tensor, got ") << t;
  return verifySlots(*this, getIteration(), getSlots());
}

LogicalResult ParamGetOp::verify() {
  if (!(*this)->getParentOfType<ModelOp>())
    return emitOpError("must be nested in a bmb.model");
  // Index j selects the iteration of the j-th enclosing repeat, outermost
  // first, so their repeats must nest in that order.
  RepeatOp outer;
  for (auto [j, operand] : llvm::enumerate(getIndices())) {
    // A per-iteration delta's index: its iteration's slot.
    Value index = operand;
    if (auto slot = index.getDefiningOp<IterationSlotOp>())
      index = slot.getIteration();
    RepeatOp owner = getInductionVarOwner(index);
    if (!owner)
      return emitOpError("index #")
             << j
             << " is not the induction variable of an enclosing bmb.repeat "
                "(or its bmb.iteration_slot)";
    if (outer && !outer->isProperAncestor(owner))
      return emitOpError("index #")
             << j << " must belong to a bmb.repeat nested in that of index #"
             << j - 1;
    outer = owner;
  }
  return success();
}

LogicalResult ParamGetOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto param =
      symbolTable.lookupNearestSymbolFrom<ParamOp>(*this, getParamAttr());
  if (!param)
    return emitOpError() << getParamAttr()
                         << " does not name a bmb.param of the enclosing model";
  RankedTensorType type = param.getTensorType();
  int64_t stacked = param.getStacked();
  if (int64_t(getIndices().size()) != stacked)
    return emitOpError() << getParamAttr() << " is stacked " << stacked
                         << " deep, so it takes " << stacked
                         << " index(es), got " << getIndices().size();
  RankedTensorType slice = param.getSliceType();
  if (getType() != slice)
    return emitOpError("result type ")
           << getType() << " does not match " << slice << ", "
           << (stacked ? "one iteration's slice of " : "the type of ")
           << getParamAttr() << " : " << type;
  for (auto [j, index] : llvm::enumerate(getIndices())) {
    if (auto slot = index.getDefiningOp<IterationSlotOp>()) {
      if (slot.getStackSize() != type.getDimSize(j))
        return emitOpError("index #")
               << j << " is a slot of a stack of " << slot.getStackSize() << " entries, but "
               << getParamAttr() << " stacks " << type.getDimSize(j) << " along dimension "
               << j;
      continue;
    }
    RepeatOp owner = getInductionVarOwner(index);
    if (owner && int64_t(owner.getCount()) != type.getDimSize(j))
      return emitOpError("index #")
             << j << " counts the " << owner.getCount()
             << " iterations of bmb.repeat \"" << owner.getInstance()
             << "\", but " << getParamAttr() << " stacks " << type.getDimSize(j)
             << " along dimension " << j;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// bmb.layer
//===----------------------------------------------------------------------===//

void LayerOp::build(OpBuilder &builder, OperationState &state,
                    StringRef instance, StringRef layer, TypeRange resultTypes,
                    ValueRange inputs) {
  build(builder, state, resultTypes, instance, layer, inputs);
  Block &body = state.regions.front()->emplaceBlock();
  for (Value v : inputs)
    body.addArgument(v.getType(), v.getLoc());
}

LogicalResult LayerOp::verifyRegions() {
  if (failed(verifyInstanceName(*this, getInstance())))
    return failure();
  Block &body = getBody().front();
  if (body.getNumArguments() != getInputs().size())
    return emitOpError("body has ")
           << body.getNumArguments() << " arguments, expected "
           << getInputs().size() << " (one per input)";
  if (failed(verifyArgTypes(*this, body, 0, getInputs().getTypes(), "input")))
    return failure();
  FailureOr<YieldOp> yield = getYield(*this, body);
  if (failed(yield))
    return failure();
  if (yield->getValues().getTypes() != getResultTypes())
    return emitOpError("yields ")
           << str(yield->getValues().getTypes()) << " but its results are "
           << str(getResultTypes());
  int64_t saved = getNumSaved();
  if (saved < 0 || saved > int64_t(getNumResults()))
    return emitOpError("num_saved ")
           << saved << " must be in [0, " << getNumResults()
           << "], the number of results";
  if (getBackward() && saved != 0)
    return emitOpError("is a backward layer, which saves nothing, but has "
                       "num_saved ")
           << saved;
  return success();
}

//===----------------------------------------------------------------------===//
// bmb.repeat
//===----------------------------------------------------------------------===//

void RepeatOp::build(OpBuilder &builder, OperationState &state, int64_t count,
                     StringRef instance, StringRef layer, ValueRange iter,
                     ValueRange invariant) {
  build(builder, state, iter.getTypes(), count, instance, layer, iter,
        invariant);
  Block &body = state.regions.front()->emplaceBlock();
  body.addArgument(builder.getIndexType(), state.location);
  for (Value v : iter)
    body.addArgument(v.getType(), v.getLoc());
  for (Value v : invariant)
    body.addArgument(v.getType(), v.getLoc());
}

LogicalResult RepeatOp::verifyRegions() {
  if (failed(verifyInstanceName(*this, getInstance())))
    return failure();
  if (int64_t(getCount()) < 1)
    return emitOpError("count must be positive, got ") << int64_t(getCount());
  if (getIter().empty())
    return emitOpError("needs at least one carried (iter) value");
  int64_t saved = getNumSaved();
  if (saved < 0 || getNumResults() != getIter().size() + saved)
    return emitOpError("has ")
           << getNumResults() << " results, expected " << getIter().size()
           << " carried + num_saved " << saved;
  if (getCarriedResults().getTypes() != getIter().getTypes())
    return emitOpError("result types ")
           << str(getCarriedResults().getTypes())
           << " must equal the carried types " << str(getIter().getTypes());
  Block &body = getBody().front();
  size_t want = 1 + getIter().size() + getInvariant().size();
  if (body.getNumArguments() != want)
    return emitOpError("body has ")
           << body.getNumArguments() << " arguments, expected " << want
           << " (the index, " << getIter().size() << " carried, "
           << getInvariant().size() << " invariant)";
  if (!body.getArgument(0).getType().isIndex())
    return emitOpError("body argument #0 must be the index induction "
                       "variable, got ")
           << body.getArgument(0).getType();
  if (failed(verifyArgTypes(*this, body, 1, getIter().getTypes(),
                            "carried value")) ||
      failed(verifyArgTypes(*this, body, 1 + getIter().size(),
                            getInvariant().getTypes(), "invariant value")))
    return failure();
  FailureOr<YieldOp> yield = getYield(*this, body);
  if (failed(yield))
    return failure();
  // Each stacked save is tensor<count x T> for the T the body yields.
  SmallVector<Type> yields(getIter().getTypes());
  for (Value stacked : getStackedSaves()) {
    auto type = cast<RankedTensorType>(stacked.getType());
    if (type.getRank() < 1 || type.getDimSize(0) != int64_t(getCount()))
      return emitOpError("stacked save ")
             << type << " must have a leading dimension of count "
             << int64_t(getCount());
    yields.push_back(RankedTensorType::get(type.getShape().drop_front(),
                                           type.getElementType()));
  }
  if (yield->getValues().getTypes() != TypeRange(yields)) {
    InFlightDiagnostic diag = emitOpError("yields ")
                              << str(yield->getValues().getTypes());
    if (saved == 0)
      return diag << " but the carried types are " << str(yields);
    return diag << " but expected " << str(yields)
                << " (the carried types, then one slice per stacked save)";
  }
  return success();
}

//===----------------------------------------------------------------------===//
// bmb.job, bmb.template, bmb.verbalizer, bmb.recipe
//===----------------------------------------------------------------------===//

void JobOp::build(OpBuilder &builder, OperationState &state, StringRef name,
                  JobKind kind, StringRef model, DictionaryAttr settings,
                  StringRef from, StringRef recipe) {
  build(builder, state, builder.getStringAttr(name),
        JobKindAttr::get(builder.getContext(), kind),
        FlatSymbolRefAttr::get(builder.getContext(), model),
        from.empty() ? StringAttr() : builder.getStringAttr(from),
        recipe.empty() ? FlatSymbolRefAttr()
                       : FlatSymbolRefAttr::get(builder.getContext(), recipe),
        settings ? settings : builder.getDictionaryAttr({}));
}

LogicalResult JobOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  if (!symbolTable.lookupNearestSymbolFrom<ModelOp>(*this, getModelAttr()))
    return emitOpError("model ") << getModelAttr() << " is not a bmb.model";
  if (getRecipeAttr() &&
      !symbolTable.lookupNearestSymbolFrom<RecipeOp>(*this, getRecipeAttr()))
    return emitOpError("recipe ") << getRecipeAttr() << " is not a bmb.recipe";
  return success();
}

SmallVector<StringRef> TemplateOp::getPlaceholders() {
  templates::Scan scan = templates::scan(getText());
  SmallVector<StringRef> names;
  if (scan.error == templates::Scan::Error::None)
    for (const templates::Placeholder &p : scan.placeholders)
      names.push_back(StringRef(p.name.data(), p.name.size()));
  return names;
}

LogicalResult TemplateOp::verify() {
  templates::Plan plan = templates::plan(getText());
  if (!plan.error.empty())
    return emitOpError("malformed placeholder at offset ") << plan.errorOffset << " of \"" << getText()
                                     << "\": " << plan.error;
  return success();
}

LogicalResult VerbalizerOp::verify() {
  if (getLabels().size() != getWords().size())
    return emitOpError("has ") << getLabels().size() << " labels but "
                               << getWords().size() << " word lists";
  llvm::StringSet<> seen;
  for (auto [label, words] :
       llvm::zip(getLabels().getAsValueRange<StringAttr>(), getWords())) {
    if (label.empty() || !seen.insert(label).second)
      return emitOpError("label \"") << label << "\" is empty or repeated";
    if (cast<ArrayAttr>(words).empty())
      return emitOpError("label \"") << label << "\" has no words";
  }
  if (!llvm::is_contained({"mean", "first", "max"}, getReduce()))
    return emitOpError("reduce is mean, first or max, got \"") << getReduce() << "\"";
  return success();
}

LogicalResult RecipeOp::verify() {
  for (auto [i, attr] : llvm::enumerate(getDirectives())) {
    auto verb = cast<DictionaryAttr>(attr).getAs<StringAttr>("verb");
    if (!verb)
      return emitOpError("directive #") << i << " needs a string `verb`";
    if (!llvm::is_contained({"distill", "prune", "quantize", "moefy"},
                            verb.getValue()))
      return emitOpError("directive #")
             << i << " has unknown verb \"" << verb.getValue()
             << "\" (expected distill, prune, quantize or moefy)";
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Custom directives and the generated definitions
//===----------------------------------------------------------------------===//

/// `init normal(0.02)` in bmb.param: the InitAttr body without its brackets.
static ParseResult parseInitBody(OpAsmParser &parser, InitAttr &init) {
  Attribute attr = InitAttr::parseBody(parser);
  if (!attr)
    return failure();
  init = cast<InitAttr>(attr);
  return success();
}

static void printInitBody(OpAsmPrinter &printer, Operation *, InitAttr init) {
  init.printBody(printer);
}

// `[ "name" = @p, ... ]` in bmb.checkpoint_map: BmbCheckpointMap.cpp.
namespace mlir::bmb {
ParseResult parseNameRules(OpAsmParser &parser, ArrayAttr &rules);
void printNameRules(OpAsmPrinter &printer, Operation *op, ArrayAttr rules);
} // namespace mlir::bmb

#define GET_OP_CLASSES
#include "dialects/Bmb/BmbOps.cpp.inc"
