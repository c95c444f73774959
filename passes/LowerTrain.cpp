//===- LowerTrain.cpp - A train job to a bmb_exec training program --------===//
//
// The train mode of bmb-lower-to-exec (docs/training-ir.md, section 4).
// After bmb-attach-loss, bmb-autodiff and bmb-insert-optimizer the model
// has `@loss`, `@train_step` and `@optimizer_step`; they become the
// program's entries `evaluate`, `forward_backward` and `optimizer_step`,
// lowered by the same walk as inference entries (EntryLowering) with:
//  - full rows: shapes are static (B x T rows), no run-time row count, no
//    KV cache (attention reads its k/v projections, start 0);
//  - inputs `tokens` and `targets` ([B, T] i32) and the output `losses`
//    ([B*T] f32, per row);
//  - the loss: `bmb.fused_classifier` is the head's GEMM into a logits
//    buffer, then one classifier kernel that writes the per-row losses and
//    (forward_backward) overwrites the logits with dlogits, scaled by
//    StepArgs::dlossScale; `bmb.cross_entropy` is that kernel on the
//    model's logits, its dlogits the result of `bmb.cross_entropy_grad`;
//  - a repeat's saved values are stacked `[count, ...]` activation buffers:
//    the forward loop writes slice i (`bmb_exec.layer_view`, in place of
//    the value's own buffer when the body allocated it), the backward
//    loop, counting down (`i = count-1-j`, never unrolled), reads it;
//  - every backward kernel accumulates: its fresh output is zeroed first
//    (`bmb_exec.zero`), except where the producer can accumulate straight
//    into a parameter's gradient (`bmb_exec.grad_ref`): a weight gradient
//    (matmul with accumulate), a bias gradient (sum_rows), an embedding
//    table gradient, a norm's dw/db. Other `bmb.grad_accumulate`s become an
//    in-place add (a generated kernel);
//  - dropout (forward_backward only; evaluate runs without it): a generated
//    kernel calling the runtime's counter-based mask (LowerTrainDropout.cpp);
//  - the optimizer: the gradient norm (always reported through
//    StepArgs::gradNorm), clipping, one update per trainable param reading
//    lr and step from StepArgs, then the gradients zeroed.
//
//===----------------------------------------------------------------------===//
#include "passes/EntryLowering.h"
#include "passes/ExecBuffers.h"

using namespace mlir;

/// A number as a user wrote it in the .bmb file ("1e-05", "0.001").
static std::string shortNumber(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", v);
  return b;
}
using namespace mlir::bmb;

namespace {

/// The name of a func of the train job, in the model or at module level.
func::FuncOp findFunc(ModuleOp module, ModelOp model, StringRef name) {
  for (auto f : model.getOps<func::FuncOp>())
    if (f.getName() == name)
      return f;
  return module.lookupSymbol<func::FuncOp>(name);
}

double settingNum(DictionaryAttr d, StringRef key, double def) {
  if (!d)
    return def;
  if (auto f = d.getAs<FloatAttr>(key))
    return f.getValueAsDouble();
  if (auto i = d.getAs<IntegerAttr>(key))
    return static_cast<double>(i.getInt());
  return def;
}

} // namespace

Value EntryLowering::zeroed(Location loc, Type tensorType) {
  Value buf = alloc(loc, tensorType);
  b.create<ex::ZeroOp>(loc, buf);
  return buf;
}

Value EntryLowering::stepArg(Location loc, StringRef field) {
  Type t = field == "lr" || field == "dloss_scale" ? Type(b.getF64Type())
                                                   : Type(b.getI64Type());
  return b.create<ex::StepArgOp>(loc, t, b.getStringAttr(field));
}

Value EntryLowering::accumulateTarget(Value result) {
  if (!result.hasOneUse())
    return {};
  auto acc = dyn_cast<GradAccumulateOp>(*result.getUsers().begin());
  if (!acc || acc->getBlock() != result.getParentBlock() || acc.getIndices().size() > 1)
    return {};
  Value layer;
  if (!acc.getIndices().empty()) {
    layer = lookup(acc.getIndices()[0]);
    if (!layer)
      return {};
  }
  fusedAccumulates.insert(acc);
  return b.create<ex::GradRefOp>(acc.getLoc(), memrefOf(result.getType()), acc.getParamAttr(),
                                 layer);
}

LogicalResult EntryLowering::lowerTrainInputs() {
  for (auto [i, arg] : llvm::enumerate(source.getArguments())) {
    auto name = source.getArgAttrOfType<StringAttr>(i, "bmb.name");
    std::string n = name ? name.str() : "input" + std::to_string(i);
    // token_types and mask: a masked LM's (bmb-attach-loss checked them);
    // the app fills them with zeros and ones. A tune job's loss reads the
    // prompt's inputs too (program.h, TuneInfo), whose shapes
    // bmb-attach-loss chose.
    auto t = cast<RankedTensorType>(arg.getType());
    bool tuneInput = llvm::is_contained({"mask_pos", "labels", "label_words", "calibration"}, n);
    if (!tuneInput &&
        !llvm::is_contained({"tokens", "targets", "token_types", "mask"}, n))
      return source.emitError("input '")
             << n << "': a train program is fed `tokens`, `targets`, `token_types` and `mask` only"
             << " (a tune program also `mask_pos`, `labels`, `label_words`, `calibration`)";
    if (!tuneInput && (t.getRank() != 2 || !t.getElementType().isInteger(32)))
      return source.emitError("input '") << n << "' must be i32 [B, T], got " << t;
    buffers[arg] = b.create<ex::InputOp>(source.getLoc(), memrefOf(t), b.getStringAttr(n),
                                         b.getStringAttr(n), b.getI64IntegerAttr(-1),
                                         IntegerAttr());
    if (n == "tokens")
      tokensArg = arg;
  }
  return success();
}

