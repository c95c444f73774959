//===- LowerPrompts.cpp - A tune job's prompt as an explicit plan ---------===//
//
// bmb-lower-prompts (docs/passes.md). A tune job's `prompt = T -> V` names a
// bmb.template and a bmb.verbalizer by string. This pass reads them once,
// checks them against the job (the fields its data declares, its seq), and
// writes what the tune program and the runtime's input assembly
// (runtime/prompt) consume as one printable attribute on the job,
// `bmb.prompt`:
//
//   segments  [{kind = "field", name = "text_a", space = false, shortenable = true},
//              {kind = "text", text = " It was"}, {kind = "mask", space = true}, ...]
//   masks     number of {mask} slots
//   soft      the init word of each soft token ("" = random), in order
//   truncate  head | tail | balanced (the job's `truncate`, default tail)
//   max_len   the job's seq
//   labels    the classes (every mask's verbalizer lists the same ones)
//   verbalizers  one per {mask}: {name, words, reduce, soft, calibrate}
//
// Soft tokens become a trainable parameter @prompt.soft : [n_soft, dim] of
// the model (dim = the token embedding's width), which the token embedding
// reads for ids vocab + k (bmb.soft_embedding); a soft verbalizer,
// @prompt.labels : [n_labels, dim]. Modules without a tune job are unchanged.
//
//===----------------------------------------------------------------------===//

#include "dialects/Bmb/BmbOps.h"
#include "dialects/Bmb/TemplateRules.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::bmb {
#define GEN_PASS_DEF_LOWERPROMPTSPASS
#include "passes/Passes.h.inc"
} // namespace mlir::bmb

using namespace mlir;
using namespace mlir::bmb;
namespace tpl = ::bmb::templates;

