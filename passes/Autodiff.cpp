//===- Autodiff.cpp - Reverse-mode differentiation of @loss ---------------===//
//
// bmb-autodiff (docs/training-ir.md, section 2) clones @loss into
// @train_step and appends the reverse pass.
//
// The backward keeps the forward's structure: each forward bmb.layer gets a
// `backward` layer and each bmb.repeat a `reverse` repeat, written by a
// BackwardScope per forward block. The function's scope writes into the
// function's own block, after the forward, so every forward value is
// visible there. A layer's or repeat's scope writes into the body of the new
// backward op, which is isolated from above: a forward value its VJPs need
// (primal()) arrives
//  * from the forward layer's inputs, as an extra operand of the backward
//    layer (captured from the enclosing scope, recursively);
//  * from inside the forward body, saved: it becomes an extra result of the
//    forward op (stacked over iterations for a repeat, read back with
//    bmb.stack_get), then is captured like an input;
//  * by recomputation, for bmb.param_get and bmb.arange.
// Saved results cannot be added to an op while its results are in use, so
// Saves hands out placeholders (unrealized_conversion_cast without operands)
// right after the forward op and rebuilds the ops with the extra results at
// the end, outermost first (an inner op's placeholder is what its parent
// yields).
//
// Activity: only values that depend on a trainable param get gradients,
// and only values the loss depends on receive any, so frozen params get
// no grad_accumulate.
//
//===----------------------------------------------------------------------===//

#include "dialects/Bmb/BmbOps.h"
#include "passes/Autocast.h"
#include "passes/Passes.h"
#include "passes/Vjp.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"

namespace mlir::bmb {
#define GEN_PASS_DEF_AUTODIFFPASS
#include "passes/Passes.h.inc"
} // namespace mlir::bmb

using namespace mlir;
using namespace mlir::bmb;

namespace {

bool isFloatTensor(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t && isa<FloatType>(t.getElementType());
}

//===----------------------------------------------------------------------===//
// Activity
//===----------------------------------------------------------------------===//

/// The float values that depend on a trainable param ("varied").
class Activity {
public:
  explicit Activity(ModelOp model) : model(model) {}

  void analyze(Block &block) {
    for (Operation &op : block.without_terminator())
      analyze(op);
  }
  bool isVaried(Value v) const { return varied.contains(v); }

private:
  void mark(Value v) {
    if (isFloatTensor(v))
      varied.insert(v);
  }

  void analyze(Operation &op) {
    if (auto get = dyn_cast<ParamGetOp>(op)) {
      auto param = model.lookupSymbol<ParamOp>(get.getParamAttr());
      if (param && param.isTrainable())
        mark(get.getResult());
      return;
    }
    if (auto layer = dyn_cast<LayerOp>(op)) {
      Block *body = layer.getBodyBlock();
      for (auto [in, arg] : llvm::zip(layer.getInputs(), body->getArguments()))
        if (isVaried(in))
          mark(arg);
      analyze(*body);
      for (auto [res, y] :
           llvm::zip(layer.getResults(), body->getTerminator()->getOperands()))
        if (isVaried(y))
          mark(res);
      return;
    }
    if (auto repeat = dyn_cast<RepeatOp>(op)) {
      Block *body = repeat.getBodyBlock();
      for (auto [in, arg] :
           llvm::zip(repeat.getInvariant(), repeat.getInvariantArgs()))
        if (isVaried(in))
          mark(arg);
      for (auto [in, arg] : llvm::zip(repeat.getIter(), repeat.getCarriedArgs()))
        if (isVaried(in))
          mark(arg);
      // A carried value is varied if any iteration makes it so: iterate the
      // body until nothing changes (the set only grows).
      for (size_t before = ~size_t(0); before != varied.size();) {
        before = varied.size();
        analyze(*body);
        for (auto [arg, y] : llvm::zip(repeat.getCarriedArgs(),
                                       body->getTerminator()->getOperands()))
          if (isVaried(y))
            mark(arg);
      }
      for (auto [res, arg] :
           llvm::zip(repeat.getCarriedResults(), repeat.getCarriedArgs()))
        if (isVaried(arg))
          mark(res);
      return;
    }
    if (llvm::any_of(op.getOperands(), [&](Value v) { return isVaried(v); }))
      for (Value r : op.getResults())
        mark(r);
  }