FailureOr<func::FuncOp> EntryLowering::runTrain(StringRef name, bool withBackward) {
  backward = withBackward;
  b.setInsertionPointToEnd(&program.getBody().front());
  auto f = b.create<func::FuncOp>(source.getLoc(), name, b.getFunctionType({}, {}));
  Block *entry = f.addEntryBlock();
  b.setInsertionPointToEnd(entry);
  start = b.create<arith::ConstantIndexOp>(source.getLoc(), 0);
  if (failed(lowerTrainInputs()) || failed(lowerBlock(source.getBody().front()))) {
    f.erase();
    return failure();
  }
  return f;
}

/// Batch row `i` of a [B, T, D] buffer (the whole buffer when it is not
/// batched, i.e. of rank < 3, or when only one call covers the batch).
static Value batchRowOf(OpBuilder &b, Location loc, Value buf, int64_t i, int64_t calls) {
  auto t = cast<MemRefType>(buf.getType());
  if (t.getRank() < 3 || calls == 1)
    return buf;
  auto row = MemRefType::get(t.getShape().drop_front(), t.getElementType());
  Value idx = b.create<arith::ConstantIndexOp>(loc, i);
  return b.create<ex::LayerViewOp>(loc, row, buf, idx);
}

/// optimizer_step: the gradients' collectives come first and are all issued
/// before the first wait; the waits, then the norm before clipping (for the
/// app's log, StepArgs::gradNorm), come before the first op that reads the
/// gradients.
void EntryLowering::finishGradientCollectives(Location loc) {
  if (source.getName() != "optimizer_step" || gradNorm)
    return;
  for (Value r : pendingRequests)
    b.create<ex::WaitOp>(loc, r);
  pendingRequests.clear();
  gradNorm = b.create<ex::GradNormOp>(loc, b.getF64Type());
  b.create<ex::SetStepArgOp>(loc, b.getStringAttr("grad_norm"), gradNorm);
}

/// ZeRO-2's layer of a reverse repeat, one layer of look-ahead
/// (bmrt/zero2_ahead.h): the iteration of layer %l first finishes the
/// reduce-scatter of layer %l + 2, the last one to use slot %l % 2 that the
/// layer's backward is about to write; it ends by issuing its own, left in
/// flight while layer %l - 1's backward writes the other slot.
LogicalResult EntryLowering::lowerLayerReduceScatter(GradReduceScatterUnitOp r) {
  RepeatOp repeat = getInductionVarOwner(r.getLayer());
  if (!repeat.getReverse())
    return r.emitError("a layer's gradient reduce-scatter belongs in the backward's reverse "
                       "repeat");
  Location loc = r.getLoc();
  Value layer = lookup(r.getLayer());
  {
    // Right after the iteration's layer index: before anything of the
    // layer's backward (and before ZeRO-3's gather of its params, which
    // the previous iteration issued after this reduce-scatter).
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointAfterValue(layer);
    Value two = b.create<arith::ConstantIndexOp>(loc, 2);
    Value previous = b.create<arith::AddIOp>(loc, layer, two);
    b.create<ex::WaitUnitGradsOp>(loc, r.getParamsAttr(), previous);
  }
  b.create<ex::ReduceScatterAheadOp>(loc, r.getParamsAttr(), layer);
  layersInFlight.push_back({r.getParamsAttr(), (int64_t)repeat.getCount(), loc});
  return success();
}

/// After the reverse loops: the last two layers' reduce-scatters (layers 1
/// and 0, in issue order) are the ones no iteration finished.
void EntryLowering::finishLayerReduceScatters(Location loc) {
  for (const LayersInFlight &f : layersInFlight)
    for (int64_t l = std::min<int64_t>(f.count, 2) - 1; l >= 0; --l)
      b.create<ex::WaitUnitGradsOp>(f.loc, f.params, b.create<arith::ConstantIndexOp>(loc, l));
  layersInFlight.clear();
}

