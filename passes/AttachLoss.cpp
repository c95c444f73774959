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
// never stored.
//
//===----------------------------------------------------------------------===//

#include "dialects/Bmb/BmbOps.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

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

struct AttachLossPass : mlir::bmb::impl::AttachLossPassBase<AttachLossPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<JobOp> jobs;
    for (JobOp job : module.getOps<JobOp>())
      if (job.getKind() == JobKind::Train)
        jobs.push_back(job);
    if (jobs.empty())
      return;
    if (jobs.size() > 1) {
      jobs[1].emitError("bmb-attach-loss: one train job per module, but @")
          << jobs[0].getSymName() << " is one too";
      return signalPassFailure();
    }
    JobOp job = jobs.front();
    auto model = SymbolTable::lookupNearestSymbolFrom<ModelOp>(
        job, job.getModelAttr());
    auto forward = model ? model.lookupSymbol<func::FuncOp>("forward")
                         : func::FuncOp();
    if (!forward) {
      job.emitError("bmb-attach-loss: model of train job @")
          << job.getSymName() << " has no func @forward";
      return signalPassFailure();
    }
    if (model.lookupSymbol("loss")) {
      job.emitError("bmb-attach-loss: model @")
          << model.getSymName() << " already has a @loss";
      return signalPassFailure();
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