  ModelOp model;
  llvm::DenseSet<Value> varied;
};

//===----------------------------------------------------------------------===//
// Saves
//===----------------------------------------------------------------------===//

/// Values of forward layer and repeat bodies that the backward reads.
class Saves {
public:
  /// What stands for `v`, a value of the body of the forward layer or
  /// repeat `op`, in op's parent block: the value itself (a layer) or its
  /// values in all iterations stacked (a repeat).
  Value save(Operation *op, Value v) {
    SmallVector<Entry> &entries = byOp[op];
    for (Entry &e : entries)
      if (e.value == v)
        return e.placeholder;
    Type type = v.getType();
    if (auto repeat = dyn_cast<RepeatOp>(op)) {
      auto t = cast<RankedTensorType>(type);
      SmallVector<int64_t> shape{int64_t(repeat.getCount())};
      shape.append(t.getShape().begin(), t.getShape().end());
      type = RankedTensorType::get(shape, t.getElementType());
    }
    OpBuilder b(op->getContext());
    b.setInsertionPointAfter(op);
    Value placeholder =
        b.create<UnrealizedConversionCastOp>(v.getLoc(), type, ValueRange{})
            .getResult(0);
    entries.push_back({v, placeholder});
    return placeholder;
  }

  /// Rebuilds every forward op that saves values with its saved results.
  void finalize() {
    SmallVector<std::pair<unsigned, Operation *>> ops;
    for (auto &[op, entries] : byOp) {
      unsigned depth = 0;
      for (Operation *p = op->getParentOp(); p; p = p->getParentOp())
        ++depth;
      ops.push_back({depth, op});
    }
    llvm::stable_sort(ops, [](auto &a, auto &b) { return a.first < b.first; });
    for (auto [depth, op] : ops)
      rebuild(op, byOp[op]);
  }

private:
  struct Entry {
    Value value;
    Value placeholder;
  };

  static void rebuild(Operation *op, MutableArrayRef<Entry> entries) {
    Operation *yield = op->getRegion(0).front().getTerminator();
    SmallVector<Type> types(op->getResultTypes());
    for (const Entry &e : entries) {
      yield->insertOperands(yield->getNumOperands(), e.value);
      types.push_back(e.placeholder.getType());
    }
    OpBuilder b(op);
    Operation *saving = Operation::create(
        op->getLoc(), op->getName(), types, op->getOperands(),
        NamedAttrList(op->getDiscardableAttrDictionary()),
        op->getPropertiesStorage(), {}, 1);
    b.insert(saving);
    saving->getRegion(0).takeBody(op->getRegion(0));
    int64_t saved = int64_t(entries.size());
    if (auto layer = dyn_cast<LayerOp>(saving))
      layer.setNumSaved(layer.getNumSaved() + saved);
    else
      cast<RepeatOp>(saving).setNumSaved(cast<RepeatOp>(saving).getNumSaved() +
                                         saved);
    unsigned n = op->getNumResults();
    op->replaceAllUsesWith(saving->getResults().take_front(n));
    for (auto [i, e] : llvm::enumerate(entries)) {
      e.placeholder.replaceAllUsesWith(saving->getResult(n + i));
      e.placeholder.getDefiningOp()->erase();
    }
    op->erase();
  }

  llvm::MapVector<Operation *, SmallVector<Entry>> byOp;
};

//===----------------------------------------------------------------------===//
// Backward scopes
//===----------------------------------------------------------------------===//

/// What all scopes of one @train_step share.
struct Differentiator {
  Activity activity;
  Saves saves;
  VjpRuleTable rules;
  Value loss;
};

/// The backward of one forward block (see the file comment).
class BackwardScope : public VjpContext {
public:
  enum class Kind { Function, Layer, Repeat };

