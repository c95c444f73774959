//===- MLIRGen.cpp - The elaborated program as `bmb` IR -------------------===//
//
// Layer regions are isolated from above, so the induction variables of
// enclosing repeats, which stacked parameters are indexed by, travel into a
// bmb.layer as extra `index` operands and into a nested bmb.repeat as
// invariant operands. Primitive ops are built by name from the node's op and
// attributes (their names are the dialect's), and verified when the module
// is complete.
//
//===----------------------------------------------------------------------===//
#include "lang/MLIRGen.h"

#include "dialects/Bmb/BmbDialect.h"
#include "dialects/Bmb/BmbOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Verifier.h"

#include <map>

using namespace mlir;
namespace bd = mlir::bmb; // the dialect; ::bmb is the front end
namespace program = ::bmb::program;
namespace shapes = ::bmb::shapes;
using ::bmb::Loc;
using ::bmb::SourceManager;
using program::Constant;
using program::LayerInstance;
using K = program::Constant::Kind;

namespace {

class Generator {
public:
  Generator(MLIRContext &ctx, const SourceManager &sources)
      : ctx(ctx), b(&ctx), sources(sources) {}

  /// Emits the root's forward as func `name` at the insertion point.
  void emitEntry(const program::Program &p, StringRef name) {
    const LayerInstance &root = *p.model;
    const program::Graph &g = root.forward;
    SmallVector<Type> inTypes, outTypes;
    for (program::ValueId v : g.inputs)
      inTypes.push_back(tensorType(g.values[v].sig));
    for (program::ValueId v : g.outputs)
      outTypes.push_back(tensorType(g.values[v].sig));
    auto func = b.create<func::FuncOp>(loc(root.declLoc), name,
                                       b.getFunctionType(inTypes, outTypes));
    // The inputs' names (`tokens`, `mask`) tell the runtime what to feed.
    for (auto [i, name] : llvm::enumerate(g.inputNames))
      func.setArgAttr(i, "bmb.name", b.getStringAttr(name));
    Block *entry = func.addEntryBlock();
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(entry);
    SmallVector<Value> outs = emitGraph(root, entry->getArguments(), {});
    b.create<func::ReturnOp>(loc(root.declLoc), outs);
  }

  LogicalResult addEntry(ModuleOp module, const program::Program &p, StringRef name) {
    bd::ModelOp model;
    for (auto m : module.getOps<bd::ModelOp>())
      model = m;
    if (!model)
      return module.emitError("no bmb.model to add the entry '") << name << "' to";
    for (auto param : model.getBody().front().getOps<bd::ParamOp>())
      params[param.getSymName().str()] = param;
    b.setInsertionPointToEnd(&model.getBody().front());
    emitEntry(p, name);
    return verify(module);
  }

