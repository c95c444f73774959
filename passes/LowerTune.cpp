//===- LowerTune.cpp - The prompt-tuning ops of a tune job's program ------===//
//
// The tune half of bmb-lower-to-exec's train mode (docs/training-ir.md,
// "Tune jobs"): a tune job's entries are lowered like a train job's, plus
//  - bmb.soft_embedding (and its gradient) -> bmb_exec.soft_embedding(_grad);
//  - bmb.gather_rows (and its gradient) -> bmb_exec.gather_rows(_grad);
//  - bmb.verbalizer_loss -> the head's GEMM on the B*M mask rows into a
//    logits buffer, then one bmb_exec.verbalizer_loss kernel writing the
//    per-example losses, the scores, the word probabilities and (in
//    forward_backward) the dlogits over the logits, scaled by
//    StepArgs::dlossScale;
// and the program's `tune` attribute, the runtime's TuneInfo.
//
//===----------------------------------------------------------------------===//
#include "passes/EntryLowering.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::bmb;

LogicalResult EntryLowering::lowerTuneOp(Operation *op, bool &handled) {
  handled = true;
  Location loc = op->getLoc();
  auto gradOut = [&](Value res) { return gradientOutput(loc, res); };
  if (auto e = dyn_cast<SoftEmbeddingOp>(op)) {
    Value out = alloc(loc, e.getResult().getType());
    b.create<ex::SoftEmbeddingOp>(loc, lookup(e.getIds()), lookup(e.getWeight()),
                                  lookup(e.getSoft()), out);
    if (e.getIds() == tokensArg && !vocab)
      vocab = cast<RankedTensorType>(e.getWeight().getType()).getDimSize(0);
    buffers[e.getResult()] = out;
    return success();
  }
  if (auto g = dyn_cast<SoftEmbeddingGradOp>(op)) {
    Value dtable = gradOut(g.getDweight()), dsoft = gradOut(g.getDsoft());
    if (!dtable && !dsoft)
      return success();
    int64_t num = cast<RankedTensorType>(g.getDweight().getType()).getDimSize(0);
    b.create<ex::SoftEmbeddingGradOp>(loc, lookup(g.getGrad()), lookup(g.getIds()), dtable, dsoft,
                                      b.getI64IntegerAttr(num));
    return success();
  }
  if (auto g = dyn_cast<GatherRowsOp>(op)) {
    Value out = alloc(loc, g.getResult().getType());
    b.create<ex::GatherRowsOp>(loc, lookup(g.getInput()), lookup(g.getPositions()), out);
    buffers[g.getResult()] = out;
    return success();
  }
  if (auto g = dyn_cast<GatherRowsGradOp>(op)) {
    Value dx = zeroed(loc, g.getResult().getType());
    b.create<ex::GatherRowsGradOp>(loc, lookup(g.getGrad()), lookup(g.getPositions()), dx);
    buffers[g.getResult()] = dx;
    return success();
  }
  if (auto v = dyn_cast<VerbalizerLossOp>(op)) {
    if (lossBuffer)
      return v.emitError("a train program has one loss");
    // logits [B*M, V] = rows . W^T (+ b): only the mask rows reach the head.
    Value logits = alloc(loc, v.getDlogits().getType());
    b.create<ex::GemmOp>(loc, lookup(v.getInput()), lookup(v.getWeight()),
                         v.getBias() ? lookup(v.getBias()) : Value(), Value(), logits, Value(),
                         b.getBoolAttr(true), b.getStringAttr("none"));
    int64_t examples = cast<RankedTensorType>(v.getLabels().getType()).getDimSize(0);
    Type elem = cast<MemRefType>(logits.getType()).getElementType();
    lossBuffer = b.create<ex::AllocOp>(loc, MemRefType::get({examples}, elem), IntegerAttr());
    Value scoresBuffer = alloc(loc, v.getScores().getType());
    Value wordProbsBuffer = alloc(loc, v.getWordProbs().getType());
    Value scale = backward ? stepArg(loc, "dloss_scale") : Value();
    b.create<ex::VerbalizerLossOp>(loc, logits, lookup(v.getLabels()), lookup(v.getLabelWords()),
                                   lookup(v.getCalibration()), lossBuffer, scoresBuffer,
                                   wordProbsBuffer, backward ? logits : Value(), scale,
                                   v.getReduceAttr(), v.getIgnoreIndexAttr());
    buffers[v.getLoss()] = lossBuffer;
    buffers[v.getDlogits()] = logits;
    buffers[v.getScores()] = scoresBuffer;
    buffers[v.getWordProbs()] = wordProbsBuffer;
    return success();
  }
  handled = false;
  return success();
}