  BackwardScope(Differentiator &d, BackwardScope *parent, Kind kind,
                Block *fwd, Operation *fwdOp, Block *bwd)
      : d(d), parent(parent), kind(kind), fwd(fwd), fwdOp(fwdOp), bwd(bwd),
        b(fwd->getParentOp()->getContext()) {
    if (kind == Kind::Function)
      b.setInsertionPoint(bwd->getTerminator());
    else
      b.setInsertionPointToEnd(bwd);
  }

  /// Writes the VJPs of the block's ops, last op first.
  LogicalResult differentiate();

  // VjpContext.
  OpBuilder &builder() override { return b; }
  Value grad(Value result) override { return grads.lookup(result); }
  bool needsGrad(Value v) override { return d.activity.isVaried(v); }
  bool isLoss(Value v) override { return v == d.loss; }
  Value primal(Value v) override;
  void addGrad(Value v, Value g) override;

  /// Repeat scopes: the reverse induction variable and the number of
  /// carried gradients (the block arguments after it).
  Value index;
  unsigned numCarried = 0;

private:
  bool hasGrad(Operation *op) {
    return llvm::any_of(op->getResults(), [&](Value r) {
      return grads.count(r) || isLoss(r);
    });
  }
  LogicalResult backwardLayer(LayerOp f);
  LogicalResult backwardRepeat(RepeatOp f);
  void accumulate(ParamGetOp get);