  OwningOpRef<ModuleOp> run(const program::Program &p, StringRef entryName) {
    const LayerInstance &root = *p.model;
    OwningOpRef<ModuleOp> module = ModuleOp::create(loc(root.declLoc));
    b.setInsertionPointToEnd(module->getBody());

    std::string modelName = p.job ? p.job->modelName : root.name;
    auto model = b.create<bd::ModelOp>(loc(root.loc), modelName, root.layerName);
    b.setInsertionPointToEnd(&model.getBody().front());
    emitParams(root, {});
    for (const program::CheckpointMap &m : p.checkpointMaps)
      emitCheckpointMap(m);

    // The program's entry: the root's forward over the job's shapes.
    emitEntry(p, entryName);

    b.setInsertionPointToEnd(module->getBody());
    for (const program::Template &t : p.templates)
      b.create<bd::TemplateOp>(loc(t.loc), t.name, t.text);
    for (const program::Verbalizer &v : p.verbalizers) {
      SmallVector<Attribute> labels, words;
      for (const auto &[label, ws] : v.labels) {
        labels.push_back(b.getStringAttr(label));
        SmallVector<Attribute> w;
        for (const std::string &x : ws)
          w.push_back(b.getStringAttr(x));
        words.push_back(b.getArrayAttr(w));
      }
      auto op = b.create<bd::VerbalizerOp>(loc(v.loc), v.name, b.getArrayAttr(labels),
                                            b.getArrayAttr(words));
      if (v.reduce != "mean")
        op.setReduce(v.reduce);
      op.setSoft(v.soft);
      op.setCalibrate(v.calibrate);
    }
    for (const program::Recipe &r : p.recipes) {
      SmallVector<Attribute> dirs;
      for (const program::Directive &d : r.directives) {
        SmallVector<NamedAttribute> fields;
        fields.push_back(b.getNamedAttr("verb", b.getStringAttr(d.verb)));
        for (const auto &[k, v] : d.options)
          fields.push_back(b.getNamedAttr(k, toAttr(v)));
        dirs.push_back(DictionaryAttr::get(&ctx, fields));
      }
      b.create<bd::RecipeOp>(loc(r.loc), r.name, b.getArrayAttr(dirs));
    }
    if (p.job) {
      const program::Job &j = *p.job;
      SmallVector<NamedAttribute> settings;
      for (const auto &[k, v] : j.settings)
        settings.push_back(b.getNamedAttr(k, toAttr(v)));
      // B and T as bound, also where the job left them to defaults.
      if (!j.settings.count("batch"))
        settings.push_back(b.getNamedAttr("batch", b.getI64IntegerAttr(j.batch)));
      if (!j.settings.count("seq"))
        settings.push_back(b.getNamedAttr("seq", b.getI64IntegerAttr(j.seq)));
      // Each setting's line travels as a named part of the job's location
      // (settingLoc in passes/EntryLowering.h): errors about one setting
      // point at it. Diagnostics show the first part, the job.
      SmallVector<Location> locs{loc(j.loc)};
      for (const auto &[k, v] : j.settings)
        if (v.loc.valid())
          locs.push_back(NameLoc::get(b.getStringAttr(k), loc(v.loc)));
      b.create<bd::JobOp>(FusedLoc::get(&ctx, locs), j.name, static_cast<bd::JobKind>(j.kind),
                           modelName, DictionaryAttr::get(&ctx, settings), j.from,
                           j.recipe);
    }
    if (failed(verify(*module)))
      return nullptr;
    return module;
  }

private:
  Location loc(Loc l) {
    if (!l.valid() || l.file >= sources.numFiles())
      return UnknownLoc::get(&ctx);
    return FileLineColLoc::get(&ctx, sources.path(l.file), l.line, l.col);
  }

  /// The type of a value, or of a parameter stacked under `prefix` repeats.
  RankedTensorType tensorType(const shapes::Sig &s, ArrayRef<int64_t> prefix = {}) {
    shapes::Sig stacked = s;
    stacked.shape.insert(stacked.shape.begin(), prefix.begin(), prefix.end());
    return bd::getTensorType(&ctx, stacked);
  }

  Attribute toAttr(const Constant &c) {
    switch (c.kind) {
    case K::None:
      return b.getUnitAttr();
    case K::Int:
      return b.getI64IntegerAttr(c.i);
    case K::Float:
      return b.getF64FloatAttr(c.f);
    case K::Bool:
      return b.getBoolAttr(c.b);
    case K::String:
    case K::Enum:
      return b.getStringAttr(c.s);
    case K::List:
    case K::Tuple:
    case K::Pair: {
      SmallVector<Attribute> xs;
      for (const Constant &e : c.elements)
        xs.push_back(toAttr(e));
      return b.getArrayAttr(xs);
    }
    case K::Call: {
      SmallVector<NamedAttribute> fields;
      fields.push_back(b.getNamedAttr("kind", b.getStringAttr(c.s)));
      for (const auto &[k, v] : c.keywords)
        fields.push_back(b.getNamedAttr(k, toAttr(v)));
      return DictionaryAttr::get(&ctx, fields);
    }
    }
    return b.getUnitAttr();
  }

