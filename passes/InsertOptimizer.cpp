//===- InsertOptimizer.cpp - The train job's @optimizer_step --------------===//
//
// bmb-insert-optimizer (docs/training-ir.md, section 3). Hyperparameters the
// job leaves out take torch's defaults (AdamW: betas (0.9, 0.999), eps
// 1e-8, weight_decay 0.01; SGD: momentum 0, weight_decay 0); a job without
// `optimizer` trains with AdamW. The learning rate and step number are not
// here: they change every step and reach the program at run time.
//
// Weight decay is not applied to biases and norm weights (rank-1 params,
// per iteration for stacked ones) nor to embedding tables, as in the usual
// GPT/BERT training recipes; `no_decay = [...]` names that set instead.
//
//===----------------------------------------------------------------------===//

#include "dialects/Bmb/BmbOps.h"
#include "passes/DeltaSelectors.h"
#include "passes/Passes.h"
#include "passes/TrainJobs.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringSet.h"

namespace mlir::bmb {
#define GEN_PASS_DEF_INSERTOPTIMIZERPASS
#include "passes/Passes.h.inc"
} // namespace mlir::bmb

using namespace mlir;
using namespace mlir::bmb;

namespace {

/// A real setting (Sema writes reals as f64, but an integer is accepted).
std::optional<double> getReal(DictionaryAttr dict, StringRef name) {
  Attribute a = dict ? dict.get(name) : Attribute();
  if (auto f = dyn_cast_or_null<FloatAttr>(a))
    return f.getValueAsDouble();
  if (auto i = dyn_cast_or_null<IntegerAttr>(a))
    return double(i.getInt());
  return std::nullopt;
}

/// The params no weight decay applies to by default: rank-1 slices and
/// tables read by bmb.embedding (and a tune job's bmb.soft_embedding: the
/// token table and the soft tokens' rows).
llvm::StringSet<> defaultNoDecay(ModelOp model) {
  llvm::StringSet<> names;
  for (ParamOp p : model.getParams())
    if (p.getSliceType().getRank() == 1)
      names.insert(p.getSymName());
  auto table = [&](Value v) {
    if (auto get = v.getDefiningOp<ParamGetOp>())
      names.insert(get.getParam());
  };
  model.walk([&](EmbeddingOp e) { table(e.getWeight()); });
  model.walk([&](SoftEmbeddingOp e) {
    table(e.getWeight());
    table(e.getSoft());
  });
  return names;
}

struct InsertOptimizerPass
    : mlir::bmb::impl::InsertOptimizerPassBase<InsertOptimizerPass> {
  void runOnOperation() override {
    if (failed(forEachTrainJob(getOperation(),
                               [&](JobOp job, ModelOp model) { return insert(job, model); })))
      signalPassFailure();
  }

  LogicalResult insert(JobOp job, ModelOp model) {
    if (model.lookupSymbol("optimizer_step"))
      return job.emitError("bmb-insert-optimizer: model @")
             << model.getSymName() << " already has an @optimizer_step";
    DictionaryAttr settings = job.getSettings();
    auto opt = settings.getAs<DictionaryAttr>("optimizer");
    StringRef kind = "adamw";
    if (opt)
      if (auto k = opt.getAs<StringAttr>("kind"))
        kind = k.getValue();
    if (kind != "adamw" && kind != "adam" && kind != "sgd")
      return job.emitError("bmb-insert-optimizer: optimizer '")
             << kind << "' is not implemented (adamw, adam, sgd are)";

    // The no-decay set: the job's globs, or the default grouping.
    auto patterns = opt ? opt.getAs<ArrayAttr>("no_decay") : ArrayAttr();
    llvm::StringSet<> byDefault = defaultNoDecay(model);
    auto noDecay = [&](StringRef name) {
      if (!patterns)
        return byDefault.contains(name);
      return llvm::any_of(patterns, [&](Attribute p) {
        auto s = dyn_cast<StringAttr>(p);
        return s && globMatch(s.getValue(), name);
      });
    };

    OpBuilder b(model.getContext());
    b.setInsertionPointToEnd(&model.getBody().front());
    Location loc = job.getLoc();
    auto func = b.create<func::FuncOp>(loc, "optimizer_step",
                                       b.getFunctionType({}, {}));
    b.setInsertionPointToEnd(func.addEntryBlock());
    if (std::optional<double> clip = getReal(settings, "clip"))
      b.create<ClipGradNormOp>(loc, b.getF64FloatAttr(*clip));

    double beta1 = 0.9, beta2 = 0.999;
    if (auto betas = opt ? opt.getAs<ArrayAttr>("betas") : ArrayAttr()) {
      auto b1 = betas.size() == 2 ? dyn_cast<FloatAttr>(betas[0]) : nullptr;
      auto b2 = betas.size() == 2 ? dyn_cast<FloatAttr>(betas[1]) : nullptr;
      if (!b1 || !b2)
        return job.emitError("bmb-insert-optimizer: betas must be two reals");
      beta1 = b1.getValueAsDouble();
      beta2 = b2.getValueAsDouble();
    }
    double eps = getReal(opt, "eps").value_or(1e-8);
    double decay = getReal(opt, "weight_decay")
                       .value_or(kind == "adamw" ? 0.01 : 0.0);
    double momentum = getReal(opt, "momentum").value_or(0.0);

    for (ParamOp p : model.getParams()) {
      if (!p.isTrainable())
        continue;
      auto name = FlatSymbolRefAttr::get(p.getSymNameAttr());
      double wd = noDecay(p.getSymName()) ? 0.0 : decay;
      if (kind == "sgd")
        b.create<SGDUpdateOp>(loc, name, b.getF64FloatAttr(momentum),
                              b.getF64FloatAttr(wd));
      else
        b.create<AdamWUpdateOp>(loc, name, b.getF64FloatAttr(beta1),
                                b.getF64FloatAttr(beta2),
                                b.getF64FloatAttr(eps), b.getF64FloatAttr(wd));
    }
    b.create<func::ReturnOp>(loc);
    return success();
  }
};

} // namespace
