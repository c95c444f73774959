//===- CheckpointActivations.cpp - Recompute instead of save --------------===//
//
// bmb-checkpoint-activations (DESIGN decision 4; docs/training-ir.md,
// section 2) runs after bmb-autodiff. For each layer instance the train
// job's `checkpoint` setting names, the forward op stops yielding the values
// its backward reads (its saved set) and the backward recomputes them from a
// clone of the forward body at its start:
//  * a bmb.layer saves nothing; its backward takes the forward's inputs;
//  * a bmb.repeat saves each iteration's carried inputs, stacked, and the
//    reverse repeat reads iteration i's with bmb.stack_get and recomputes
//    that iteration's body at the start of its reverse iteration (the
//    repeat stays rolled, DESIGN decision 2).
// The clone is the forward body op for op, so the recomputed values equal
// the saved ones bit for bit: dropout masks depend on (rng_id, the
// enclosing repeat's forward iteration), which the clone keeps, since the
// reverse loop's induction variable is the forward iteration. Cloned ops
// nobody reads (the iteration's output) are erased.
//
// A nested instance (`bert.enc`: a repeat inside a layer; `h.attn`: a layer
// inside a repeat) works the same one level down: what its backward newly
// needs from the forward is saved by the enclosing forward ops (stacked by
// a repeat) and captured by their backwards (read with bmb.stack_get in a
// reverse repeat), as bmb-autodiff does, and the saves and captures it no
// longer needs are dropped all the way up. A repeat inside a repeat is an
// error (training refuses nested repeats).
//
//===----------------------------------------------------------------------===//

#include "dialects/Bmb/BmbOps.h"
#include "passes/EntryLowering.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::bmb {
#define GEN_PASS_DEF_CHECKPOINTACTIVATIONSPASS
#include "passes/Passes.h.inc"
} // namespace mlir::bmb

using namespace mlir;
using namespace mlir::bmb;

