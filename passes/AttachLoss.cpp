//===- AttachLoss.cpp - The train job's loss function ---------------------===//
//
// bmb-attach-loss (docs/training-ir.md, section 1). The job's objective is
// next-token prediction (causal_lm, the default: the runtime fills `targets`
// with the shifted tokens) or masked-LM (masked_lm: the runtime masks the
// tokens and fills `targets` with the originals at the masked positions,
// -100 elsewhere). Either way the loss function is the forward with a
// `targets` input and a cross-entropy at the end. A bias-free lm_head or Linear layer at the end
// of the forward and the loss become one bmb.fused_classifier (DESIGN decision 4): the backward
// then starts from its dlogits and the [B, T, vocab] probabilities are
// never stored. A tune job's loss (buildTuneLoss) is the prompt's: the
// verbalizer's class cross-entropy on the rows at the {mask} positions.
//
//===----------------------------------------------------------------------===//

#include "dialects/Bmb/BmbOps.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <optional>

namespace mlir::bmb {
#define GEN_PASS_DEF_ATTACHLOSSPASS
#include "passes/Passes.h.inc"
} // namespace mlir::bmb

using namespace mlir;
using namespace mlir::bmb;

namespace {

constexpr int64_t kIgnoreIndex = -100;

/// Whether @forward is a causal LM: one i32 [B, T] input, one float
/// [B, T, vocab] result. Otherwise reports at the job.
LogicalResult checkCausalLM(JobOp job, func::FuncOp forward) {
  FunctionType type = forward.getFunctionType();
  auto fail = [&](const Twine &what) {
    return job.emitError("bmb-attach-loss: train job @")
           << job.getSymName() << " needs a causal LM, whose @forward maps one "
           << "i32 [B, T] input to [B, T, vocab] logits, but " << what
           << " (an encoder trains with objective = masked_lm(...); "
              "classification objectives are not implemented yet)";
  };
  if (type.getNumInputs() != 1 || type.getNumResults() != 1)
    return fail("@forward has " + Twine(type.getNumInputs()) + " inputs and " +
                Twine(type.getNumResults()) + " results");
  auto tokens = dyn_cast<RankedTensorType>(type.getInput(0));
  if (!tokens || tokens.getRank() != 2 ||
      !tokens.getElementType().isSignlessInteger(32))
    return fail("its input is not an i32 [B, T] tensor");
  auto logits = dyn_cast<RankedTensorType>(type.getResult(0));
  if (!logits || logits.getRank() != 3 ||
      !isa<FloatType>(logits.getElementType()) ||
      logits.getShape().take_front(2) != tokens.getShape())
    return fail("its result is not [B, T, vocab] float logits for its [B, T] "
                "input");
  return success();
}

/// Whether @forward is a masked LM: i32 [B, T] inputs `tokens` (first) and
/// optionally `token_types` and `mask` (the runtime fills them: zeros, and
/// ones since training windows have no padding), one float [B, T, vocab]
/// result, and no causal attention (the model must see both sides of a
/// masked token). Otherwise reports at the job.
LogicalResult checkMaskedLM(JobOp job, func::FuncOp forward) {
  FunctionType type = forward.getFunctionType();
  auto fail = [&](const Twine &what) {
    return job.emitError("bmb-attach-loss: train job @")
           << job.getSymName() << " has objective masked_lm, whose @forward "
           << "maps i32 [B, T] tokens (and token_types, mask) to [B, T, vocab] "
              "logits of a bidirectional encoder, but "
           << what;
  };
  if (type.getNumInputs() < 1 || type.getNumResults() != 1)
    return fail("@forward has " + Twine(type.getNumInputs()) + " inputs and " +
                Twine(type.getNumResults()) + " results");
  auto tokens = dyn_cast<RankedTensorType>(type.getInput(0));
  if (!tokens || tokens.getRank() != 2 ||
      !tokens.getElementType().isSignlessInteger(32))
    return fail("its first input is not an i32 [B, T] tensor");
  for (unsigned i = 1; i < type.getNumInputs(); ++i) {
    auto name = forward.getArgAttrOfType<StringAttr>(i, "bmb.name");
    if (!name || !llvm::is_contained({"token_types", "mask"}, name.getValue()) ||
        type.getInput(i) != tokens)
      return fail("its input " + Twine(i) + " (" +
                  (name ? name.getValue() : StringRef("unnamed")) +
                  ") is not i32 [B, T] `token_types` or `mask`");
  }
  auto logits = dyn_cast<RankedTensorType>(type.getResult(0));
  if (!logits || logits.getRank() != 3 ||
      !isa<FloatType>(logits.getElementType()) ||
      logits.getShape().take_front(2) != tokens.getShape())
    return fail("its result is not [B, T, vocab] float logits");
  bool causal = false;
  forward.walk([&](AttentionOp a) { causal |= a.getCausal(); });
  if (causal)
    return fail("its attention is causal (train it with objective = "
                "causal_lm)");
  return success();
}

/// The job's objective: causal_lm (the default) or masked_lm, checked
/// against @forward.
FailureOr<StringRef> checkObjective(JobOp job, func::FuncOp forward) {
  auto objective = job.getSettings().getAs<DictionaryAttr>("objective");
  auto kind = objective ? objective.getAs<StringAttr>("kind") : StringAttr();
  StringRef k = kind ? kind.getValue() : "causal_lm";
  if (k == "causal_lm") {
    if (failed(checkCausalLM(job, forward)))
      return failure();
  } else if (k == "masked_lm") {
    if (!objective.get("mask_id"))
      return job.emitError("bmb-attach-loss: objective masked_lm of train job @")
             << job.getSymName()
             << " needs mask_id = N, the [MASK] token id (it is not read from "
                "a tokenizer yet)";
    if (failed(checkMaskedLM(job, forward)))
      return failure();
  } else {
    return job.emitError("bmb-attach-loss: unknown objective '")
           << k << "' of train job @" << job.getSymName()
           << " (causal_lm or masked_lm)";
  }
  return k;
}

/// The head the fused classifier takes over: its input, its weight (a value
/// of the loss's body, created at `b` when it lived in a layer) and the op
/// that computed the logits, erased once unused.
struct Head {
  Value input, weight;
  Operation *op = nullptr;
};

/// A bias-free bmb.lm_head at the end of the forward, or a `bmb.layer` whose
/// whole body is one bias-free bmb.linear of its input by an unstacked param
/// (Llama's untied `head = Linear(dim, vocab, bias = false)`): both are
/// x . w^T, the classifier's GEMM. A bias would need the classifier to add
/// it, so such heads keep bmb.cross_entropy.
std::optional<Head> fusableHead(OpBuilder &b, Value logits, Block &body) {
  Operation *op = logits.getDefiningOp();
  if (!op || op->getBlock() != &body)
    return std::nullopt;
  if (auto h = dyn_cast<LMHeadOp>(op)) {
    if (h.getBias())
      return std::nullopt;
    return Head{h.getInput(), h.getWeight(), op};
  }
  auto layer = dyn_cast<LayerOp>(op);
  if (!layer || layer.getBackward() || layer.getNumSaved() != 0 ||
      layer->getNumOperands() != 1 || layer->getNumResults() != 1)
    return std::nullopt;
  Block &inner = layer.getBody().front();
  auto yield = cast<YieldOp>(inner.getTerminator());
  auto linear = yield.getOperand(0).getDefiningOp<LinearOp>();
  if (!linear || linear.getBias() || linear.getInput() != inner.getArgument(0))
    return std::nullopt;
  auto param = linear.getWeight().getDefiningOp<ParamGetOp>();
  if (!param || !param.getIndices().empty())
    return std::nullopt;
  return Head{layer->getOperand(0), b.clone(*param)->getResult(0), op};
}

/// The vocabulary head at the end of a tune job's forward: a bmb.lm_head
/// (a bias allowed: BERT's MLM decoder has one) or a bmb.layer whose body is
/// one bmb.linear of its input by unstacked params. Its weight and bias are
/// values of the loss's body (cloned at `b` from the layer).
struct TuneHead {
  Value input, weight, bias;
  Operation *op = nullptr;
};

std::optional<TuneHead> tuneHead(OpBuilder &b, Value logits, Block &body) {
  Operation *op = logits.getDefiningOp();
  if (!op || op->getBlock() != &body)
    return std::nullopt;
  if (auto h = dyn_cast<LMHeadOp>(op))
    return TuneHead{h.getInput(), h.getWeight(), h.getBias(), op};
  auto layer = dyn_cast<LayerOp>(op);
  if (!layer || layer.getNumSaved() != 0 || layer->getNumOperands() != 1 ||
      layer->getNumResults() != 1)
    return std::nullopt;
  Block &inner = layer.getBody().front();
  auto linear = cast<YieldOp>(inner.getTerminator()).getOperand(0).getDefiningOp<LinearOp>();
  if (!linear || linear.getInput() != inner.getArgument(0))
    return std::nullopt;
  auto weight = linear.getWeight().getDefiningOp<ParamGetOp>();
  auto bias = linear.getBias() ? linear.getBias().getDefiningOp<ParamGetOp>() : ParamGetOp();
  if (!weight || !weight.getIndices().empty() || (linear.getBias() && !bias) ||
      (bias && !bias.getIndices().empty()))
    return std::nullopt;
  return TuneHead{layer->getOperand(0), b.clone(*weight)->getResult(0),
                  bias ? b.clone(*bias)->getResult(0) : Value(), op};
}

/// Tokens per label word in the label_words input (TuneInfo::maxWordTokens):
/// the tune app refuses a word that needs more.
constexpr int64_t kMaxWordTokens = 8;

/// The token embedding's table: the param read by the bmb.embedding (or
/// bmb.soft_embedding) whose ids are `tokens`, followed into layers. Null
/// if there is none.
ParamGetOp tokenEmbeddingTable(Value tokens) {
  SmallVector<Value> worklist{tokens};
  while (!worklist.empty()) {
    Value ids = worklist.pop_back_val();
    for (OpOperand &use : ids.getUses()) {
      Operation *user = use.getOwner();
      if (auto layer = dyn_cast<LayerOp>(user)) {
        worklist.push_back(layer.getBodyBlock()->getArgument(use.getOperandNumber()));
        continue;
      }
      Value table;
      if (auto e = dyn_cast<EmbeddingOp>(user); e && e.getIds() == ids)
        table = e.getWeight();
      if (auto e = dyn_cast<SoftEmbeddingOp>(user); e && e.getIds() == ids)
        table = e.getWeight();
      auto param = table ? table.getDefiningOp<ParamGetOp>() : ParamGetOp();
      if (param && param.getIndices().empty())
        return param;
    }
  }
  return ParamGetOp();
}

/// Erases the ops of `body` that nothing reads any more: what only fed the
/// results the loss dropped (BERT's pooler, a replaced head), so that the
/// backward pass and the plan never see them.
void eraseDeadOps(Block &body) {
  SmallVector<Operation *> ops;
  for (Operation &op : body.without_terminator())
    ops.push_back(&op);
  // Last first: erasing an op can only make earlier ones dead.
  for (Operation *op : llvm::reverse(ops))
    if (isOpTriviallyDead(op))
      op->erase();
}

/// A tune job's loss (docs/training-ir.md, "Tune jobs"): @forward's hidden
/// rows at the {mask} positions, the vocabulary head on those rows only,
/// and the verbalizer's class cross-entropy. A headless encoder (BERT's
/// BertModel: @forward's first result is the [B, T, D] hidden states) has
/// no vocabulary logits: only a soft verbalizer scores it.
LogicalResult buildTuneLoss(JobOp job, ModelOp model, func::FuncOp forward) {
  auto fail = [&]() {
    return job.emitError("bmb-attach-loss: tune job @") << job.getSymName() << ": ";
  };
  auto plan = job->getAttrOfType<DictionaryAttr>("bmb.prompt");
  if (!plan)
    return fail() << "no bmb.prompt plan (run bmb-lower-prompts first: bmb-tune-pipeline)";
  auto verbs = plan.getAs<ArrayAttr>("verbalizers");
  auto labelList = plan.getAs<ArrayAttr>("labels");
  int64_t M = verbs ? static_cast<int64_t>(verbs.size()) : 0;
  int64_t C = labelList ? static_cast<int64_t>(labelList.size()) : 0;
  if (M == 0 || C == 0)
    return fail() << "the prompt plan has no verbalizers or labels";
  int64_t W = 1;
  SmallVector<Attribute> reduce;
  OpBuilder b(forward);
  bool soft = false;
  StringRef manualName; // a manual verbalizer's, for the headless error
  for (Attribute a : verbs) {
    auto v = cast<DictionaryAttr>(a);
    auto flag = [&](StringRef key) {
      auto f = v.getAs<BoolAttr>(key);
      return f && f.getValue();
    };
    auto name = v.getAs<StringAttr>("name");
    if (flag("soft")) {
      // bmb-lower-prompts allows a soft verbalizer with one mask only.
      if (flag("calibrate"))
        return fail() << "the soft verbalizer '" << (name ? name.getValue() : "")
                      << "' has calibrate = true, but calibration divides label-word "
                         "probabilities and a soft verbalizer has none (remove calibrate)";
      soft = true;
    } else if (manualName.empty()) {
      manualName = name ? name.getValue() : StringRef("?");
    }
    auto red = v.getAs<StringAttr>("reduce");
    reduce.push_back(red ? red : b.getStringAttr("mean")); // the verbalizer's default
    if (auto words = v.getAs<ArrayAttr>("words"))
      for (Attribute perLabel : words)
        if (auto list = dyn_cast<ArrayAttr>(perLabel))
          W = std::max<int64_t>(W, list.size());
  }

  FunctionType type = forward.getFunctionType();
  auto tokens = type.getNumInputs() ? dyn_cast<RankedTensorType>(type.getInput(0)) : nullptr;
  auto firstType = type.getNumResults() ? dyn_cast<RankedTensorType>(type.getResult(0)) : nullptr;
  if (!tokens || tokens.getRank() != 2 || !firstType || firstType.getRank() != 3)
    return fail() << "a prompt is scored by a model whose @forward maps i32 [B, T] tokens to "
                     "[B, T, vocab] logits (or, for a soft verbalizer, first to [B, T, D] "
                     "hidden states), but @"
                  << model.getSymName() << "'s does not";
  int64_t B = tokens.getDimSize(0);

  b.setInsertionPointAfter(forward);
  auto loss = cast<func::FuncOp>(b.clone(*forward));
  loss.setSymName("loss");
  Block &body = loss.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  b.setInsertionPoint(ret);
  // Only the first result is scored; the others (BERT's pooled output) are
  // dropped with what computes them.
  std::optional<TuneHead> head = tuneHead(b, ret.getOperand(0), body);
  // Without a head, a first result as wide as the token embedding is the
  // encoder's hidden states (a vocabulary of the embedding's width would be
  // taken for one too: docs/tuning.md).
  ParamGetOp embedding = tokenEmbeddingTable(body.getArgument(0));
  bool headless = !head && embedding &&
                  firstType.getDimSize(2) ==
                      cast<RankedTensorType>(embedding.getType()).getDimSize(1);
  if (!head && !headless) {
    loss.erase();
    return fail() << "the logits of @" << model.getSymName()
                  << " must come from a vocabulary head (lm_head, or a Linear layer) at the end "
                     "of @forward: the verbalizer reads the head's rows of the label words";
  }
  if (headless && !manualName.empty()) {
    loss.erase();
    return fail() << "model @" << model.getSymName() << " has no vocabulary head (its @forward "
                  << "returns [B, T, " << firstType.getDimSize(2)
                  << "] hidden states first), so verbalizer '" << manualName
                  << "' has no label-word logits to read: a manual verbalizer needs a masked "
                     "or causal LM; give this encoder a soft verbalizer (soft = true), which "
                     "scores the classes from the {mask} row's hidden state";
  }
  // What the tune program's table needs that the IR no longer says after
  // lowering: the head's weight (its rows score the vocabulary), the table
  // whose rows start a soft verbalizer (the head's weight; a headless
  // encoder's token embedding) and the label words' shape (LowerTune.cpp,
  // TuneInfo).
  auto headParam = head ? head->weight.getDefiningOp<ParamGetOp>() : ParamGetOp();
  StringRef headName = headParam ? headParam.getParam() : StringRef();
  StringRef labelInit = !soft ? StringRef() : headless ? embedding.getParam() : headName;
  job->setAttr("bmb.tune", b.getDictionaryAttr({
                               b.getNamedAttr("head", b.getStringAttr(headName)),
                               b.getNamedAttr("label_init", b.getStringAttr(labelInit)),
                               b.getNamedAttr("masks", b.getI64IntegerAttr(M)),
                               b.getNamedAttr("labels", b.getI64IntegerAttr(C)),
                               b.getNamedAttr("words", b.getI64IntegerAttr(W)),
                               b.getNamedAttr("word_tokens", b.getI64IntegerAttr(kMaxWordTokens)),
                           }));
  Type i32 = b.getI32Type();
  auto addArg = [&](StringRef name, Type t) {
    unsigned i = loss.getNumArguments();
    (void)loss.insertArgument(i, t, b.getDictionaryAttr(b.getNamedAttr("bmb.name",
                                                                       b.getStringAttr(name))),
                              loss.getLoc());
    return body.getArgument(i);
  };
  Value maskPos = addArg("mask_pos", RankedTensorType::get({B, M}, i32));
  Value labels = addArg("labels", RankedTensorType::get({B}, i32));
  // The rows the classes are scored from: the head's input, or a headless
  // encoder's hidden states.
  Value hiddenStates = head ? head->input : ret.getOperand(0);
  auto hiddenType = cast<RankedTensorType>(hiddenStates.getType());
  Location loc = head ? head->op->getLoc() : ret.getLoc();
  auto finish = [&](ValueRange results) {
    ret->setOperands(results);
    eraseDeadOps(body);
    loss.setFunctionType(b.getFunctionType(body.getArgumentTypes(), ret.getOperandTypes()));
    return success();
  };
  if (soft) {
    // OpenPrompt's SoftVerbalizer: the head's last layer is replaced by a
    // trained [C, D] one (@prompt.labels, bias-free): scores = h_mask . L^T,
    // then the cross-entropy over the classes. A headless encoder's mask
    // row is its last hidden state there.
    auto labelsParam = model.lookupSymbol<ParamOp>("prompt.labels");
    if (!labelsParam) {
      loss.erase();
      return fail() << "a soft verbalizer reads @prompt.labels (run bmb-lower-prompts first)";
    }
    int64_t D = hiddenType.getDimSize(2);
    if (cast<RankedTensorType>(labelsParam.getType()).getDimSize(1) != D) {
      loss.erase();
      return fail() << "the soft verbalizer's rows (@prompt.labels, the token embedding's "
                       "width) must be as wide as the hidden states it scores ("
                    << D << ")";
    }
    Value rows = b.create<GatherRowsOp>(
        loc, RankedTensorType::get({B * M, D}, hiddenType.getElementType()), hiddenStates,
        maskPos);
    Value table = b.create<ParamGetOp>(loc, labelsParam, ValueRange{});
    Value scores = b.create<LinearOp>(loc, rows, table, Value());
    Value value = b.create<CrossEntropyOp>(loc, scores, labels, kIgnoreIndex);
    return finish({value, scores});
  }
  Type elem = cast<RankedTensorType>(head->weight.getType()).getElementType();
  Value words = addArg("label_words", RankedTensorType::get({M, C, W, kMaxWordTokens}, i32));
  Value calib = addArg("calibration", RankedTensorType::get({M, C, W}, elem));

  int64_t V = cast<RankedTensorType>(head->weight.getType()).getDimSize(0);
  Value rows = b.create<GatherRowsOp>(
      loc, RankedTensorType::get({B * M, hiddenType.getDimSize(2)}, hiddenType.getElementType()),
      hiddenStates, maskPos);
  Type lossElem = elem.isF64() ? elem : b.getF32Type();
  auto v = b.create<VerbalizerLossOp>(
      loc,
      TypeRange{RankedTensorType::get({}, lossElem), RankedTensorType::get({B * M, V}, elem),
                RankedTensorType::get({B, C}, elem), RankedTensorType::get({B, M, C, W}, elem)},
      rows, head->weight, labels, words, calib, head->bias, b.getArrayAttr(reduce),
      kIgnoreIndex);
  return finish({v.getLoss(), v.getScores(), v.getWordProbs()});
}

struct AttachLossPass : mlir::bmb::impl::AttachLossPassBase<AttachLossPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<JobOp> jobs;
    for (JobOp job : module.getOps<JobOp>())
      if (job.getKind() == JobKind::Train || job.getKind() == JobKind::Tune)
        jobs.push_back(job);
    if (jobs.empty())
      return;
    if (jobs.size() > 1) {
      jobs[1].emitError("bmb-attach-loss: one train or tune job per module, but @")
          << jobs[0].getSymName() << " is one too";
      return signalPassFailure();
    }
    JobOp job = jobs.front();
    auto model = SymbolTable::lookupNearestSymbolFrom<ModelOp>(
        job, job.getModelAttr());
    auto forward = model ? model.lookupSymbol<func::FuncOp>("forward")
                         : func::FuncOp();
    if (!forward) {
      job.emitError("bmb-attach-loss: model of job @")
          << job.getSymName() << " has no func @forward";
      return signalPassFailure();
    }
    if (model.lookupSymbol("loss")) {
      job.emitError("bmb-attach-loss: model @")
          << model.getSymName() << " already has a @loss";
      return signalPassFailure();
    }
    if (job.getKind() == JobKind::Tune) {
      if (failed(buildTuneLoss(job, model, forward)))
        return signalPassFailure();
      return;
    }
    if (failed(checkObjective(job, forward)))
      return signalPassFailure();
    buildLoss(forward);
  }

  /// Clones @forward into @loss(tokens, targets) and ends it in the loss.
  void buildLoss(func::FuncOp forward) {
    OpBuilder b(forward);
    b.setInsertionPointAfter(forward);
    auto loss = cast<func::FuncOp>(b.clone(*forward));
    loss.setSymName("loss");
    Block &body = loss.getBody().front();
    Type tokensType = body.getArgument(0).getType();
    (void)loss.insertArgument(
        1, tokensType,
        b.getDictionaryAttr(
            b.getNamedAttr("bmb.name", b.getStringAttr("targets"))),
        loss.getLoc());
    Value targets = body.getArgument(1);
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    Value logits = ret.getOperand(0);

    b.setInsertionPoint(ret);
    Value value;
    std::optional<Head> head = fusableHead(b, logits, body);
    if (head) {
      auto fused = b.create<FusedClassifierOp>(
          head->op->getLoc(), head->input, head->weight, targets, kIgnoreIndex);
      value = fused.getLoss();
    } else {
      value = b.create<CrossEntropyOp>(logits.getLoc(), logits, targets,
                                       kIgnoreIndex);
    }
    ret->setOperands(value);
    if (head && head->op->use_empty())
      head->op->erase();
    loss.setFunctionType(
        b.getFunctionType(body.getArgumentTypes(), value.getType()));
  }
};

} // namespace