  Differentiator &d;
  BackwardScope *parent;
  Kind kind;
  Block *fwd;         // the forward block differentiated
  Operation *fwdOp;   // its layer or repeat (null for the function)
  Block *bwd;         // where the backward goes
  OpBuilder b;
  DenseMap<Value, Value> primals; // forward value -> value in bwd
  DenseMap<Value, Value> grads;   // forward value -> its gradient in bwd
  // Values of the parent scope that become operands of the backward op:
  // a layer's captures, a repeat's stacked saves and forward invariants.
  SmallVector<Value> captures, stacked, invariants;
};

Value BackwardScope::primal(Value v) {
  if (Value p = primals.lookup(v))
    return p;
  if (kind == Kind::Function)
    return v; // forward and backward share the function's block
  Value p;
  Operation *def = v.getDefiningOp();
  // Recomputed where the backward needs them (per-iteration deltas' slots
  // and gates are a table lookup).
  if (def && isa<ParamGetOp, ArangeOp, IterationSlotOp, IterationGateOp>(def)) {
    IRMapping map;
    for (Value operand : def->getOperands())
      map.map(operand, primal(operand));
    p = b.clone(*def, map)->getResult(0);
  } else if (kind == Kind::Layer) {
    auto arg = dyn_cast<BlockArgument>(v);
    Value outer = arg && arg.getOwner() == fwd
                      ? fwdOp->getOperand(arg.getArgNumber())
                      : d.saves.save(fwdOp, v);
    captures.push_back(parent->primal(outer));
    p = bwd->insertArgument(captures.size() - 1, v.getType(), v.getLoc());
  } else {
    auto repeat = cast<RepeatOp>(fwdOp);
    auto arg = dyn_cast<BlockArgument>(v);
    unsigned firstInvariant = 1 + repeat.getIter().size();
    if (v == repeat.getInductionVar()) {
      p = index;
    } else if (arg && arg.getOwner() == fwd &&
               arg.getArgNumber() >= firstInvariant) {
      invariants.push_back(parent->primal(
          repeat.getInvariant()[arg.getArgNumber() - firstInvariant]));
      p = bwd->addArgument(v.getType(), v.getLoc());
    } else {
      // Block args of the reverse body: index, carried gradients, stacked
      // saves, forward invariants.
      Value all = d.saves.save(fwdOp, v);
      stacked.push_back(parent->primal(all));
      BlockArgument s = bwd->insertArgument(
          1 + numCarried + stacked.size() - 1, all.getType(), v.getLoc());
      p = b.create<StackGetOp>(v.getLoc(), s, index);
    }
  }
  primals[v] = p;
  return p;
}

void BackwardScope::addGrad(Value v, Value g) {
  if (g.getType() != v.getType())
    g = b.create<ReduceSumOp>(g.getLoc(), v.getType(), g);
  auto [it, inserted] = grads.try_emplace(v, g);
  if (!inserted)
    it->second = b.create<AddOp>(g.getLoc(), it->second, g);
}

void BackwardScope::accumulate(ParamGetOp get) {
  SmallVector<Value> indices;
  for (Value i : get.getIndices())
    indices.push_back(primal(i));
  b.create<GradAccumulateOp>(get.getLoc(), get.getParamAttr(), indices,
                             grads.lookup(get.getResult()));
}

LogicalResult BackwardScope::differentiate() {
  SmallVector<Operation *> ops;
  for (Operation &op : fwd->without_terminator())
    ops.push_back(&op);
  for (Operation *op : llvm::reverse(ops)) {
    if (!hasGrad(op))
      continue;
    if (auto layer = dyn_cast<LayerOp>(op)) {
      if (failed(backwardLayer(layer)))
        return failure();
      continue;
    }
    if (auto repeat = dyn_cast<RepeatOp>(op)) {
      if (failed(backwardRepeat(repeat)))
        return failure();
      continue;
    }
    if (auto get = dyn_cast<ParamGetOp>(op)) {
      accumulate(get);
      continue;
    }
    VjpRule rule = d.rules.lookup(op->getName().getTypeID());
    if (!rule)
      return op->emitError("bmb-autodiff: no gradient rule for '")
             << op->getName() << "', which is on the path from a trainable "
             << "parameter to the loss";
    // The gradient GEMMs of an autocast GEMM (attention: its gradient op's
    // matmuls) compute as it does.
    AutocastMarker marker(b, op, [](Operation *g) {
      return isa<LinearGradInputOp, LinearGradWeightOp, AttentionGradOp>(g);
    });
    if (failed(rule(op, *this)))
      return failure();
  }
  return success();
}

LogicalResult BackwardScope::backwardLayer(LayerOp f) {
  if (f.getBackward() || f.getNumSaved() != 0)
    return f.emitError("bmb-autodiff: the module is already differentiated");
  SmallVector<Value> dOuts;
  auto body = std::make_unique<Block>();
  Block *fwdBody = f.getBodyBlock();
  BackwardScope child(d, this, Kind::Layer, fwdBody, f, body.get());
  for (auto [res, y] :
       llvm::zip(f.getResults(), fwdBody->getTerminator()->getOperands()))
    if (Value g = grads.lookup(res)) {
      dOuts.push_back(g);
      child.addGrad(y, body->addArgument(g.getType(), f.getLoc()));
    }
  if (failed(child.differentiate()))
    return failure();
  SmallVector<Value> dIns;
  SmallVector<Value> inputs;
  for (auto [in, arg] : llvm::zip(f.getInputs(), fwdBody->getArguments()))
    if (Value g = child.grads.lookup(arg); g && needsGrad(in)) {
      dIns.push_back(g);
      inputs.push_back(in);
    }
  child.b.create<YieldOp>(f.getLoc(), dIns);

  SmallVector<Value> operands(child.captures);
  operands.append(dOuts);
  auto backward = b.create<LayerOp>(
      f.getLoc(), ValueRange(dIns).getTypes(), f.getInstanceAttr(),
      f.getLayerAttr(), operands, IntegerAttr(), b.getUnitAttr());
  backward.getBody().push_back(body.release());
  for (auto [in, g] : llvm::zip(inputs, backward.getResults()))
    addGrad(in, g);
  return success();
}

LogicalResult BackwardScope::backwardRepeat(RepeatOp f) {
  if (f.getReverse() || f.getNumSaved() != 0)
    return f.emitError("bmb-autodiff: the module is already differentiated");
  Block *fwdBody = f.getBodyBlock();
  auto body = std::make_unique<Block>();
  BackwardScope child(d, this, Kind::Repeat, fwdBody, f, body.get());
  child.index = body->addArgument(b.getIndexType(), f.getLoc());
  SmallVector<Value> dFinal, carriedIns;
  SmallVector<BlockArgument> carriedArgs;
  for (auto [k, res] : llvm::enumerate(f.getResults())) {
    BlockArgument arg = f.getCarriedArgs()[k];
    if (!needsGrad(arg))
      continue;
    Value g = grads.lookup(res);
    if (!g)
      return f.emitError("bmb-autodiff: carried value #")
             << k << " of bmb.repeat \"" << f.getInstance()
             << "\" has no gradient while another has; zero gradients are "
                "not implemented";
    dFinal.push_back(g);
    carriedArgs.push_back(arg);
    carriedIns.push_back(f.getIter()[k]);
    child.addGrad(fwdBody->getTerminator()->getOperand(k),
                  body->addArgument(g.getType(), f.getLoc()));
  }
  child.numCarried = dFinal.size();
  if (failed(child.differentiate()))
    return failure();
  SmallVector<Value> next;
  for (auto [k, arg] : llvm::enumerate(carriedArgs)) {
    Value g = child.grads.lookup(arg);
    if (!g)
      return f.emitError("bmb-autodiff: the gradient of bmb.repeat \"")
             << f.getInstance() << "\"'s carried value #"
             << arg.getArgNumber() - 1
             << " does not reach the iteration's input; zero gradients are "
                "not implemented";
    next.push_back(g);
  }
  for (BlockArgument arg : f.getInvariantArgs())
    if (child.grads.count(arg))
      return f.emitError("bmb-autodiff: gradients of bmb.repeat \"")
             << f.getInstance()
             << "\"'s varied invariant values are not implemented";
  child.b.create<YieldOp>(f.getLoc(), next);

  SmallVector<Value> invariant(child.stacked);
  invariant.append(child.invariants);
  auto reverse = b.create<RepeatOp>(
      f.getLoc(), ValueRange(next).getTypes(), f.getCountAttr(),
      f.getInstanceAttr(), f.getLayerAttr(), dFinal, invariant, IntegerAttr(),
      b.getUnitAttr());
  reverse.getBody().push_back(body.release());
  for (auto [in, g] : llvm::zip(carriedIns, reverse.getResults()))
    if (needsGrad(in))
      addGrad(in, g);
  return success();
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

struct AutodiffPass : mlir::bmb::impl::AutodiffPassBase<AutodiffPass> {
  void runOnOperation() override {
    for (ModelOp model : getOperation().getOps<ModelOp>())
      if (auto loss = model.lookupSymbol<func::FuncOp>("loss"))
        if (failed(differentiate(model, loss)))
          return signalPassFailure();
  }

  LogicalResult differentiate(ModelOp model, func::FuncOp loss) {
    if (model.lookupSymbol("train_step"))
      return model.emitError("bmb-autodiff: model @")
             << model.getSymName() << " already has a @train_step";
    OpBuilder b(loss);
    b.setInsertionPointAfter(loss);
    auto step = cast<func::FuncOp>(b.clone(*loss));
    step.setSymName("train_step");
    Block &body = step.getBody().front();
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    // The loss is the first result; a tune job's @loss also returns the
    // class scores (and a manual verbalizer's word probabilities), outputs
    // that get no gradient.
    Value value = ret.getNumOperands() >= 1 ? ret.getOperand(0) : Value();
    if (!value || (!value.getDefiningOp<VerbalizerLossOp>() &&
                   !value.getDefiningOp<FusedClassifierOp>() &&
                   !value.getDefiningOp<CrossEntropyOp>()))
      return loss.emitError("bmb-autodiff: @loss must return the result of "
                            "bmb.fused_classifier, bmb.cross_entropy or bmb.verbalizer_loss");

    Differentiator d{Activity(model), Saves(), VjpRuleTable(), value};
    addNNVjpRules(d.rules);
    addTensorVjpRules(d.rules);
    addPromptVjpRules(d.rules);
    d.activity.analyze(body);
    BackwardScope scope(d, nullptr, BackwardScope::Kind::Function, &body,
                        nullptr, &body);
    if (failed(scope.differentiate()))
      return failure();
    d.saves.finalize();
    return success();
  }
};

} // namespace