  bd::InitAttr initAttr(const program::Init &init) {
    using IK = bd::InitKind;
    switch (init.kind) {
    case program::Init::Kind::Zeros:
      return bd::InitAttr::get(&ctx, IK::Zeros);
    case program::Init::Kind::Ones:
      return bd::InitAttr::get(&ctx, IK::Ones);
    case program::Init::Kind::Normal:
      return bd::InitAttr::get(&ctx, IK::Normal, init.a);
    case program::Init::Kind::Uniform:
      return bd::InitAttr::get(&ctx, IK::Uniform, init.a, init.b);
    case program::Init::Kind::Constant:
      return bd::InitAttr::get(&ctx, IK::Constant, init.a);
    }
    return bd::InitAttr::get(&ctx, IK::Zeros);
  }

  /// Declares every parameter under `inst`; `stack` holds the counts of the
  /// enclosing repeats, outermost first.
  void emitParams(const LayerInstance &inst, std::vector<int64_t> stack) {
    if (inst.repeat > 0)
      stack.push_back(inst.repeat);
    for (const program::Param &p : inst.params) {
      std::string name = inst.path.empty() ? p.name : inst.path + "." + p.name;
      auto op = b.create<bd::ParamOp>(loc(p.loc), name, tensorType(p.sig, stack),
                                       initAttr(p.init), !p.trainable,
                                       static_cast<int64_t>(stack.size()));
      params[name] = op;
    }
    for (const auto &c : inst.children)
      emitParams(*c, stack);
  }

  void emitCheckpointMap(const program::CheckpointMap &m) {
    SmallVector<bd::NameRuleAttr> rules;
    for (const program::NameRule &r : m.rules) {
      SmallVector<FlatSymbolRefAttr> parts;
      for (const std::string &p : r.parts)
        parts.push_back(FlatSymbolRefAttr::get(&ctx, p));
      rules.push_back(bd::NameRuleAttr::get(&ctx, r.external, parts, r.axis,
                                            r.transpose, r.tied));
    }
    b.create<bd::CheckpointMapOp>(loc(m.loc), m.name, rules);
  }

  SmallVector<Value> emitGraph(const LayerInstance &inst, ValueRange inputs,
                               ValueRange ivs) {
    const program::Graph &g = inst.forward;
    std::vector<Value> vals(g.values.size());
    for (size_t i = 0; i < g.inputs.size(); ++i)
      vals[g.inputs[i]] = inputs[i];
    for (const program::Node &n : g.nodes) {
      SmallVector<Value> operands;
      for (program::ValueId v : n.operands)
        if (v != program::kNoValue)
          operands.push_back(vals[v]);
      SmallVector<Type> types;
      for (program::ValueId v : n.results)
        types.push_back(tensorType(g.values[v].sig));
      SmallVector<Value> results;
      if (n.op == "param") {
        bd::ParamOp p = params.at(n.paramPath);
        int64_t depth = p.getStacked();
        results.push_back(b.create<bd::ParamGetOp>(loc(n.loc), p, ivs.take_front(depth)));
      } else if (n.op == "call") {
        results = emitCall(*n.callee, n.loc, operands, types, ivs);
      } else {
        results = emitPrimitive(n, operands, types);
      }
      for (size_t i = 0; i < n.results.size(); ++i)
        vals[n.results[i]] = results[i];
    }
    SmallVector<Value> outs;
    for (program::ValueId v : g.outputs)
      outs.push_back(vals[v]);
    return outs;
  }