namespace {

/// The type of the model's token embedding table: the first bmb.embedding
/// in @forward. Soft tokens are rows of its width and element type (f64 in
/// a precision = fp64 program).
RankedTensorType embeddingTable(ModelOp model) {
  RankedTensorType table;
  model.walk([&](EmbeddingOp e) {
    if (!table)
      table = cast<RankedTensorType>(e.getWeight().getType());
  });
  return table;
}

/// The input fields a data config declares: tsv names them (text_a = 0,
/// text_b = 1); jsonl lines may hold any field (nullopt: not checkable).
std::optional<SmallVector<StringRef>> declaredFields(DictionaryAttr data) {
  auto kind = data.getAs<StringAttr>("kind");
  if (!kind || kind.getValue() != "tsv")
    return std::nullopt;
  SmallVector<StringRef> fields;
  for (StringRef f : {"text_a", "text_b"})
    if (data.get(f))
      fields.push_back(f);
  return fields;
}

/// Soft token k is id vocab + k: the token embedding (the bmb.embedding
/// whose ids are @forward's `tokens`, followed through layer boundaries)
/// becomes a bmb.soft_embedding that reads @prompt.soft for those ids.
/// Anything else that reads the tokens would see ids past the vocabulary:
/// an error naming it.
LogicalResult readSoftTokens(JobOp job, ModelOp model) {
  auto forward = model.lookupSymbol<func::FuncOp>("forward");
  if (!forward || forward.getNumArguments() == 0)
    return job.emitError("bmb-lower-prompts: soft tokens need the token ids input of model @")
           << model.getSymName() << "'s @forward";
  unsigned tokensIndex = 0;
  for (unsigned i = 0; i < forward.getNumArguments(); ++i)
    if (auto n = forward.getArgAttrOfType<StringAttr>(i, "bmb.name"); n && n.getValue() == "tokens")
      tokensIndex = i;
  auto soft = model.lookupSymbol<ParamOp>("prompt.soft");
  SmallVector<Value> worklist{forward.getArgument(tokensIndex)};
  int64_t rewritten = 0;
  while (!worklist.empty()) {
    Value tokens = worklist.pop_back_val();
    for (OpOperand &use : llvm::make_early_inc_range(tokens.getUses())) {
      Operation *user = use.getOwner();
      if (auto layer = dyn_cast<LayerOp>(user)) {
        worklist.push_back(layer.getBodyBlock()->getArgument(use.getOperandNumber()));
        continue;
      }
      auto e = dyn_cast<EmbeddingOp>(user);
      if (!e || e.getIds() != tokens) {
        InFlightDiagnostic d = job.emitError("bmb-lower-prompts: tune job @")
                               << job.getSymName() << " has soft tokens (ids >= vocab), which only "
                               << "the token embedding may read, but '" << user->getName()
                               << "' reads the token ids too";
        d.attachNote(user->getLoc()) << "the op reading the token ids";
        return d;
      }
      OpBuilder b(e);
      Value table = b.create<ParamGetOp>(e.getLoc(), soft, ValueRange{});
      auto r = b.create<SoftEmbeddingOp>(e.getLoc(), e.getResult().getType(), e.getIds(),
                                         e.getWeight(), table);
      e.getResult().replaceAllUsesWith(r.getResult());
      e.erase();
      ++rewritten;
    }
  }
  if (rewritten == 0)
    return job.emitError("bmb-lower-prompts: tune job @")
           << job.getSymName() << " has soft tokens, but no bmb.embedding of model @"
           << model.getSymName() << " reads its token ids";
  return success();
}

struct LowerPromptsPass : mlir::bmb::impl::LowerPromptsPassBase<LowerPromptsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (JobOp job : llvm::make_early_inc_range(module.getOps<JobOp>()))
      if (job.getKind() == JobKind::Tune && failed(lower(module, job)))
        return signalPassFailure();
  }

  LogicalResult lower(ModuleOp module, JobOp job) {
    DictionaryAttr settings = job.getSettings();
    auto prompt = settings.getAs<DictionaryAttr>("prompt");
    if (!prompt)
      return job.emitError("bmb-lower-prompts: tune job @")
             << job.getSymName() << " has no prompt (write prompt = TEMPLATE -> VERBALIZER)";
    auto tname = prompt.getAs<StringAttr>("template");
    auto tmpl = tname ? module.lookupSymbol<TemplateOp>(tname) : TemplateOp();
    // `T -> V` names one verbalizer, `T -> [V1, V2]` one per mask.
    SmallVector<VerbalizerOp> verbs;
    SmallVector<Attribute> vnames;
    if (auto one = prompt.getAs<StringAttr>("verbalizer"))
      vnames.push_back(one);
    else if (auto list = prompt.getAs<ArrayAttr>("verbalizers"))
      vnames.append(list.begin(), list.end());
    for (Attribute n : vnames) {
      auto s = dyn_cast<StringAttr>(n);
      verbs.push_back(s ? module.lookupSymbol<VerbalizerOp>(s) : VerbalizerOp());
    }
    if (!tmpl || verbs.empty() || llvm::is_contained(verbs, VerbalizerOp()))
      return job.emitError("bmb-lower-prompts: the prompt of tune job @")
             << job.getSymName() << " names no bmb.template and bmb.verbalizer";
    VerbalizerOp verb = verbs.front();
    auto err = [&]() {
      return job.emitError("bmb-lower-prompts: tune job @") << job.getSymName() << ": ";
    };

    tpl::Plan plan = tpl::plan(tmpl.getText());
    if (!plan.error.empty())
      return err() << "template '" << tmpl.getSymName() << "': " << plan.error;

    // The fields must exist in the data.
    std::optional<SmallVector<StringRef>> fields;
    StringRef dataKind;
    if (auto data = settings.getAs<DictionaryAttr>("data")) {
      fields = declaredFields(data);
      if (auto k = data.getAs<StringAttr>("kind"))
        dataKind = k.getValue();
      if (dataKind != "tsv" && dataKind != "jsonl")
        return err() << "a prompt fills its template from the fields of each example, but "
                     << dataKind << " data has none (use tsv(...) or jsonl(...))";
    }
    OpBuilder b(module.getContext());
    SmallVector<Attribute> segments, softInit;
    int64_t masks = 0;
    for (const tpl::Segment &s : plan.segments) {
      SmallVector<NamedAttribute> a{b.getNamedAttr("kind", b.getStringAttr(tpl::kindName(s.kind)))};
      switch (s.kind) {
      case tpl::Segment::Kind::Text:
        a.push_back(b.getNamedAttr("text", b.getStringAttr(s.text)));
        break;
      case tpl::Segment::Kind::Field:
      case tpl::Segment::Kind::Meta:
        if (fields && s.kind == tpl::Segment::Kind::Meta)
          return err() << "template '" << tmpl.getSymName() << "' reads {meta: " << s.text
                       << "}, but " << dataKind << " data has only text_a, text_b and label "
                       << "columns (named fields need jsonl data)";
        if (fields && !llvm::is_contained(*fields, s.text))
          return err() << "template '" << tmpl.getSymName() << "' reads {" << s.text
                       << "}, but the job's " << dataKind << " data declares no " << s.text
                       << " column (write data = " << dataKind << "(..., " << s.text << " = N))";
        a.push_back(b.getNamedAttr("name", b.getStringAttr(s.text)));
        a.push_back(b.getNamedAttr("shortenable", b.getBoolAttr(s.shortenable)));
        a.push_back(b.getNamedAttr("space", b.getBoolAttr(s.space)));
        break;
      case tpl::Segment::Kind::Mask:
        ++masks;
        a.push_back(b.getNamedAttr("space", b.getBoolAttr(s.space)));
        break;
      case tpl::Segment::Kind::Soft:
        a.push_back(b.getNamedAttr("index", b.getI64IntegerAttr(softInit.size())));
        a.push_back(b.getNamedAttr("init", b.getStringAttr(s.text)));
        a.push_back(b.getNamedAttr("space", b.getBoolAttr(s.space)));
        softInit.push_back(b.getStringAttr(s.text));
        break;
      }
      segments.push_back(b.getDictionaryAttr(a));
    }
    if (masks == 0)
      return err() << "template '" << tmpl.getSymName()
                   << "' has no {mask}: the verbalizer reads the label words' scores there";
    if (masks != static_cast<int64_t>(verbs.size()))
      return err() << "template '" << tmpl.getSymName() << "' has " << masks << " {mask}"
                   << (masks > 1 ? "s" : "") << " but the prompt names " << verbs.size()
                   << " verbalizer" << (verbs.size() > 1 ? "s" : "")
                   << " (write prompt = " << tmpl.getSymName() << " -> [V1, V2, ...], one per mask)";
    // Every mask scores the same classes: the class's score is the sum over
    // the masks of its log-probability under that mask's verbalizer.
    for (VerbalizerOp v : verbs)
      if (v.getLabels() != verb.getLabels())
        return err() << "verbalizer '" << v.getSymName() << "' must list the labels of '"
                     << verb.getSymName() << "' in the same order: every mask scores the same "
                     << "classes";
    if (verbs.size() > 1 && llvm::any_of(verbs, [](VerbalizerOp v) { return v.getSoft(); }))
      return err() << "a soft verbalizer with several masks is not implemented yet";

    // The data's label set, if it declares one, and the verbalizer's must match.
    if (auto data = settings.getAs<DictionaryAttr>("data")) {
      SmallVector<StringRef> dataLabels;
      if (auto one = data.getAs<StringAttr>("labels"))
        dataLabels.push_back(one.getValue());
      else if (auto list = data.getAs<ArrayAttr>("labels"))
        for (Attribute l : list)
          if (auto s = dyn_cast<StringAttr>(l))
            dataLabels.push_back(s.getValue());
      if (!dataLabels.empty()) {
        auto verbLabels = verb.getLabels().getAsValueRange<StringAttr>();
        for (StringRef l : verbLabels)
          if (!llvm::is_contained(dataLabels, l))
            return err() << "verbalizer '" << verb.getSymName() << "' has label '" << l
                         << "', which is not among the data's labels";
        for (StringRef l : dataLabels)
          if (!llvm::is_contained(verbLabels, l))
            return err() << "the data's label '" << l << "' has no label words in verbalizer '"
                         << verb.getSymName() << "'";
      }
    }

    auto seq = settings.getAs<IntegerAttr>("seq");
    auto truncate = settings.getAs<StringAttr>("truncate");
    auto model = module.lookupSymbol<ModelOp>(job.getModelAttr());
    bool softVerbalizer = verb.getSoft();
    if (!softInit.empty() || softVerbalizer) {
      RankedTensorType table = model ? embeddingTable(model) : RankedTensorType();
      if (!table)
        return err() << "soft tokens and soft verbalizers are rows of the token embedding, "
                        "but model @" << job.getModel() << " has no bmb.embedding";
      auto addParam = [&](StringRef name, int64_t rows) -> LogicalResult {
        if (model.lookupSymbol(name))
          return err() << "model @" << job.getModel() << " already has a parameter @" << name;
        OpBuilder mb = OpBuilder::atBlockBegin(&model.getBody().front());
        auto p = mb.create<ParamOp>(job.getLoc(), name,
                                    RankedTensorType::get({rows, table.getShape().back()},
                                                          table.getElementType()),
                                    InitAttr::get(mb.getContext(), InitKind::Normal, 0.02),
                                    false, 0);
        // Like a delta's: a backbone checkpoint lacks it (ParamInfo::delta),
        // and the delta checkpoint holds it.
        p->setAttr("bmb.delta", mb.getUnitAttr());
        return success();
      };
      if (!softInit.empty() && failed(addParam("prompt.soft", softInit.size())))
        return failure();
      if (!softInit.empty() && failed(readSoftTokens(job, model)))
        return failure();
      if (softVerbalizer && failed(addParam("prompt.labels", verb.getLabels().size())))
        return failure();
    }

    SmallVector<Attribute> perMask;
    for (VerbalizerOp v : verbs)
      perMask.push_back(b.getDictionaryAttr(
          {b.getNamedAttr("name", b.getStringAttr(v.getSymName())),
           b.getNamedAttr("words", v.getWords()), b.getNamedAttr("reduce", v.getReduceAttr()),
           b.getNamedAttr("soft", b.getBoolAttr(v.getSoft())),
           b.getNamedAttr("calibrate", b.getBoolAttr(v.getCalibrate()))}));
    SmallVector<NamedAttribute> out{
        b.getNamedAttr("template", b.getStringAttr(tmpl.getSymName())),
        b.getNamedAttr("segments", b.getArrayAttr(segments)),
        b.getNamedAttr("masks", b.getI64IntegerAttr(masks)),
        b.getNamedAttr("soft", b.getArrayAttr(softInit)),
        b.getNamedAttr("truncate", truncate ? truncate : b.getStringAttr("tail")),
        b.getNamedAttr("labels", verb.getLabels()),
        b.getNamedAttr("verbalizers", b.getArrayAttr(perMask))};
    if (seq)
      out.push_back(b.getNamedAttr("max_len", seq));
    job->setAttr("bmb.prompt", b.getDictionaryAttr(out));
    return success();
  }
};

} // namespace