LogicalResult EntryLowering::lowerTrainOp(Operation *op, bool &handled) {
  if (LogicalResult r = lowerTuneOp(op, handled); failed(r) || handled)
    return r;
  handled = true;
  auto requestType = [&] { return ex::RequestType::get(b.getContext()); };
  if (auto r = dyn_cast<GradAllReduceOp>(op)) {
    // In the backward (bmb-data-parallel's overlap): issued there when the
    // app says so, waited by @optimizer_step.
    if (source.getName() != "optimizer_step") {
      if (r.getLayers())
        return r.emitError("a layer range of gradients can only be reduced in @optimizer_step");
      b.create<ex::DeferAllReduceGradsOp>(r.getLoc(), r.getParamsAttr(),
                                          r.getLayer() ? lookup(r.getLayer()) : Value());
      return success();
    }
    if (gradNorm)
      return r.emitError("gradient all-reduce after the gradients were read");
    // When the backward may have issued them, the buckets are its fallback:
    // first wait for what it deferred, then issue only if it did not.
    bool overlapped = false;
    if (auto model = source->getParentOfType<ModelOp>())
      if (auto fwdBwd = dyn_cast_or_null<func::FuncOp>(model.lookupSymbol("train_step")))
        fwdBwd.walk([&](GradAllReduceOp) { overlapped = true; });
    if (overlapped && pendingRequests.empty())
      b.create<ex::WaitDeferredOp>(r.getLoc());
    auto issue = b.create<ex::AllReduceGradsOp>(r.getLoc(), requestType(), r.getParamsAttr(),
                                                r.getLayersAttr(),
                                                overlapped ? b.getUnitAttr() : UnitAttr());
    pendingRequests.push_back(issue);
    return success();
  }
  if (auto g = dyn_cast<ParamGatherUnitOp>(op)) {
    // ZeRO-3: the unit's params from every rank's partition into the
    // staging, waited for at once: the reads that follow need them.
    // Mixed precision (`low`): then the unit is rounded into the reduced
    // staging the autocast GEMMs read.
    if (!g.getLayer()) {
      auto issue = b.create<ex::GatherUnitOp>(g.getLoc(), requestType(), g.getParamsAttr(),
                                              Value());
      b.create<ex::WaitOp>(g.getLoc(), issue);
      if (g.getLowAttr())
        b.create<ex::RoundUnitOp>(g.getLoc(), g.getParamsAttr(), Value(), g.getLowAttr());
      return success();
    }
    // A layer: its slot (of two) was filled ahead by the previous
    // iteration, which this one does for the next layer in turn.
    Value layer = lookup(g.getLayer());
    RepeatOp repeat = getInductionVarOwner(g.getLayer());
    b.create<ex::WaitUnitOp>(g.getLoc(), g.getParamsAttr(), layer);
    Value one = b.create<arith::ConstantIndexOp>(g.getLoc(), 1);
    Value next = repeat.getReverse()
                     ? b.create<arith::SubIOp>(g.getLoc(), layer, one).getResult()
                     : b.create<arith::AddIOp>(g.getLoc(), layer, one).getResult();
    b.create<ex::PrefetchUnitOp>(g.getLoc(), g.getParamsAttr(), next,
                                 b.getI64IntegerAttr(repeat.getCount()));
    // After the prefetch, so the next layer's gather travels meanwhile.
    if (g.getLowAttr())
      b.create<ex::RoundUnitOp>(g.getLoc(), g.getParamsAttr(), layer, g.getLowAttr());
    return success();
  }
  if (auto r = dyn_cast<GradReduceScatterUnitOp>(op)) {
    if (r.getLayer())
      return lowerLayerReduceScatter(r);
    // ZeRO-2's unit 0 (the params outside repeats, staged for the whole
    // backward): the layers' reduce-scatters still in flight are finished
    // first, then the unit is summed over ranks into the rank's partition.
    finishLayerReduceScatters(r.getLoc());
    auto issue = b.create<ex::ReduceScatterUnitOp>(r.getLoc(), requestType(), r.getParamsAttr(),
                                                   Value());
    b.create<ex::WaitOp>(r.getLoc(), issue);
    b.create<ex::AddUnitGradsOp>(r.getLoc(), r.getParamsAttr(), Value());
    return success();
  }
  if (auto r = dyn_cast<GradReduceScatterOp>(op)) {
    if (gradNorm)
      return r.emitError("gradient reduce-scatter after the gradients were read");
    pendingRequests.push_back(b.create<ex::ReduceScatterGradsOp>(r.getLoc(), requestType()));
    return success();
  }
  finishGradientCollectives(op->getLoc());
  if (auto g = dyn_cast<ParamAllGatherOp>(op)) {
    b.create<ex::WaitOp>(g.getLoc(), b.create<ex::AllGatherParamsOp>(g.getLoc(), requestType()));
    return success();
  }
  auto batchRow = [&](Location l, Value buf, int64_t i, int64_t calls) {
    return batchRowOf(b, l, buf, i, calls);
  };
  Location loc = op->getLoc();
  auto fresh = [&](Value res) {
    Value buf = alloc(loc, res.getType());
    buffers[res] = buf;
    return buf;
  };
  if (auto r = dyn_cast<RepeatOp>(op))
    return lowerTrainRepeat(r);
  if (auto r = dyn_cast<func::ReturnOp>(op))
    return lowerTrainReturn(r);
  if (auto d = dyn_cast<DropoutOp>(op)) {
    // evaluate (and p = 0): the identity, as at inference.
    if (!backward || d.getP().convertToDouble() == 0) {
      handled = false;
      return success();
    }
    return lowerTrainDropout(d);
  }
  if (auto fc = dyn_cast<FusedClassifierOp>(op)) {
    if (lossBuffer)
      return fc.emitError("a train program has one loss");
    Value logits = fresh(fc.getDlogits());
    b.create<ex::GemmOp>(loc, lookup(fc.getInput()), lookup(fc.getWeight()), Value(), Value(),
                         logits, Value(), b.getBoolAttr(true), b.getStringAttr("none"));
    auto lt = cast<MemRefType>(logits.getType());
    int64_t rows = lt.getNumElements() / lt.getShape().back();
    lossBuffer = b.create<ex::AllocOp>(loc, MemRefType::get({rows}, lt.getElementType()),
                                       IntegerAttr());
    Value scale = backward ? stepArg(loc, "dloss_scale") : Value();
    b.create<ex::ClassifierOp>(loc, logits, lookup(fc.getTargets()), lossBuffer,
                               backward ? logits : Value(), scale, fc.getIgnoreIndexAttr());
    buffers[fc.getLoss()] = lossBuffer;
    return success();
  }
  if (auto ce = dyn_cast<CrossEntropyOp>(op)) {
    // Logits computed by the model (a head the fused classifier could not
    // take over, e.g. one with a bias, or a classification head): the same
    // classifier kernel on their buffer. Its gradient, bmb.cross_entropy_grad
    // of the same logits and targets, is the kernel's dlogits: in the logits
    // buffer itself when nothing else reads the logits, else a fresh one.
    if (lossBuffer)
      return ce.emitError("a train program has one loss");
    Value logits = lookup(ce.getLogits());
    auto lt = cast<MemRefType>(logits.getType());
    int64_t rows = lt.getNumElements() / lt.getShape().back();
    lossBuffer = b.create<ex::AllocOp>(loc, MemRefType::get({rows}, lt.getElementType()),
                                       IntegerAttr());
    SmallVector<CrossEntropyGradOp> grads;
    bool othersRead = false;
    for (Operation *user : ce.getLogits().getUsers()) {
      auto g = dyn_cast<CrossEntropyGradOp>(user);
      if (g && g.getTargets() == ce.getTargets() &&
          g.getIgnoreIndex() == ce.getIgnoreIndex())
        grads.push_back(g);
      else if (user != op)
        othersRead = true;
    }
    Value dlogits, scale;
    if (backward && !grads.empty()) {
      dlogits = othersRead ? alloc(loc, ce.getLogits().getType()) : logits;
      scale = stepArg(loc, "dloss_scale");
      for (CrossEntropyGradOp g : grads)
        buffers[g.getResult()] = dlogits;
    }
    b.create<ex::ClassifierOp>(loc, logits, lookup(ce.getTargets()), lossBuffer, dlogits, scale,
                               ce.getIgnoreIndexAttr());
    buffers[ce.getResult()] = lossBuffer;
    return success();
  }
  if (auto g = dyn_cast<CrossEntropyGradOp>(op)) {
    if (!lookup(g.getResult()))
      return g.emitError("bmb.cross_entropy_grad is lowered with its bmb.cross_entropy (the "
                         "train step's loss, of the same logits and targets) only");
    return success();
  }
  if (auto g = dyn_cast<LinearGradInputOp>(op)) {
    // dx[rows, in] = dy[rows, out] . w[out, in]
    b.create<ex::MatmulOp>(loc, lookup(g.getGrad()), lookup(g.getWeight()), fresh(g.getResult()),
                           false, false, false);
    return success();
  }
  if (auto g = dyn_cast<LinearGradWeightOp>(op)) {
    // dw[out, in] (+)= dy^T . x
    Value target = accumulateTarget(g.getResult());
    bool acc = static_cast<bool>(target);
    if (!acc)
      target = fresh(g.getResult());
    b.create<ex::MatmulOp>(loc, lookup(g.getGrad()), lookup(g.getInput()), target, true, false,
                           acc);
    return success();
  }
  if (auto r = dyn_cast<ReduceSumOp>(op)) {
    auto in = cast<RankedTensorType>(r.getInput().getType());
    auto out = cast<RankedTensorType>(r.getResult().getType());
    ArrayRef<int64_t> s = out.getShape();
    while (!s.empty() && s.front() == 1)
      s = s.drop_front();
    if (s.size() > static_cast<size_t>(in.getRank()) || in.getShape().take_back(s.size()) != s)
      return r.emitError("reduce_sum to ")
             << out << " (not a suffix of " << in
             << ") is not supported by the train lowering yet";
    Value target = accumulateTarget(r.getResult());
    if (!target)
      target = zeroed(loc, out), buffers[r.getResult()] = target;
    b.create<ex::SumRowsOp>(loc, lookup(r.getInput()), target);
    return success();
  }
  if (auto a = dyn_cast<ActGradOp>(op)) {
    Value out = fresh(a.getResult());
    b.create<ex::EwiseOp>(loc, b.getStringAttr(stringifyActivation(a.getAct()).str() + "_grad"),
                          ValueRange{lookup(a.getInput()), lookup(a.getGrad())}, out, Value(),
                          FloatAttr());
    return success();
  }
  auto gradOut = [&](Value res) { return gradientOutput(loc, res); };
  if (auto n = dyn_cast<LayerNormGradOp>(op)) {
    Value dx = gradOut(n.getDinput()), dw = gradOut(n.getDweight()), db = gradOut(n.getDbias());
    if (!dx && !dw && !db)
      return success();
    b.create<ex::NormGradOp>(loc, b.getStringAttr("layernorm"), lookup(n.getGrad()),
                             lookup(n.getInput()), lookup(n.getWeight()), dx, dw, db,
                             n.getEpsAttr());
    return success();
  }
  if (auto n = dyn_cast<RMSNormGradOp>(op)) {
    Value dx = gradOut(n.getDinput()), dw = gradOut(n.getDweight());
    if (!dx && !dw)
      return success();
    b.create<ex::NormGradOp>(loc, b.getStringAttr("rmsnorm"), lookup(n.getGrad()),
                             lookup(n.getInput()), lookup(n.getWeight()), dx, dw, Value(),
                             n.getEpsAttr());
    return success();
  }
  if (auto a = dyn_cast<AttentionGradOp>(op)) {
    // The kernel writes all three: unused ones still need a buffer.
    Value dq = zeroed(loc, a.getDquery().getType()), dk = zeroed(loc, a.getDkey().getType()),
          dv = zeroed(loc, a.getDvalue().getType());
    buffers[a.getDquery()] = dq;
    buffers[a.getDkey()] = dk;
    buffers[a.getDvalue()] = dv;
    int64_t width = cast<RankedTensorType>(a.getQuery().getType()).getShape().back();
    // Prefix tuning: the prefixes' gradients go into their params' (or
    // fresh zeroed buffers); the kernel writes both.
    Value pk, pv, dpk, dpv;
    if (a.getPrefixKey()) {
      pk = lookup(a.getPrefixKey()), pv = lookup(a.getPrefixValue());
      for (auto [res, buf] : llvm::zip_equal(a.getDprefix(), std::array<Value *, 2>{&dpk, &dpv})) {
        *buf = gradOut(res);
        if (!*buf)
          *buf = zeroed(loc, res.getType()), buffers[res] = *buf;
      }
    }
    b.create<ex::AttentionGradOp>(loc, lookup(a.getGrad()), lookup(a.getQuery()),
                                  lookup(a.getKey()), lookup(a.getValue()),
                                  a.getMask() ? lookup(a.getMask()) : Value(), pk, pv, dpk, dpv,
                                  a.getPrefixGate() ? lookup(a.getPrefixGate()) : Value(), dq,
                                  dk, dv,
                                  a.getCausalAttr(), a.getHeadsAttr(), a.getKvHeadsAttr(),
                                  b.getI64IntegerAttr(width / a.getHeads()), a.getScaleAttr());
    return success();
  }
  if (auto r = dyn_cast<RotaryOp>(op)) {
    // [B, T, D] rows with [T] positions: the kernel reads one position per
    // row, so with B > 1 (training) each batch row is its own call on its
    // slice. B = 1 and positions per row are the inference lowering's.
    auto xt = cast<RankedTensorType>(r.getInput().getType());
    int64_t batch = xt.getRank() == 3 ? xt.getDimSize(0) : 1;
    if (batch == 1 || cast<RankedTensorType>(r.getPositions().getType()).getRank() != 1) {
      handled = false;
      return success();
    }
    Value out = fresh(r.getResult());
    int64_t width = xt.getShape().back();
    for (int64_t i = 0; i < batch; ++i)
      b.create<ex::RotaryOp>(loc, batchRow(loc, lookup(r.getInput()), i, batch),
                             lookup(r.getPositions()), batchRow(loc, out, i, batch), Value(),
                             r.getHeadsAttr(), b.getI64IntegerAttr(width / r.getHeads()),
                             r.getBaseAttr());
    return success();
  }
  if (auto r = dyn_cast<RotaryGradOp>(op)) {
    Value dx = zeroed(loc, r.getResult().getType());
    buffers[r.getResult()] = dx;
    auto gt = cast<RankedTensorType>(r.getGrad().getType());
    int64_t width = gt.getShape().back();
    int64_t batch = gt.getRank() == 3 &&
                            cast<RankedTensorType>(r.getPositions().getType()).getRank() == 1
                        ? gt.getDimSize(0)
                        : 1;
    for (int64_t i = 0; i < batch; ++i) // per batch row, as the forward
      b.create<ex::RotaryGradOp>(loc, batchRow(loc, lookup(r.getGrad()), i, batch),
                                 lookup(r.getPositions()), batchRow(loc, dx, i, batch),
                                 r.getHeadsAttr(), b.getI64IntegerAttr(width / r.getHeads()),
                                 r.getBaseAttr());
    return success();
  }
  if (auto s = dyn_cast<SoftmaxGradOp>(op)) {
    if (failed(checkSoftmaxAxis(s, s.getOutput(), static_cast<int64_t>(s.getAxis()), "train")))
      return failure();
    Value dx = zeroed(loc, s.getResult().getType());
    buffers[s.getResult()] = dx;
    b.create<ex::SoftmaxGradOp>(loc, lookup(s.getOutput()), lookup(s.getGrad()), dx);
    return success();
  }
  if (auto e = dyn_cast<EmbeddingGradOp>(op)) {
    Value target = accumulateTarget(e.getResult());
    if (!target)
      target = zeroed(loc, e.getResult().getType()), buffers[e.getResult()] = target;
    b.create<ex::EmbeddingGradOp>(loc, lookup(e.getGrad()), lookup(e.getIds()), target);
    return success();
  }
  if (auto t = dyn_cast<TakeGradOp>(op)) {
    Value dx = zeroed(loc, t.getResult().getType());
    buffers[t.getResult()] = dx;
    b.create<ex::TakeGradOp>(loc, lookup(t.getGrad()), dx, t.getAxisAttr(), t.getIndexAttr());
    return success();
  }
  if (auto s = dyn_cast<StackGetOp>(op)) {
    buffers[s.getResult()] = b.create<ex::LayerViewOp>(loc, memrefOf(s.getResult().getType()),
                                                       lookup(s.getStack()),
                                                       lookup(s.getIndex()));
    return success();
  }
  if (auto g = dyn_cast<GradAccumulateOp>(op)) {
    if (fusedAccumulates.contains(g))
      return success(); // its producer accumulated into the gradient already
    if (g.getIndices().size() > 1)
      return g.emitError("gradients of params stacked by nested repeats are not supported "
                         "yet");
    Value layer = g.getIndices().empty() ? Value() : lookup(g.getIndices()[0]);
    Value ref = b.create<ex::GradRefOp>(loc, memrefOf(g.getValue().getType()), g.getParamAttr(),
                                        layer);
    b.create<ex::EwiseOp>(loc, b.getStringAttr("add"), ValueRange{ref, lookup(g.getValue())},
                          ref, Value(), FloatAttr());
    return success();
  }
  if (auto c = dyn_cast<ClipGradNormOp>(op)) {
    b.create<ex::ClipGradsOp>(loc, gradNorm, c.getMaxNormAttr());
    return success();
  }
  if (auto u = dyn_cast<AdamWUpdateOp>(op)) {
    b.create<ex::AdamWUpdateOp>(loc, u.getParamAttr(), stepArg(loc, "lr"), stepArg(loc, "step"),
                                u.getBeta1Attr(), u.getBeta2Attr(), u.getEpsAttr(),
                                u.getWeightDecayAttr());
    if (u.getWeightDecay().convertToDouble() != 0)
      if (auto p = program.lookupSymbol<ex::ParamOp>(u.getParamAttr()))
        p.setDecay(true);
    return success();
  }
  if (auto u = dyn_cast<SGDUpdateOp>(op)) {
    b.create<ex::SGDUpdateOp>(loc, u.getParamAttr(), stepArg(loc, "lr"), stepArg(loc, "step"),
                              u.getMomentumAttr(), u.getWeightDecayAttr());
    if (u.getWeightDecay().convertToDouble() != 0)
      if (auto p = program.lookupSymbol<ex::ParamOp>(u.getParamAttr()))
        p.setDecay(true);
    return success();
  }
  if (isa<ConcatOp>(op))
    return op->emitError("'bmb.concat' (the gradient of split) is not supported by the train "
                         "lowering yet");
  handled = false;
  return success();
}