namespace {

bool isForward(Operation *op) {
  if (auto l = dyn_cast<LayerOp>(op))
    return !l.getBackward();
  if (auto r = dyn_cast<RepeatOp>(op))
    return !r.getReverse();
  return false;
}

bool isBackward(Operation *op) {
  if (auto l = dyn_cast<LayerOp>(op))
    return l.getBackward();
  if (auto r = dyn_cast<RepeatOp>(op))
    return r.getReverse();
  return false;
}

StringRef instanceOf(Operation *op) {
  if (auto l = dyn_cast<LayerOp>(op))
    return l.getInstance();
  return cast<RepeatOp>(op).getInstance();
}

int64_t numSaved(Operation *op) {
  if (auto l = dyn_cast<LayerOp>(op))
    return l.getNumSaved();
  return cast<RepeatOp>(op).getNumSaved();
}

/// Rebuilds the forward layer or repeat `op` so that it saves exactly
/// `saved` (values of its body's top level): its results are its outputs,
/// then `saved` (stacked over the iterations for a repeat). Uses of the
/// outputs, and of old saved results whose value is still saved, move to
/// the new op; an old saved result that is dropped must be unused.
Operation *setSaved(Operation *op, ArrayRef<Value> saved) {
  Block &body = op->getRegion(0).front();
  Operation *yield = body.getTerminator();
  unsigned numOut = op->getNumResults() - numSaved(op);
  SmallVector<Value> oldSaved(yield->getOperands().drop_front(numOut));
  SmallVector<Value> yields(yield->getOperands().take_front(numOut));
  yields.append(saved.begin(), saved.end());
  yield->setOperands(yields);
  SmallVector<Type> types(TypeRange(op->getResultTypes()).take_front(numOut));
  for (Value v : saved) {
    Type t = v.getType();
    if (auto repeat = dyn_cast<RepeatOp>(op)) {
      auto rt = cast<RankedTensorType>(t);
      SmallVector<int64_t> shape{int64_t(repeat.getCount())};
      shape.append(rt.getShape().begin(), rt.getShape().end());
      t = RankedTensorType::get(shape, rt.getElementType());
    }
    types.push_back(t);
  }
  OpBuilder b(op);
  Operation *next = Operation::create(op->getLoc(), op->getName(), types, op->getOperands(),
                                      NamedAttrList(op->getDiscardableAttrDictionary()),
                                      op->getPropertiesStorage(), {}, 1);
  b.insert(next);
  next->getRegion(0).takeBody(op->getRegion(0));
  if (auto l = dyn_cast<LayerOp>(next))
    l.setNumSaved(int64_t(saved.size()));
  else
    cast<RepeatOp>(next).setNumSaved(int64_t(saved.size()));
  for (unsigned i = 0; i < numOut; ++i)
    op->getResult(i).replaceAllUsesWith(next->getResult(i));
  for (auto [j, v] : llvm::enumerate(oldSaved))
    if (const Value *k = llvm::find(saved, v); k != saved.end())
      op->getResult(numOut + j).replaceAllUsesWith(next->getResult(numOut + (k - saved.begin())));
  assert(op->use_empty() && "a dropped save is still read");
  op->erase();
  return next;
}

void trimUnread(ArrayRef<Operation *> ops);

/// A forward layer (a clone, or one whose saves the checkpointed forward
/// no longer yields) computes only the results something reads: the
/// others leave its yield (and `num_saved` counts the saved ones kept),
/// then whatever in its body only they needed goes, recursively. So the
/// recompute of a GPT-2 block skips the attention's and the MLP's output
/// projections, whose outputs only the block's dead residual adds read.
void trimLayer(LayerOp layer) {
  Block &body = *layer.getBodyBlock();
  Operation *yield = body.getTerminator();
  unsigned numOut = layer.getNumResults() - layer.getNumSaved();
  SmallVector<Value> yields;
  SmallVector<Type> types;
  SmallVector<Value> kept;
  int64_t saved = 0;
  for (OpResult r : layer->getResults()) {
    if (r.use_empty())
      continue;
    yields.push_back(yield->getOperand(r.getResultNumber()));
    types.push_back(r.getType());
    kept.push_back(r);
    saved += r.getResultNumber() >= numOut;
  }
  if (kept.size() != layer.getNumResults()) {
    yield->setOperands(yields);
    OpBuilder b(layer);
    auto next = b.create<LayerOp>(layer.getLoc(), types, layer.getInstanceAttr(),
                                  layer.getLayerAttr(), layer.getInputs(),
                                  b.getI64IntegerAttr(saved), UnitAttr());
    next.getBody().takeBody(layer.getBody());
    for (auto [old, res] : llvm::zip(kept, next.getResults()))
      old.replaceAllUsesWith(res);
    layer.erase();
    layer = next;
  }
  SmallVector<Operation *> ops;
  for (Operation &op : layer.getBodyBlock()->without_terminator())
    ops.push_back(&op);
  trimUnread(ops);
}

/// Erases the ops of `ops` (one block's, in order) that nothing reads, last
/// first, so that whole dead chains go, and trims the layers among them.
void trimUnread(ArrayRef<Operation *> ops) {
  for (Operation *op : llvm::reverse(ops)) {
    if (isOpTriviallyDead(op))
      op->erase();
    else if (auto layer = dyn_cast<LayerOp>(op))
      trimLayer(layer);
  }
}

/// Clones the ops of the forward body `fwd` (without its yield) at the start
/// of `bwd`, with `map` giving the body's arguments; returns the clones.
SmallVector<Operation *> cloneForward(Block &fwd, Block &bwd, IRMapping &map,
                                      Operation *after) {
  OpBuilder b(bwd.getParentOp()->getContext());
  if (after)
    b.setInsertionPointAfter(after);
  else
    b.setInsertionPointToStart(&bwd);
  SmallVector<Operation *> clones;
  for (Operation &op : fwd.without_terminator())
    clones.push_back(b.clone(op, map));
  return clones;
}

/// Nested layers of a checkpointed forward stop yielding the saves that
/// only its old saved set read.
void trimForward(Operation *f) {
  SmallVector<Operation *> ops;
  for (Operation &op : f->getRegion(0).front().without_terminator())
    ops.push_back(&op);
  trimUnread(ops);
}

/// Rebuilds the backward layer `bwd` with the operands `operands` (its body's
/// arguments already match them).
LayerOp withOperands(LayerOp bwd, ArrayRef<Value> operands) {
  OpBuilder b(bwd);
  auto next = b.create<LayerOp>(bwd.getLoc(), bwd.getResultTypes(), bwd.getInstanceAttr(),
                                bwd.getLayerAttr(), operands, IntegerAttr(), b.getUnitAttr());
  next.getBody().takeBody(bwd.getBody());
  bwd.replaceAllUsesWith(next.getResults());
  bwd.erase();
  return next;
}

/// Rebuilds the reverse repeat `bwd` with the invariant operands
/// `invariant` (its body's arguments already match them).
RepeatOp withInvariants(RepeatOp bwd, ArrayRef<Value> invariant) {
  OpBuilder b(bwd);
  auto next = b.create<RepeatOp>(bwd.getLoc(), bwd.getResultTypes(), bwd.getCountAttr(),
                                 bwd.getInstanceAttr(), bwd.getLayerAttr(), bwd.getIter(),
                                 invariant, IntegerAttr(), b.getUnitAttr());
  next.getBody().takeBody(bwd.getBody());
  bwd.replaceAllUsesWith(next.getResults());
  bwd.erase();
  return next;
}

/// The result of the forward layer or repeat `f` that saves `v` (a value of
/// its body), saving it from now on if it did not; `f` may be rebuilt.
Value saveOf(Operation *&f, Value v) {
  Operation *yield = f->getRegion(0).front().getTerminator();
  unsigned numOut = f->getNumResults() - numSaved(f);
  SmallVector<Value> saved(yield->getOperands().drop_front(numOut));
  auto it = llvm::find(saved, v);
  if (it == saved.end()) {
    saved.push_back(v);
    f = setSaved(f, saved);
    it = saved.end() - 1;
  }
  return f->getResult(numOut + (it - saved.begin()));
}

class Checkpointer {
public:
  Checkpointer(JobOp job, func::FuncOp step) : job(job), step(step) {}