namespace {

void writeJsonString(llvm::raw_ostream &os, StringRef s) {
  os << '"';
  for (unsigned char c : s) {
    if (c == '"' || c == '\\')
      os << '\\' << c;
    else if (c < 0x20)
      os << llvm::format("\\u%04x", c);
    else
      os << c;
  }
  os << '"';
}

/// A settings attribute as JSON (the shapes the runtime's readers take:
/// bmb-prompt's plan, tune_data's config).
void writeJson(llvm::raw_ostream &os, Attribute a) {
  if (auto d = dyn_cast<DictionaryAttr>(a)) {
    os << '{';
    llvm::interleave(
        d.getValue(), os,
        [&](NamedAttribute n) {
          writeJsonString(os, n.getName().getValue());
          os << ": ";
          writeJson(os, n.getValue());
        },
        ", ");
    os << '}';
  } else if (auto arr = dyn_cast<ArrayAttr>(a)) {
    os << '[';
    llvm::interleave(arr, os, [&](Attribute x) { writeJson(os, x); }, ", ");
    os << ']';
  } else if (auto s = dyn_cast<StringAttr>(a)) {
    writeJsonString(os, s.getValue());
  } else if (auto b = dyn_cast<BoolAttr>(a)) {
    os << (b.getValue() ? "true" : "false");
  } else if (auto i = dyn_cast<IntegerAttr>(a)) {
    os << i.getInt();
  } else if (auto f = dyn_cast<FloatAttr>(a)) {
    os << llvm::formatv("{0:e}", f.getValueAsDouble()).str();
  } else {
    os << "null";
  }
}

std::string toJson(Attribute a) {
  std::string s;
  llvm::raw_string_ostream os(s);
  writeJson(os, a);
  return s;
}

/// The param a value reads (a bmb.param_get's), or "".
StringRef paramOf(Value v) {
  auto g = v ? v.getDefiningOp<ParamGetOp>() : ParamGetOp();
  return g ? g.getParam() : StringRef();
}

} // namespace

LogicalResult mlir::bmb::recordTune(JobOp job, ModelOp model, ex::ProgramOp program,
                                    func::FuncOp loss) {
  auto plan = job->getAttrOfType<DictionaryAttr>("bmb.prompt");
  auto shape = job->getAttrOfType<DictionaryAttr>("bmb.tune");
  if (!plan || !shape)
    return job.emitError("a tune job is lowered from its bmb.prompt plan and the bmb.tune "
                         "attribute of bmb-attach-loss: run bmb-tune-pipeline");
  // The token embedding: the (soft) embedding whose ids are the tokens input.
  StringRef embedding;
  Value tokens = loss.getNumArguments() ? loss.getArgument(0) : Value();
  loss.walk([&](Operation *op) {
    if (auto e = dyn_cast<SoftEmbeddingOp>(op); e && e.getIds() == tokens && embedding.empty())
      embedding = paramOf(e.getWeight());
    if (auto e = dyn_cast<EmbeddingOp>(op); e && e.getIds() == tokens && embedding.empty())
      embedding = paramOf(e.getWeight());
  });
  // fp16 needs the train executable's dynamic loss scaling, which the tune
  // executable does not run (bf16 needs none).
  if (auto p = job.getSettings().getAs<StringAttr>("precision"); p && p.getValue() == "fp16")
    return emitError(settingLoc(job, "precision"),
                     "precision = fp16 is not implemented yet for tune jobs (the tune executable "
                     "has no loss scaling); use bf16 or fp32");
  // One micro-batch per step: the tune executable does not accumulate.
  if (auto a = job.getSettings().getAs<IntegerAttr>("grad_accum"); a && a.getInt() > 1)
    return emitError(settingLoc(job, "grad_accum"),
                     "grad_accum is not implemented yet for tune jobs (one batch per step); "
                     "raise batch instead");
  auto soft = model.lookupSymbol<ParamOp>("prompt.soft");
  auto labels = model.lookupSymbol<ParamOp>("prompt.labels");
  // A manual verbalizer scores with the head's rows; a soft one starts from
  // the rows of `label_init` (the head's weight, or a headless encoder's
  // token embedding).
  auto head = shape.getAs<StringAttr>("head");
  auto labelInit = shape.getAs<StringAttr>("label_init");
  if (!labels && (!head || head.getValue().empty()))
    return job.emitError("the vocabulary head's weight of a tune job must be a parameter (its "
                         "rows score the label words)");
  if (labels && (!labelInit || labelInit.getValue().empty()))
    return job.emitError("the rows a soft verbalizer starts from (the vocabulary head's weight, "
                         "or a headless encoder's token embedding) must be a parameter");
  auto dim = [&](StringRef key) {
    auto a = shape.getAs<IntegerAttr>(key);
    return a ? a.getInt() : 0;
  };
  auto data = job.getSettings().get("data");
  OpBuilder b(program.getContext());
  auto str = [&](StringRef s) { return b.getStringAttr(s); };
  auto num = [&](int64_t v) { return b.getI64IntegerAttr(v); };
  program->setAttr(
      "tune",
      b.getDictionaryAttr({
          b.getNamedAttr("prompt", str(toJson(plan))),
          b.getNamedAttr("data", str(data ? toJson(data) : "")),
          b.getNamedAttr("num_masks", num(dim("masks"))),
          b.getNamedAttr("num_labels", num(dim("labels"))),
          b.getNamedAttr("max_words", num(dim("words"))),
          b.getNamedAttr("max_word_tokens", num(dim("word_tokens"))),
          b.getNamedAttr("num_soft",
                         num(soft ? cast<RankedTensorType>(soft.getType()).getDimSize(0) : 0)),
          b.getNamedAttr("soft_param", str(soft ? "prompt.soft" : "")),
          b.getNamedAttr("embedding_param", str(embedding)),
          b.getNamedAttr("label_param", str(labels ? "prompt.labels" : "")),
          b.getNamedAttr("head_param", head ? head : str("")),
          b.getNamedAttr("label_init_param", labels ? labelInit : str("")),
      }));
  return success();
}