Value EntryLowering::gradientOutput(Location loc, Value res) {
  if (res.use_empty())
    return {};
  if (Value t = accumulateTarget(res))
    return t;
  Value buf = zeroed(loc, res.getType());
  buffers[res] = buf;
  return buf;
}

LogicalResult EntryLowering::lowerTrainRepeat(RepeatOp op) {
  Location loc = op.getLoc();
  if (currentLoop)
    return op.emitError("a repeat inside a repeat is not supported by the train lowering yet");
  SmallVector<Value> carried = carriedBuffers(op);
  // One [count, ...] buffer per saved value, live from the forward loop to
  // the backward loop that reads it.
  SmallVector<Value> stacked;
  for (Value s : op.getStackedSaves())
    stacked.push_back(alloc(loc, s.getType()));
  int64_t count = op.getCount();
  Value lb = b.create<arith::ConstantIndexOp>(loc, 0);
  Value ub = b.create<arith::ConstantIndexOp>(loc, count);
  Value step = b.create<arith::ConstantIndexOp>(loc, 1);
  auto loop = b.create<scf::ForOp>(loc, lb, ub, step);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPoint(loop.getBody()->getTerminator());
  Value iv = loop.getInductionVar();
  if (op.getReverse()) // the backward of layer count-1-j
    iv = b.create<arith::SubIOp>(loc, b.create<arith::ConstantIndexOp>(loc, count - 1), iv);
  buffers[op.getInductionVar()] = iv;
  for (auto [arg, buf] : llvm::zip(op.getCarriedArgs(), carried))
    buffers[arg] = buf;
  for (auto [arg, inv] : llvm::zip(op.getInvariantArgs(), op.getInvariant()))
    buffers[arg] = lookup(inv);
  FailureOr<YieldOp> yield = lowerRepeatBody(op, loop);
  if (failed(yield))
    return failure();
  ValueRange yielded = yield->getOperands();
  ValueRange saves = yielded.drop_front(carried.size());
  for (auto [v, dest] : llvm::zip(saves, stacked)) {
    Value src = lookup(v);
    auto sliceType = memrefOf(v.getType());
    // A buffer of this iteration: write it in place in its slice.
    if (auto a = src.getDefiningOp<ex::AllocOp>(); a && a->getBlock() == loop.getBody()) {
      OpBuilder::InsertionGuard g2(b);
      b.setInsertionPoint(a);
      Value view = b.create<ex::LayerViewOp>(loc, sliceType, dest, iv);
      a.getResult().replaceAllUsesWith(view);
      for (auto &[k, mapped] : buffers)
        if (mapped == src)
          mapped = view;
      if (lossBuffer == src)
        lossBuffer = view;
      a.erase();
      continue;
    }
    Value view = b.create<ex::LayerViewOp>(loc, sliceType, dest, iv);
    b.create<ex::EwiseOp>(loc, b.getStringAttr("copy"), ValueRange{src}, view, Value(),
                          FloatAttr());
  }
  yieldCarried(op, loop, carried, yielded.take_front(carried.size()));
  for (auto [res, buf] : llvm::zip(op.getStackedSaves(), stacked))
    buffers[res] = buf;
  return success();
}