  LogicalResult checkpoint(StringRef path);

private:
  InFlightDiagnostic error() { return emitError(settingLoc(job, "checkpoint")); }
  LogicalResult checkpointLayer(LayerOp f, LayerOp bwd);
  LogicalResult checkpointRepeat(RepeatOp f, RepeatOp bwd);

  // The layer instances enclosing the checkpointed one, outermost first:
  // each forward layer or repeat and its backward layer or reverse repeat.
  // Depth 0 is @train_step's body (forward and backward share it); depth k
  // the bodies of parents[k-1].
  SmallVector<std::pair<Operation *, Operation *>> parents;
  /// `v`, a value of the forward block at depth k, in the backward block at
  /// depth k, as bmb-autodiff makes it: captured by the backward layers
  /// (saved by the forward ones where it is not an input), read with
  /// bmb.stack_get from a stacked save in a reverse repeat, or cloned
  /// (param_get, arange).
  Value toBwd(unsigned k, Value v);
  /// The forward value at depth k that `b`, a value of the backward block
  /// at depth k, stands for; null if none (a gradient, a clone).
  Value fwdOf(unsigned k, Value b);
  /// Drops the captures of the parents' backward ops that nothing reads
  /// any more (innermost first), then the parents' saves that nothing reads
  /// (outermost first).
  void pruneParents();
  Block &bwdBlock(unsigned k) {
    return k ? parents[k - 1].second->getRegion(0).front() : step.getBody().front();
  }