  SmallVector<Value> emitCall(const LayerInstance &callee, Loc at,
                              SmallVector<Value> operands, ArrayRef<Type> types,
                              ValueRange ivs) {
    Location l = loc(at);
    OpBuilder::InsertionGuard guard(b);
    if (callee.repeat > 0) {
      size_t carried = static_cast<size_t>(callee.carried);
      SmallVector<Value> iter(operands.begin(), operands.begin() + carried);
      SmallVector<Value> invariant(operands.begin() + carried, operands.end());
      size_t tensorInvariants = invariant.size();
      invariant.append(ivs.begin(), ivs.end());
      auto op = b.create<bd::RepeatOp>(l, callee.repeat, callee.name, callee.layerName,
                                        iter, invariant);
      Block *body = op.getBodyBlock();
      b.setInsertionPointToEnd(body);
      SmallVector<Value> inner(op.getCarriedArgs().begin(), op.getCarriedArgs().end());
      auto inv = op.getInvariantArgs();
      inner.append(inv.begin(), inv.begin() + tensorInvariants);
      SmallVector<Value> innerIvs(inv.begin() + tensorInvariants, inv.end());
      innerIvs.push_back(op.getInductionVar());
      SmallVector<Value> outs = emitGraph(callee, inner, innerIvs);
      b.create<bd::YieldOp>(l, outs);
      return SmallVector<Value>(op.getResults().begin(), op.getResults().end());
    }
    size_t numTensors = operands.size();
    operands.append(ivs.begin(), ivs.end());
    auto op = b.create<bd::LayerOp>(l, callee.name, callee.layerName, types, operands);
    Block *body = op.getBodyBlock();
    b.setInsertionPointToEnd(body);
    auto args = body->getArguments();
    SmallVector<Value> outs = emitGraph(callee, args.take_front(numTensors),
                                        args.drop_front(numTensors));
    b.create<bd::YieldOp>(l, outs);
    return SmallVector<Value>(op.getResults().begin(), op.getResults().end());
  }

  SmallVector<Value> emitPrimitive(const program::Node &n, ArrayRef<Value> operands,
                                   ArrayRef<Type> types) {
    OperationState st(loc(n.loc), "bmb." + n.op);
    st.addOperands(operands);
    st.addTypes(types);
    for (const auto &[name, c] : n.attrs) {
      if (name == "causal") {
        if (c.b)
          st.addAttribute(name, b.getUnitAttr());
        continue;
      }
      if (name == "approximate") {
        auto approx = bd::symbolizeGeluApproximation(c.s);
        st.addAttribute(name, bd::GeluApproximationAttr::get(
                                  &ctx, approx.value_or(bd::GeluApproximation::None)));
        continue;
      }
      if (name == "perm") {
        SmallVector<int64_t> perm;
        for (const Constant &e : c.elements)
          perm.push_back(e.i);
        st.addAttribute(name, b.getDenseI64ArrayAttr(perm));
        continue;
      }
      st.addAttribute(name, toAttr(c));
    }
    // Optional operands after the required ones: attention's mask (its
    // prefix operands are only added by bmb-insert-deltas).
    if (n.op == "attention")
      st.addAttribute("operandSegmentSizes",
                      b.getDenseI32ArrayAttr({1, 1, 1, operands.size() > 3 ? 1 : 0, 0, 0, 0}));
    if (n.op == "arange")
      st.addAttribute("n", b.getI64IntegerAttr(
                               llvm::cast<RankedTensorType>(types[0]).getDimSize(0)));
    if (n.op == "dropout" || n.op == "random")
      st.addAttribute("rng_id", b.getI64IntegerAttr(nextRngId++));
    Operation *op = b.create(st);
    return SmallVector<Value>(op->getResults().begin(), op->getResults().end());
  }

  MLIRContext &ctx;
  OpBuilder b;
  const SourceManager &sources;
  std::map<std::string, bd::ParamOp> params;
  int64_t nextRngId = 0;
};

} // namespace

namespace bmb {
mlir::OwningOpRef<mlir::ModuleOp> mlirGen(mlir::MLIRContext &context,
                                          const program::Program &prog,
                                          const SourceManager &sources,
                                          llvm::StringRef entryName) {
  context.getOrLoadDialect<mlir::bmb::BmbDialect>();
  context.getOrLoadDialect<mlir::func::FuncDialect>();
  Generator gen(context, sources);
  return gen.run(prog, entryName);
}

mlir::LogicalResult addEntry(mlir::ModuleOp module, const program::Program &prog,
                             const SourceManager &sources, llvm::StringRef entryName) {
  Generator gen(*module.getContext(), sources);
  return gen.addEntry(module, prog, entryName);
}
} // namespace bmb