LogicalResult EntryLowering::lowerTrainReturn(func::ReturnOp ret) {
  // A tune job's loss also returns the class scores and (a manual
  // verbalizer's) word probabilities; word_probs are evaluate's only.
  if (ret.getNumOperands() > (tune ? 3u : 1u))
    return ret.emitError(tune ? "a tune entry returns the loss, the scores and the word "
                                "probabilities only"
                              : "a train entry returns the loss only");
  if (ret.getNumOperands() >= 1) {
    if (!lossBuffer || lookup(ret.getOperand(0)) != lossBuffer)
      return ret.emitError("the loss must be a bmb.fused_classifier's, a bmb.cross_entropy's "
                           "or a bmb.verbalizer_loss's");
    b.create<ex::OutputOp>(ret.getLoc(), b.getStringAttr("losses"), lossBuffer,
                           b.getI64IntegerAttr(-1));
  }
  for (unsigned i = 1; i < ret.getNumOperands(); ++i) {
    const char *name = i == 1 ? "scores" : "word_probs";
    if (i == 2 && backward)
      continue;
    Value buf = lookup(ret.getOperand(i));
    if (!buf || !buf.getDefiningOp<ex::AllocOp>())
      return ret.emitError("the tune output '") << name << "' must be a buffer of its own";
    b.create<ex::OutputOp>(ret.getLoc(), b.getStringAttr(name), buf, b.getI64IntegerAttr(-1));
  }
  finishLayerReduceScatters(ret.getLoc()); // zero = 2 without a unit 0
  if (source.getName() == "optimizer_step") {
    finishGradientCollectives(ret.getLoc());
    b.create<ex::ZeroGradsOp>(ret.getLoc());
  }
  b.create<func::ReturnOp>(ret.getLoc());
  return success();
}