  JobOp job;
  func::FuncOp step;
};

Value Checkpointer::toBwd(unsigned k, Value v) {
  if (k == 0)
    return v;
  Block &body = bwdBlock(k);
  if (Operation *def = v.getDefiningOp();
      def && isa<ParamGetOp, ArangeOp, IterationSlotOp, IterationGateOp>(def)) {
    IRMapping map;
    for (Value o : def->getOperands())
      map.map(o, toBwd(k, o));
    OpBuilder b = OpBuilder::atBlockBegin(&body);
    return b.clone(*def, map)->getResult(0);
  }
  Operation *&fp = parents[k - 1].first;
  Block &fwdBody = fp->getRegion(0).front();
  auto arg = dyn_cast<BlockArgument>(v);
  if (auto repeat = dyn_cast<RepeatOp>(fp)) {
    auto rb = cast<RepeatOp>(parents[k - 1].second);
    unsigned firstInvariant = 1 + rb.getIter().size();
    SmallVector<Value> invariant(rb.getInvariant());
    if (v == repeat.getInductionVar())
      return body.getArgument(0);
    bool isInvariant = arg && arg.getOwner() == &fwdBody &&
                       arg.getArgNumber() >= 1 + repeat.getIter().size();
    Value outer = isInvariant
                      ? repeat.getInvariant()[arg.getArgNumber() - 1 - repeat.getIter().size()]
                      : saveOf(fp, v);
    Value o = toBwd(k - 1, outer);
    auto it = llvm::find(invariant, o);
    unsigned at = it - invariant.begin();
    if (it == invariant.end()) {
      // Stacked saves go first, forward invariants last (training-ir.md).
      at = isInvariant ? invariant.size() : 0;
      invariant.insert(invariant.begin() + at, o);
      body.insertArgument(firstInvariant + at, o.getType(), o.getLoc());
      parents[k - 1].second = withInvariants(rb, invariant);
    }
    BlockArgument a = body.getArgument(firstInvariant + at);
    if (isInvariant)
      return a;
    for (Operation *user : a.getUsers())
      if (auto get = dyn_cast<StackGetOp>(user); get && get.getIndex() == body.getArgument(0))
        return get.getResult();
    OpBuilder b = OpBuilder::atBlockBegin(&body);
    return b.create<StackGetOp>(v.getLoc(), a, body.getArgument(0)).getResult();
  }
  auto layer = cast<LayerOp>(fp);
  Value outer = arg && arg.getOwner() == &fwdBody ? layer.getOperand(arg.getArgNumber())
                                                  : saveOf(fp, v);
  Value o = toBwd(k - 1, outer);
  auto bp = cast<LayerOp>(parents[k - 1].second);
  SmallVector<Value> operands(bp.getInputs());
  if (auto it = llvm::find(operands, o); it != operands.end())
    return body.getArgument(it - operands.begin());
  operands.insert(operands.begin(), o);
  body.insertArgument(0u, o.getType(), o.getLoc());
  parents[k - 1].second = withOperands(bp, operands);
  return body.getArgument(0);
}

Value Checkpointer::fwdOf(unsigned k, Value b) {
  if (k == 0)
    return b;
  auto [fp, bp] = parents[k - 1];
  Block &body = bwdBlock(k);
  Block &fwdBody = fp->getRegion(0).front();
  unsigned numOut = fp->getNumResults() - numSaved(fp);
  if (auto repeat = dyn_cast<RepeatOp>(fp)) {
    auto rb = cast<RepeatOp>(bp);
    unsigned firstInvariant = 1 + rb.getIter().size();
    if (b == body.getArgument(0))
      return repeat.getInductionVar();
    bool stacked = false;
    if (auto get = b.getDefiningOp<StackGetOp>();
        get && get->getBlock() == &body && get.getIndex() == body.getArgument(0)) {
      b = get.getStack();
      stacked = true;
    }
    auto arg = dyn_cast<BlockArgument>(b);
    if (!arg || arg.getOwner() != &body || arg.getArgNumber() < firstInvariant)
      return {};
    Value outer = fwdOf(k - 1, rb.getInvariant()[arg.getArgNumber() - firstInvariant]);
    if (!outer)
      return {};
    if (!stacked) {
      for (auto [in, a] : llvm::zip(repeat.getInvariant(), repeat.getInvariantArgs()))
        if (in == outer)
          return a;
      return {};
    }
    if (auto r = dyn_cast<OpResult>(outer);
        r && r.getOwner() == fp && r.getResultNumber() >= numOut)
      return fwdBody.getTerminator()->getOperand(r.getResultNumber());
    return {};
  }
  auto arg = dyn_cast<BlockArgument>(b);
  if (!arg || arg.getOwner() != &body)
    return {};
  Value outer = fwdOf(k - 1, bp->getOperand(arg.getArgNumber()));
  if (!outer)
    return {};
  for (auto [in, a] : llvm::zip(fp->getOperands(), fwdBody.getArguments()))
    if (in == outer)
      return a;
  if (auto r = dyn_cast<OpResult>(outer);
      r && r.getOwner() == fp && r.getResultNumber() >= numOut)
    return fwdBody.getTerminator()->getOperand(r.getResultNumber());
  return {};
}

void Checkpointer::pruneParents() {
  for (unsigned k = parents.size(); k >= 1; --k) {
    Block &body = bwdBlock(k);
    if (auto rb = dyn_cast<RepeatOp>(parents[k - 1].second)) {
      for (Operation &op : llvm::make_early_inc_range(body))
        if (isa<StackGetOp>(op) && op.use_empty())
          op.erase();
      unsigned firstInvariant = 1 + rb.getIter().size();
      SmallVector<Value> invariant(rb.getInvariant());
      bool changed = false;
      for (int i = int(invariant.size()) - 1; i >= 0; --i)
        if (body.getArgument(firstInvariant + i).use_empty() && fwdOf(k - 1, invariant[i])) {
          body.eraseArgument(firstInvariant + i);
          invariant.erase(invariant.begin() + i);
          changed = true;
        }
      if (changed)
        parents[k - 1].second = withInvariants(rb, invariant);
      continue;
    }
    auto bp = cast<LayerOp>(parents[k - 1].second);
    SmallVector<Value> operands(bp.getInputs());
    bool changed = false;
    for (int i = int(operands.size()) - 1; i >= 0; --i)
      if (body.getArgument(i).use_empty() && fwdOf(k - 1, operands[i])) {
        body.eraseArgument(i);
        operands.erase(operands.begin() + i);
        changed = true;
      }
    if (changed)
      parents[k - 1].second = withOperands(bp, operands);
  }
  for (auto &[fp, bp] : parents) {
    Operation *yield = fp->getRegion(0).front().getTerminator();
    unsigned numOut = fp->getNumResults() - numSaved(fp);
    SmallVector<Value> kept;
    for (OpResult r : fp->getResults().drop_front(numOut))
      if (!r.use_empty())
        kept.push_back(yield->getOperand(r.getResultNumber()));
    if (kept.size() != unsigned(numSaved(fp)))
      fp = setSaved(fp, kept);
  }
}

LogicalResult Checkpointer::checkpoint(StringRef path) {
  // Walk the dotted path down the forward ops, pairing each with its
  // backward at the same depth.
  SmallVector<StringRef> parts;
  path.split(parts, '.');
  parents.clear();
  Block *block = &step.getBody().front();
  Operation *f = nullptr, *bwd = nullptr;
  for (auto [k, part] : llvm::enumerate(parts)) {
    SmallVector<Operation *> found;
    for (Operation &op : *block)
      if (isForward(&op) && instanceOf(&op) == part)
        found.push_back(&op);
    if (found.empty())
      return error() << "checkpoint: '" << path
                     << "' is not a layer instance that the loss is computed through "
                        "(bmb-checkpoint-activations found no '"
                     << part << "' in @train_step)";
    if (found.size() > 1)
      return error() << "checkpoint: '" << path << "' is used " << found.size()
                     << " times in the forward; checkpointing a shared layer instance is "
                        "not implemented yet";
    f = found.front();
    bwd = nullptr;
    for (Operation &op : bwdBlock(k))
      if (isBackward(&op) && instanceOf(&op) == part && isa<RepeatOp>(op) == isa<RepeatOp>(f))
        bwd = &op;
    if (!bwd)
      return error() << "checkpoint: '" << path
                     << "' has no backward: no gradient flows through it (its parameters are "
                        "frozen or do not reach the loss), so it saves nothing to recompute";
    if (k + 1 == parts.size())
      break;
    parents.push_back({f, bwd});
    block = &f->getRegion(0).front();
  }
  if (isa<RepeatOp>(f) && llvm::any_of(parents, [](auto &p) { return isa<RepeatOp>(p.first); }))
    return error() << "checkpoint: '" << path
                   << "' is a repeat inside a repeat; nested repeats are not supported by "
                      "training yet";
  if (numSaved(f) == 0)
    return success(); // nothing saved, nothing to recompute
  if (auto layer = dyn_cast<LayerOp>(f))
    return checkpointLayer(layer, cast<LayerOp>(bwd));
  return checkpointRepeat(cast<RepeatOp>(f), cast<RepeatOp>(bwd));
}

/// The backward takes the forward's inputs instead of its saves and
/// recomputes the saves from a clone of the forward body.
LogicalResult Checkpointer::checkpointLayer(LayerOp f, LayerOp bwd) {
  unsigned depth = parents.size();
  Block &fwdBody = *f.getBodyBlock();
  Block &body = *bwd.getBodyBlock();
  unsigned numOut = f.getNumResults() - f.getNumSaved();
  // The forward's inputs, as arguments of the backward body: those it
  // already captures, the others prepended.
  IRMapping map;
  for (auto [in, arg] : llvm::zip(f.getInputs(), fwdBody.getArguments())) {
    Value o = toBwd(depth, in);
    SmallVector<Value> operands(bwd.getInputs());
    auto it = llvm::find(operands, o);
    if (it == operands.end()) {
      operands.insert(operands.begin(), o);
      body.insertArgument(0u, o.getType(), o.getLoc());
      bwd = withOperands(bwd, operands);
      it = operands.begin();
    }
    map.map(arg, body.getArgument(it - operands.begin()));
  }
  SmallVector<Operation *> clones = cloneForward(fwdBody, body, map, nullptr);
  // Saved operands become the recomputed values.
  Operation *yield = fwdBody.getTerminator();
  SmallVector<Value> operands(bwd.getInputs());
  for (int i = int(operands.size()) - 1; i >= 0; --i) {
    auto r = dyn_cast_or_null<OpResult>(fwdOf(depth, operands[i]));
    if (!r || r.getOwner() != f || r.getResultNumber() < numOut)
      continue;
    body.getArgument(i).replaceAllUsesWith(map.lookup(yield->getOperand(r.getResultNumber())));
    body.eraseArgument(i);
    operands.erase(operands.begin() + i);
  }
  trimUnread(clones);
  withOperands(bwd, operands);
  pruneParents();
  trimForward(setSaved(f, {}));
  return success();
}

/// The forward repeat saves each iteration's carried inputs; the reverse
/// iteration i reads them and recomputes iteration i's saves.
LogicalResult Checkpointer::checkpointRepeat(RepeatOp f, RepeatOp bwd) {
  unsigned depth = parents.size();
  // Save the carried inputs (besides the old saves, until the reverse repeat
  // no longer reads those).
  Block &fwdBody0 = *f.getBodyBlock();
  unsigned numCarried = f.getIter().size();
  SmallVector<Value> oldSaves(
      fwdBody0.getTerminator()->getOperands().drop_front(numCarried));
  SmallVector<Value> carried(f.getCarriedArgs().begin(), f.getCarriedArgs().end());
  SmallVector<Value> saves(oldSaves);
  for (Value c : carried)
    if (!llvm::is_contained(saves, c))
      saves.push_back(c);
  f = cast<RepeatOp>(setSaved(f, saves));
  Block &fwdBody = *f.getBodyBlock();
  unsigned numOut = numCarried;
  auto stackOf = [&](Value v) {
    return f.getResult(numOut + (llvm::find(saves, v) - saves.begin()));
  };

  Block &body = *bwd.getBodyBlock();
  SmallVector<Value> invariant(bwd.getInvariant());
  unsigned firstInvariant = 1 + bwd.getIter().size();
  // An invariant operand, as an argument of the reverse body.
  auto argFor = [&](Value v, bool stacked) -> BlockArgument {
    auto it = llvm::find(invariant, v);
    if (it != invariant.end())
      return body.getArgument(firstInvariant + (it - invariant.begin()));
    // Stacked saves go first, forward invariants last (training-ir.md).
    unsigned at = stacked ? 0 : invariant.size();
    invariant.insert(invariant.begin() + at, v);
    return body.insertArgument(firstInvariant + at, v.getType(), v.getLoc());
  };
  Value index = body.getArgument(0);
  IRMapping map;
  map.map(f.getInductionVar(), index);
  OpBuilder b(f.getContext());
  b.setInsertionPointToStart(&body);
  Operation *last = nullptr;
  SmallVector<Operation *> carriedGets;
  for (Value c : carried) {
    BlockArgument s = argFor(toBwd(depth, stackOf(c)), /*stacked=*/true);
    auto get = b.create<StackGetOp>(c.getLoc(), s, index);
    map.map(c, get.getResult());
    carriedGets.push_back(get);
    last = get;
  }
  for (auto [in, arg] : llvm::zip(f.getInvariant(), f.getInvariantArgs()))
    map.map(arg, argFor(toBwd(depth, in), /*stacked=*/false));
  SmallVector<Operation *> clones = cloneForward(fwdBody, body, map, last);

  // Reads of the old saves become the recomputed values.
  for (int i = int(invariant.size()) - 1; i >= 0; --i) {
    auto r = dyn_cast_or_null<OpResult>(fwdOf(depth, invariant[i]));
    if (!r || r.getOwner() != f || r.getResultNumber() < numOut)
      continue;
    Value saved = saves[r.getResultNumber() - numOut];
    BlockArgument arg = body.getArgument(firstInvariant + i);
    for (Operation *user : llvm::make_early_inc_range(arg.getUsers())) {
      auto get = dyn_cast<StackGetOp>(user);
      if (llvm::is_contained(carriedGets, user))
        continue;
      if (!get || get.getIndex() != index)
        return bwd.emitError("bmb-checkpoint-activations: a stacked save of bmb.repeat \"")
               << f.getInstance() << "\" is read other than at the reverse iteration";
      get.getResult().replaceAllUsesWith(map.lookup(saved));
      get.erase();
    }
    if (llvm::is_contained(carried, saved))
      continue; // a carried input: still saved, read once at the start
    body.eraseArgument(firstInvariant + i);
    invariant.erase(invariant.begin() + i);
  }
  trimUnread(clones);
  withInvariants(bwd, invariant);
  pruneParents();
  SmallVector<Value> kept;
  for (Value s : saves)
    if (llvm::is_contained(carried, s))
      kept.push_back(s);
  trimForward(setSaved(f, kept));
  return success();
}

struct CheckpointActivationsPass
    : mlir::bmb::impl::CheckpointActivationsPassBase<CheckpointActivationsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (JobOp job : module.getOps<JobOp>()) {
      if (job.getKind() != JobKind::Train && job.getKind() != JobKind::Tune)
        continue;
      Attribute setting = job.getSettings().get("checkpoint");
      if (!setting)
        continue;
      SmallVector<StringRef> paths;
      if (auto s = dyn_cast<StringAttr>(setting))
        paths.push_back(s.getValue());
      else if (auto list = dyn_cast<ArrayAttr>(setting))
        for (Attribute a : list)
          if (auto s = dyn_cast<StringAttr>(a))
            paths.push_back(s.getValue());
      if (paths.empty()) {
        emitError(settingLoc(job, "checkpoint"))
            << "checkpoint must name layer instances: `checkpoint = h` or "
               "`checkpoint = [\"h\", \"enc.layers\"]`";
        return signalPassFailure();
      }
      auto model = SymbolTable::lookupNearestSymbolFrom<ModelOp>(job, job.getModelAttr());
      auto step = model ? model.lookupSymbol<func::FuncOp>("train_step") : func::FuncOp();
      if (!step) {
        job.emitError("bmb-checkpoint-activations rewrites @train_step: run bmb-autodiff first");
        return signalPassFailure();
      }
      Checkpointer c(job, step);
      llvm::SmallDenseSet<StringRef> done; // a path named twice is checkpointed once
      for (StringRef path : paths)
        if (done.insert(path).second && failed(c.checkpoint(path)))
          return signalPassFailure();
    }
  }
};

} // namespace