/// `offload`: none, or optimizer (bmb-offload-optimizer rewrites the
/// lowered step); what the offloaded step does not cover yet is refused at
/// the setting.
static LogicalResult checkOffload(JobOp job) {
  DictionaryAttr settings = job.getSettings();
  auto offload = settings.getAs<StringAttr>("offload");
  if (!offload || offload.getValue() == "none")
    return success();
  Location at = settingLoc(job, "offload");
  if (offload.getValue() != "optimizer")
    return emitError(at, "offload = ")
           << offload.getValue()
           << " is not implemented yet (offload = optimizer is: AdamW's state and update in "
              "host memory; docs/distributed.md)";
  if (job.getKind() == JobKind::Tune)
    return emitError(at, "offload = optimizer is not implemented for tune jobs yet (train "
                         "jobs have it)");
  auto opt = settings.getAs<DictionaryAttr>("optimizer");
  auto kind = opt ? opt.getAs<StringAttr>("kind") : StringAttr();
  if (kind && kind.getValue() == "sgd")
    return emitError(at, "offload = optimizer updates AdamW (adamw, adam) on the host; SGD is "
                         "not implemented there yet");
  return success();
}

LogicalResult mlir::bmb::lowerTrainJob(ModuleOp module, JobOp job) {
  auto model = SymbolTable::lookupNearestSymbolFrom<ModelOp>(job, job.getModelAttr());
  func::FuncOp loss = findFunc(module, model, "loss"),
               trainStep = findFunc(module, model, "train_step"),
               optStep = findFunc(module, model, "optimizer_step");
  if (!loss || !trainStep || !optStep)
    return job.emitError("a train job is lowered from @loss, @train_step and @optimizer_step: "
                         "run bmb-attach-loss, bmb-autodiff and bmb-insert-optimizer first "
                         "(bmb-train-pipeline)");
  // Settings this lowering cannot honour yet are errors, not ignored knobs.
  DictionaryAttr settings = job.getSettings();
  if (failed(checkOffload(job)))
    return failure();
  if (failed(checkLossScaling(job)))
    return failure();
  auto schedule = settings.getAs<DictionaryAttr>("schedule");
  const double jobLr = settingNum(settings.getAs<DictionaryAttr>("optimizer"), "lr", 1e-3);
  if (double minLr = settingNum(schedule, "min_lr", 0); minLr < 0 || minLr > jobLr)
    return emitError(settingLoc(job, "schedule"), "schedule min_lr = ")
           << shortNumber(minLr) << " must be between 0 and the optimizer's lr ("
           << shortNumber(jobLr) << "): the schedule decays from lr to min_lr";
  auto data = settings.getAs<DictionaryAttr>("data");
  bool tune = job.getKind() == JobKind::Tune;
  if (data && !tune)
    if (auto k = data.getAs<StringAttr>("kind");
        k && !llvm::is_contained({"text", "tokens", "jsonl"}, k.getValue()))
      return job.emitError("data = ") << k.getValue()
                                      << "(...) is not supported by train programs yet "
                                         "(text, jsonl or tokens)";

  OpBuilder b(module.getContext());
  b.setInsertionPointToEnd(module.getBody());
  auto program = b.create<ex::ProgramOp>(job.getLoc(), job.getSymName());
  program.getBody().emplaceBlock();
  if (failed(lowerParams(model, program)))
    return failure();
  auto tokens = cast<RankedTensorType>(trainStep.getArgumentTypes().front());
  int64_t batch = tokens.getDimSize(0), seq = tokens.getDimSize(1);
  int64_t vocab = 0;
  struct Entry {
    func::FuncOp src;
    const char *name;
    bool backward;
  };
  for (Entry e : {Entry{trainStep, "forward_backward", true}, Entry{optStep, "optimizer_step", false},
                  Entry{loss, "evaluate", false}}) {
    inlineLayers(e.src);
    EntryLowering lowering(program, e.src, /*prefill=*/false, seq, /*train=*/true);
    lowering.tune = tune;
    if (failed(lowering.runTrain(e.name, e.backward)))
      return failure();
    vocab = std::max(vocab, lowering.vocab);
  }

  // The job's settings, resolved for the runtime's TrainInfo (emission
  // prints them). beta/eps/decay are the compiled updates' own.
  auto optimizer = settings.getAs<DictionaryAttr>("optimizer");
  std::string optKind = "adamw";
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weightDecay = 0, momentum = 0;
  bool first = true;
  for (Operation &op : optStep.getBody().front()) {
    if (auto u = dyn_cast<AdamWUpdateOp>(op); u && first) {
      beta1 = u.getBeta1().convertToDouble();
      beta2 = u.getBeta2().convertToDouble();
      eps = u.getEps().convertToDouble();
      first = false;
    }
    if (auto u = dyn_cast<AdamWUpdateOp>(op))
      weightDecay = std::max(weightDecay, u.getWeightDecay().convertToDouble());
    if (auto u = dyn_cast<SGDUpdateOp>(op)) {
      optKind = "sgd";
      momentum = u.getMomentum().convertToDouble();
      weightDecay = std::max(weightDecay, u.getWeightDecay().convertToDouble());
    }
  }
  int64_t optSlots = optKind == "adamw" ? 2 : momentum != 0 ? 1 : 0;
  // bmb-zero left its mark on @optimizer_step (stage 1: a partitioned
  // step) or on the backward (stage 2: per-unit reduce-scatters; stage 3:
  // per-unit gathers of the params as well).
  int64_t zeroStage = optStep.getOps<GradReduceScatterOp>().empty() ? 0 : 1;
  trainStep.walk([&](GradReduceScatterUnitOp) { zeroStage = 2; });
  trainStep.walk([&](ParamGatherUnitOp) { zeroStage = 3; });
  auto str = [&](DictionaryAttr d, StringRef key) {
    auto s = d ? d.getAs<StringAttr>(key) : StringAttr();
    return b.getStringAttr(s ? s.getValue() : "");
  };
  auto schedKind = schedule ? schedule.getAs<StringAttr>("kind") : StringAttr();
  MLIRContext *ctx = module.getContext();
  // The objective the app prepares batches for (bmb-attach-loss checked it).
  auto objective = settings.getAs<DictionaryAttr>("objective");
  auto objKind = objective ? objective.getAs<StringAttr>("kind") : StringAttr();
  bool masked = objKind && objKind.getValue() == "masked_lm";
  program->setAttr("train", b.getDictionaryAttr({
      b.getNamedAttr("objective", b.getStringAttr(masked ? "masked_lm" : "causal_lm")),
      b.getNamedAttr("mask_prob", b.getF64FloatAttr(masked ? settingNum(objective, "prob", 0.15)
                                                           : 0.0)),
      b.getNamedAttr("mask_id", b.getI64IntegerAttr(
                                    masked ? (int64_t)settingNum(objective, "mask_id", -1) : -1)),
      b.getNamedAttr("batch", b.getI64IntegerAttr(batch)),
      b.getNamedAttr("seq", b.getI64IntegerAttr(seq)),
      b.getNamedAttr("optimizer", b.getStringAttr(optKind)),
      b.getNamedAttr("opt_slots", b.getI64IntegerAttr(optSlots)),
      b.getNamedAttr("lr", b.getF64FloatAttr(settingNum(optimizer, "lr", 1e-3))),
      b.getNamedAttr("beta1", b.getF64FloatAttr(beta1)),
      b.getNamedAttr("beta2", b.getF64FloatAttr(beta2)),
      b.getNamedAttr("eps", b.getF64FloatAttr(eps)),
      b.getNamedAttr("weight_decay", b.getF64FloatAttr(weightDecay)),
      b.getNamedAttr("momentum", b.getF64FloatAttr(momentum)),
      b.getNamedAttr("clip", b.getF64FloatAttr(settingNum(settings, "clip", 0))),
      b.getNamedAttr("schedule", b.getStringAttr(schedKind ? schedKind.getValue() : "constant")),
      b.getNamedAttr("warmup", b.getI64IntegerAttr((int64_t)settingNum(schedule, "warmup", 0))),
      b.getNamedAttr("min_lr", b.getF64FloatAttr(settingNum(schedule, "min_lr", 0))),
      b.getNamedAttr("steps", b.getI64IntegerAttr((int64_t)settingNum(settings, "steps", 0))),
      b.getNamedAttr("accumulate",
                     b.getI64IntegerAttr((int64_t)settingNum(settings, "grad_accum", 1))),
      b.getNamedAttr("eval_every", b.getI64IntegerAttr((int64_t)settingNum(settings, "eval_every", 0))),
      b.getNamedAttr("save_every", b.getI64IntegerAttr((int64_t)settingNum(settings, "save_every", 0))),
      b.getNamedAttr("log_every", b.getI64IntegerAttr((int64_t)settingNum(settings, "log_every", 0))),
      b.getNamedAttr("zero_stage", b.getI64IntegerAttr(zeroStage)),
      b.getNamedAttr("data", str(data, "path")),
      b.getNamedAttr("data_tokenizer", str(data, "tokenizer")),
  }));
  // Mixed precision: the GEMMs carry bmb-autocast's marks; the app reports
  // the setting (TrainInfo::precision) and scales fp16's loss. fp32 programs
  // have no attribute.
  recordMixedPrecision(job, program);
  if (tune && failed(recordTune(job, model, program, loss)))
    return failure();
  program->setAttr("job", StringAttr::get(ctx, job.getSymName()));
  program->setAttr("model", StringAttr::get(ctx, model.getSymName()));
  program->setAttr("kind", StringAttr::get(ctx, "causal_lm"));
  program->setAttr("vocab", b.getI64IntegerAttr(vocab));
  program->setAttr("ctx", b.getI64IntegerAttr(seq));
  program->setAttr("from", StringAttr::get(ctx, job.getFrom().value_or("")));
  program->setAttr("settings", job.getSettingsAttr());
  program->setAttr("source", module->hasAttr("bmb.source") ? module->getAttr("bmb.source")
                                                          : StringAttr::get(ctx, ""));
  lowerNameMaps(model, program);
  for (func::FuncOp f : {loss, trainStep, optStep})
    if (f->getParentOp() == module.getOperation())
      f.erase();
  model.erase();
  job.erase();
  for (Operation &op : llvm::make_early_inc_range(module.getBody()->getOperations()))
    if (isa<TemplateOp, VerbalizerOp, RecipeOp, JobOp, ModelOp>(op))
      op.erase();
  return success();
}
