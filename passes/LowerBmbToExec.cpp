//===- LowerBmbToExec.cpp - The model graph to the execution plan ---------===//
//
// Lowers an infer job's `bmb.model` (entries @prefill and @decode, made by
// MLIRGen from the same forward at T = ctx and T = 1) to a
// `bmb_exec.program`: tensors become buffers, each op one runtime kernel
// (bmb_exec.gemm, norm, attention, ...) or one named element-wise op
// (bmb_exec.ewise, turned into epilogues or generated kernels by
// bmb-fuse-kernels).
//
// Why a walk in program order and not the conversion framework or one-shot
// bufferization: every tensor gets a fresh destination buffer (allocs are
// written once, which fusion and memory planning rely on), and each value's
// *sequence dim* has to be tracked: in prefill the buffers are planned at
// capacity (T = ctx) while only `%rows` rows are valid (DESIGN decision 1),
// so ops on values with a sequence dim take `rows %rows`. The dim comes from
// the inputs (`tokens: [1, T]`) and `arange(T)` and flows through the ops.
//
// Inference specifics decided here:
//  - bmb.layer regions are inlined (emission is a flat list of calls);
//    bmb.repeat becomes an scf.for over the layer index, never unrolled;
//  - causal attention gets a KV cache (bmb_exec.state, stacked per layer
//    inside a repeat) shared by prefill and decode;
//  - dropout is the identity;
//  - a causal LM's prefill computes the logits of the last row only
//    (bmb_exec.row_view before the head's GEMM);
//  - a model with bidirectional attention is an encoder: prefill only.
//
//===----------------------------------------------------------------------===//
#include "passes/Autocast.h"
#include "passes/EntryLowering.h"
#include "passes/ExecBuffers.h"
#include "passes/Passes.h"

#include "mlir/IR/IRMapping.h"

namespace mlir::bmb {
#define GEN_PASS_DEF_LOWERBMBTOEXECPASS
#include "passes/Passes.h.inc"
} // namespace mlir::bmb

using namespace mlir;
using namespace mlir::bmb;

/// Inlines every bmb.layer (innermost first is not needed: cloning a layer's
/// body clones its nested layers, which a later round inlines).
void mlir::bmb::inlineLayers(func::FuncOp func) {
  while (true) {
    LayerOp layer;
    func.walk([&](LayerOp l) {
      layer = l;
      return WalkResult::interrupt();
    });
    if (!layer)
      return;
    OpBuilder b(layer);
    IRMapping map;
    Block *body = layer.getBodyBlock();
    map.map(body->getArguments(), layer.getInputs());
    for (Operation &op : body->without_terminator())
      b.clone(op, map);
    auto yield = cast<YieldOp>(body->getTerminator());
    for (auto [res, v] : llvm::zip(layer.getResults(), yield.getOperands()))
      res.replaceAllUsesWith(map.lookupOrDefault(v));
    layer.erase();
  }
}

LogicalResult EntryLowering::lowerInputs(func::FuncOp f) {
  for (auto [i, arg] : llvm::enumerate(source.getArguments())) {
    auto name = source.getArgAttrOfType<StringAttr>(i, "bmb.name");
    std::string n = name ? name.str() : "input" + std::to_string(i);
    StringRef kind = llvm::StringSwitch<StringRef>(n)
                         .Cases("tokens", "ids", "input_ids", "tokens")
                         .Cases("token_types", "types", "segments", "token_types")
                         .Cases("mask", "attention_mask", "mask")
                         .Default("");
    if (kind.empty())
      return source.emitError("input '")
             << n << "' of the model: an infer program is fed tokens, token_types "
             << "and mask only";
    auto t = cast<RankedTensorType>(arg.getType());
    if (t.getRank() != 2 || t.getDimSize(0) != 1)
      return source.emitError("input '")
             << n << "' must be [1, T]: infer programs run one sequence per call, got " << t;
    Value buf = b.create<ex::InputOp>(f.getLoc(), memrefOf(t), b.getStringAttr(n),
                                      b.getStringAttr(kind), b.getI64IntegerAttr(1),
                                      IntegerAttr());
    buffers[arg] = buf;
    seqDims[arg] = 1;
    if (kind == "tokens")
      tokensArg = arg;
  }
  return success();
}

FailureOr<func::FuncOp> EntryLowering::run() {
  b.setInsertionPointToEnd(&program.getBody().front());
  Type index = b.getIndexType();
  auto f = b.create<func::FuncOp>(source.getLoc(), source.getName(),
                                  b.getFunctionType({index, index}, {}));
  f.setArgAttr(0, "bmb.name", b.getStringAttr("start"));
  f.setArgAttr(1, "bmb.name", b.getStringAttr("rows"));
  Block *entry = f.addEntryBlock();
  start = entry->getArgument(0);
  rows = entry->getArgument(1);
  b.setInsertionPointToEnd(entry);
  if (failed(lowerInputs(f)) || failed(lowerBlock(source.getBody().front()))) {
    f.erase();
    return failure();
  }
  return f;
}

LogicalResult EntryLowering::lowerBlock(Block &block) {
  for (Operation &op : block)
    if (failed(lowerOp(&op)))
      return failure();
  return success();
}

void EntryLowering::ewise(Operation *op, StringRef kind, FloatAttr factor) {
  Value res = op->getResult(0);
  int64_t d = broadcastSeqDim(op);
  Value out = alloc(op->getLoc(), res.getType());
  SmallVector<Value> ins;
  for (Value v : op->getOperands())
    ins.push_back(lookup(v));
  b.create<ex::EwiseOp>(op->getLoc(), b.getStringAttr(kind), ins, out, rowsFor(d), factor);
  buffers[res] = out;
  seqDims[res] = d;
}

LogicalResult EntryLowering::lowerOp(Operation *op) {
  Location loc = op->getLoc();
  // An autocast op's GEMMs take the mark along (passes/Autocast.h), and so
  // does an autocast attention (forward or gradient).
  AutocastMarker marker(b, op, [](Operation *g) {
    return isa<ex::GemmOp, ex::MatmulOp, ex::AttentionOp, ex::AttentionGradOp>(g);
  });
  if (train) {
    bool handled = false;
    LogicalResult r = lowerTrainOp(op, handled);
    if (handled)
      return r;
  }
  auto same = [&](Value res, Value like) { seqDims[res] = seqDim(like); };
  if (auto p = dyn_cast<ParamGetOp>(op)) {
    if (p.getIndices().size() > 1)
      return p.emitError("parameters stacked by nested repeats are not supported by the "
                         "inference lowering yet");
    Value layer = p.getIndices().empty() ? Value() : lookup(p.getIndices()[0]);
    buffers[p.getResult()] = b.create<ex::ParamRefOp>(
        loc, memrefOf(p.getResult().getType()), p.getParamAttr(), layer);
    return success();
  }
  // Per-iteration deltas (bmb-insert-deltas): table lookups by the layer.
  if (auto s = dyn_cast<IterationSlotOp>(op)) {
    buffers[s.getResult()] =
        b.create<ex::IterationSlotOp>(loc, b.getIndexType(), lookup(s.getIteration()),
                                      s.getSlotsAttr());
    return success();
  }
  if (auto g = dyn_cast<IterationGateOp>(op)) {
    Value out = alloc(loc, g.getResult().getType());
    b.create<ex::IterationGateOp>(loc, lookup(g.getIteration()), g.getSlotsAttr(), out);
    buffers[g.getResult()] = out;
    return success();
  }
  if (auto e = dyn_cast<EmbeddingOp>(op)) {
    Value out = alloc(loc, e.getResult().getType());
    b.create<ex::EmbeddingOp>(loc, lookup(e.getIds()), lookup(e.getWeight()), out,
                              rowsFor(seqDim(e.getIds())));
    // The table the tokens index is the vocabulary (not the first embedding
    // of any input: type(token_types) + word(tokens) gave vocab = types).
    if (e.getIds() == tokensArg && !vocab)
      vocab = cast<RankedTensorType>(e.getWeight().getType()).getDimSize(0);
    buffers[e.getResult()] = out;
    seqDims[e.getResult()] = seqDim(e.getIds());
    return success();
  }
  if (auto a = dyn_cast<ArangeOp>(op)) {
    Value out = alloc(loc, a.getResult().getType());
    // arange(T) is the positions of the rows: it starts at %start.
    bool isSeq = static_cast<int64_t>(a.getN()) == (prefill ? capacity : 1);
    Value from = isSeq ? start : b.create<arith::ConstantIndexOp>(loc, 0).getResult();
    b.create<ex::PositionsOp>(loc, out, from, isSeq ? rowsFor(0) : Value());
    buffers[a.getResult()] = out;
    seqDims[a.getResult()] = isSeq ? 0 : -1;
    return success();
  }
  if (isa<LinearOp, LMHeadOp>(op)) {
    Value x = op->getOperand(0), w = op->getOperand(1);
    Value bias = op->getNumOperands() > 2 ? lookup(op->getOperand(2)) : Value();
    Value out = alloc(loc, op->getResult(0).getType());
    b.create<ex::GemmOp>(loc, lookup(x), lookup(w), bias, Value(), out, rowsFor(seqDim(x)),
                         b.getBoolAttr(true), b.getStringAttr("none"));
    buffers[op->getResult(0)] = out;
    same(op->getResult(0), x);
    return success();
  }
  if (auto n = dyn_cast<LayerNormOp>(op)) {
    Value out = alloc(loc, n.getResult().getType());
    b.create<ex::NormOp>(loc, b.getStringAttr("layernorm"), lookup(n.getInput()),
                         lookup(n.getWeight()), n.getBias() ? lookup(n.getBias()) : Value(),
                         Value(), Value(), out, rowsFor(seqDim(n.getInput())), n.getEpsAttr());
    buffers[n.getResult()] = out;
    same(n.getResult(), n.getInput());
    return success();
  }
  if (auto n = dyn_cast<RMSNormOp>(op)) {
    Value out = alloc(loc, n.getResult().getType());
    b.create<ex::NormOp>(loc, b.getStringAttr("rmsnorm"), lookup(n.getInput()),
                         lookup(n.getWeight()), Value(), Value(), Value(), out,
                         rowsFor(seqDim(n.getInput())), n.getEpsAttr());
    buffers[n.getResult()] = out;
    same(n.getResult(), n.getInput());
    return success();
  }
  if (auto a = dyn_cast<AttentionOp>(op))
    return lowerAttention(a);
  if (auto r = dyn_cast<RotaryOp>(op)) {
    Value out = alloc(loc, r.getResult().getType());
    int64_t width = cast<RankedTensorType>(r.getInput().getType()).getShape().back();
    b.create<ex::RotaryOp>(loc, lookup(r.getInput()), lookup(r.getPositions()), out,
                           rowsFor(seqDim(r.getInput())), r.getHeadsAttr(),
                           b.getI64IntegerAttr(width / r.getHeads()), r.getBaseAttr());
    buffers[r.getResult()] = out;
    same(r.getResult(), r.getInput());
    return success();
  }
  if (auto g = dyn_cast<GeluOp>(op)) {
    ewise(op, g.getApproximate() == GeluApproximation::Tanh ? "gelu_tanh" : "gelu_erf");
    return success();
  }
  if (isa<ReluOp>(op))
    return ewise(op, "relu"), success();
  if (isa<SiluOp>(op))
    return ewise(op, "silu"), success();
  if (isa<TanhOp>(op))
    return ewise(op, "tanh"), success();
  if (isa<AddOp>(op))
    return ewise(op, "add"), success();
  if (isa<SubOp>(op))
    return ewise(op, "sub"), success();
  if (isa<MulOp>(op))
    return ewise(op, "mul"), success();
  if (auto s = dyn_cast<ScaleOp>(op))
    return ewise(op, "scale", s.getFactorAttr()), success();
  if (auto d = dyn_cast<DropoutOp>(op)) {
    // Inference: dropout is the identity.
    buffers[d.getResult()] = lookup(d.getInput());
    same(d.getResult(), d.getInput());
    return success();
  }
  if (auto s = dyn_cast<SoftmaxOp>(op)) {
    if (failed(checkSoftmaxAxis(s, s.getInput(), static_cast<int64_t>(s.getAxis()), "host")))
      return failure();
    Value out = alloc(loc, s.getResult().getType());
    b.create<ex::SoftmaxOp>(loc, lookup(s.getInput()), out, rowsFor(seqDim(s.getInput())));
    buffers[s.getResult()] = out;
    same(s.getResult(), s.getInput());
    return success();
  }
  if (auto t = dyn_cast<TakeOp>(op)) {
    int64_t d = seqDim(t.getInput());
    int64_t axis = static_cast<int64_t>(t.getAxis());
    if (d == axis && prefill && t.getIndex() != 0)
      return t.emitError("take along the sequence dim needs index 0 at inference (the "
                         "prompt length is a run-time value)");
    if (d >= 0 && d < axis)
      return t.emitError("take after the sequence dim is not supported at inference yet");
    Value out = alloc(loc, t.getResult().getType());
    b.create<ex::TakeOp>(loc, lookup(t.getInput()), out, t.getAxisAttr(), t.getIndexAttr());
    buffers[t.getResult()] = out;
    seqDims[t.getResult()] = -1;
    return success();
  }
  if (auto r = dyn_cast<ReshapeOp>(op)) {
    auto in = cast<RankedTensorType>(r.getInput().getType());
    auto outT = cast<RankedTensorType>(r.getResult().getType());
    int64_t d = seqDim(r.getInput());
    if (d >= 0 && (outT.getRank() <= d ||
                   in.getShape().take_front(d + 1) != outT.getShape().take_front(d + 1)))
      return r.emitError("reshape across the sequence dim is not supported at inference");
    buffers[r.getResult()] =
        b.create<ex::ReshapeOp>(loc, memrefOf(outT), lookup(r.getInput()));
    seqDims[r.getResult()] = d;
    return success();
  }
  if (auto rep = dyn_cast<RepeatOp>(op))
    return lowerRepeat(rep);
  if (auto ret = dyn_cast<func::ReturnOp>(op))
    return lowerReturn(ret);
  if (isa<CrossEntropyOp, RandomOp>(op))
    return op->emitError("'") << op->getName() << "' has no place in an infer program";
  return op->emitError("'") << op->getName() << "' is not supported by the "
                            << (train ? "train" : "inference") << " lowering yet";
}

LogicalResult EntryLowering::lowerAttention(AttentionOp a) {
  Location loc = a.getLoc();
  auto q = cast<RankedTensorType>(a.getQuery().getType());
  auto k = cast<RankedTensorType>(a.getKey().getType());
  int64_t headDim = q.getShape().back() / a.getHeads();
  Value kBuf = lookup(a.getKey()), vBuf = lookup(a.getValue());
  Value kCache = kBuf, vCache = vBuf;
  int64_t cap = k.getDimSize(1);
  // Prefix tuning: the caches hold the P prefix rows before the tokens.
  int64_t prefixRows = 0;
  if (a.getPrefixKey())
    prefixRows = cast<RankedTensorType>(a.getPrefixKey().getType()).getDimSize(0);
  if (a.getCausal() && !train) {
    // The KV cache: one per attention op, in the same order in prefill and
    // decode, so both entries name the same state.
    int64_t width = k.getShape().back();
    scf::ForOp loop = currentLoop;
    std::string name = "kv" + std::to_string(attentionCount++);
    SmallVector<int64_t> shape = {1, prefixRows + capacity, width};
    Value layer;
    if (loop) {
      auto ub = loop.getUpperBound().getDefiningOp<arith::ConstantIndexOp>();
      shape.insert(shape.begin(), ub.value());
      layer = loop.getInductionVar();
    }
    auto full = MemRefType::get(shape, k.getElementType());
    auto slice = MemRefType::get({1, prefixRows + capacity, width}, k.getElementType());
    for (const char *part : {".k", ".v"}) {
      std::string sym = name + part;
      if (!SymbolTable::lookupSymbolIn(program, sym)) {
        OpBuilder::InsertionGuard g(b);
        b.setInsertionPointToStart(&program.getBody().front());
        b.create<ex::StateOp>(loc, sym, full, static_cast<bool>(loop), IntegerAttr());
      }
      Value ref = b.create<ex::StateRefOp>(loc, slice, FlatSymbolRefAttr::get(b.getContext(), sym),
                                           layer);
      (part[1] == 'k' ? kCache : vCache) = ref;
    }
    cap = prefixRows + capacity;
  } else {
    sawBidirectional |= !a.getCausal();
    if (prefixRows > 0) {
      // No KV cache (training, encoders): caches of the prefix and the
      // tokens, per sequence.
      SmallVector<int64_t> shape(k.getShape());
      shape[1] += prefixRows;
      kCache = alloc(loc, RankedTensorType::get(shape, k.getElementType()));
      vCache = alloc(loc, RankedTensorType::get(shape, k.getElementType()));
      cap = shape[1];
    }
  }
  Value out = alloc(loc, a.getResult().getType());
  Value mask = a.getMask() ? lookup(a.getMask()) : Value();
  Value pk = a.getPrefixKey() ? lookup(a.getPrefixKey()) : Value();
  Value pv = a.getPrefixValue() ? lookup(a.getPrefixValue()) : Value();
  Value gate = a.getPrefixGate() ? lookup(a.getPrefixGate()) : Value();
  b.create<ex::AttentionOp>(loc, lookup(a.getQuery()), kBuf, vBuf, kCache, vCache, mask, pk, pv,
                            gate, out, start, rowsFor(seqDim(a.getQuery())), a.getCausalAttr(),
                            a.getHeadsAttr(), a.getKvHeadsAttr(),
                            b.getI64IntegerAttr(headDim), b.getI64IntegerAttr(cap),
                            a.getScaleAttr());
  buffers[a.getResult()] = out;
  seqDims[a.getResult()] = seqDim(a.getQuery());
  return success();
}

SmallVector<Value> EntryLowering::carriedBuffers(RepeatOp op) {
  Location loc = op.getLoc();
  // Carried buffers: the initial value's buffer when nothing else reads that
  // value, else a copy.
  SmallVector<Value> carried;
  for (Value init : op.getIter()) {
    Value buf = lookup(init);
    bool onlyHere = llvm::all_of(init.getUsers(), [&](Operation *u) { return u == op; });
    if (!onlyHere || !buf.getDefiningOp<ex::AllocOp>()) {
      Value copy = alloc(loc, init.getType());
      b.create<ex::EwiseOp>(loc, b.getStringAttr("copy"), ValueRange{buf}, copy,
                            rowsFor(seqDim(init)), FloatAttr());
      buf = copy;
    }
    carried.push_back(buf);
  }
  return carried;
}

LogicalResult EntryLowering::lowerRepeat(RepeatOp op) {
  Location loc = op.getLoc();
  SmallVector<Value> carried = carriedBuffers(op);
  Value lb = b.create<arith::ConstantIndexOp>(loc, 0);
  Value ub = b.create<arith::ConstantIndexOp>(loc, op.getCount());
  Value step = b.create<arith::ConstantIndexOp>(loc, 1);
  auto loop = b.create<scf::ForOp>(loc, lb, ub, step);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPoint(loop.getBody()->getTerminator());
  buffers[op.getInductionVar()] = loop.getInductionVar();
  for (auto [arg, buf, init] : llvm::zip(op.getCarriedArgs(), carried, op.getIter())) {
    buffers[arg] = buf;
    seqDims[arg] = seqDim(init);
  }
  for (auto [arg, inv] : llvm::zip(op.getInvariantArgs(), op.getInvariant())) {
    buffers[arg] = lookup(inv);
    seqDims[arg] = seqDim(inv);
  }
  if (currentLoop)
    return op.emitError("a repeat inside a repeat is not supported by the inference "
                        "lowering yet");
  FailureOr<YieldOp> yield = lowerRepeatBody(op, loop);
  if (failed(yield))
    return failure();
  yieldCarried(op, loop, carried, yield->getOperands());
  return success();
}

FailureOr<YieldOp> EntryLowering::lowerRepeatBody(RepeatOp op, scf::ForOp loop) {
  Block *body = op.getBodyBlock();
  currentLoop = loop;
  for (Operation &inner : body->without_terminator())
    if (failed(lowerOp(&inner)))
      return failure();
  currentLoop = nullptr;
  return cast<YieldOp>(body->getTerminator());
}

void EntryLowering::yieldCarried(RepeatOp op, scf::ForOp loop, ArrayRef<Value> carried,
                                 ValueRange yielded) {
  Location loc = op.getLoc();
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPoint(loop.getBody()->getTerminator());
  for (auto [v, dest, res] : llvm::zip(yielded, carried, op.getResults())) {
    Value src = lookup(v);
    buffers[res] = dest;
    seqDims[res] = seqDim(v);
    if (src == dest)
      continue;
    // Write the yielded value straight into the carried buffer when its
    // writer is the last to touch it: nothing in the body reads the carried
    // buffer after that writer, and the writer itself does not read it.
    auto a = src.getDefiningOp<ex::AllocOp>();
    Operation *writer = a ? ex::soleWriter(src) : nullptr;
    bool ok = writer && writer->getBlock() == loop.getBody() &&
              !llvm::is_contained(writer->getOperands(), dest);
    if (ok)
      for (Operation *it = writer->getNextNode(); it; it = it->getNextNode())
        if (llvm::is_contained(it->getOperands(), dest))
          ok = false;
    if (ok) {
      a.getResult().replaceAllUsesWith(dest);
      a.erase();
    } else {
      b.create<ex::EwiseOp>(loc, b.getStringAttr("copy"), ValueRange{src}, dest,
                            rowsFor(seqDim(v)), FloatAttr());
    }
  }
}

LogicalResult EntryLowering::lowerReturn(func::ReturnOp ret) {
  for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
    Value buf = lookup(v);
    int64_t d = seqDim(v);
    std::string name = d < 0 ? "pooled" : "hidden";
    // A causal LM's prefill needs the next-token logits of the last row
    // only: the head's GEMM reads one row (bmb_exec.row_view at %rows - 1).
    // Only when nothing but the head writes or reads the logits: another
    // reader (softmax(logits) returned too) needs every row, and erasing the
    // full-size alloc under it crashed.
    auto gemmAlloc = buf.getDefiningOp<ex::AllocOp>();
    ex::GemmOp head = gemmAlloc && buf.hasOneUse()
                          ? dyn_cast_or_null<ex::GemmOp>(ex::soleWriter(buf))
                          : nullptr;
    if (i == 0 && !sawBidirectional && head && d >= 0) {
      name = "logits";
      if (prefill) {
        OpBuilder::InsertionGuard guard(b);
        auto aT = cast<MemRefType>(head.getA().getType());
        auto oT = cast<MemRefType>(head.getOut().getType());
        int64_t k = aT.getShape().back(), n = oT.getShape().back();
        b.setInsertionPoint(head);
        Value last = b.create<arith::SubIOp>(
            ret.getLoc(), rows, b.create<arith::ConstantIndexOp>(ret.getLoc(), 1));
        Value row = b.create<ex::RowViewOp>(ret.getLoc(), MemRefType::get({1, 1, k}, aT.getElementType()),
                                            head.getA(), last, b.getI64IntegerAttr(k));
        Value out = b.create<ex::AllocOp>(ret.getLoc(),
                                          MemRefType::get({1, 1, n}, oT.getElementType()),
                                          IntegerAttr());
        head.getAMutable().assign(row);
        head.getOutMutable().assign(out);
        head.getRowsMutable().clear();
        gemmAlloc.erase();
        buf = out;
      }
      d = -1;
    }
    if (i > 0 && name != "pooled")
      name += std::to_string(i);
    b.create<ex::OutputOp>(ret.getLoc(), b.getStringAttr(name), buf, b.getI64IntegerAttr(d));
  }
  b.create<func::ReturnOp>(ret.getLoc());
  return success();
}

LogicalResult mlir::bmb::lowerParams(ModelOp model, ex::ProgramOp program) {
  OpBuilder b(program.getContext());
  b.setInsertionPointToEnd(&program.getBody().front());
  for (auto p : model.getOps<ParamOp>()) {
    if (p.getStacked() > 1)
      return p.emitError("parameters stacked by nested repeats are not supported yet");
    auto t = p.getTensorType();
    InitAttr init = p.getInit();
    DictionaryAttr initDict = b.getDictionaryAttr({
        b.getNamedAttr("kind", b.getStringAttr(stringifyInitKind(init.getKind()))),
        b.getNamedAttr("a", b.getF64FloatAttr(init.getA().convertToDouble())),
        b.getNamedAttr("b", b.getF64FloatAttr(init.getB().convertToDouble())),
    });
    auto lowered = b.create<ex::ParamOp>(p.getLoc(), p.getSymName(),
                          MemRefType::get(t.getShape(), t.getElementType()),
                          p.getStacked() == 1, p.getFrozen(), /*decay=*/false,
                          IntegerAttr(), IntegerAttr(), IntegerAttr(),
                          /*layer_stride=*/IntegerAttr(), /*staging_offset=*/IntegerAttr(),
                          initDict);
    // Delta params (bmb-insert-deltas) keep their mark for the runtime's
    // checkpoint layouts (bmrt::ParamInfo::delta).
    for (StringRef mark : {"bmb.delta", "bmb.lora_merge"})
      if (Attribute a = p->getAttr(mark))
        lowered->setAttr(mark, a);
  }
  return success();
}

void mlir::bmb::lowerNameMaps(ModelOp model, ex::ProgramOp program) {
  OpBuilder b(program.getContext());
  // Checkpoint name maps travel with the params they name: the runtime
  // gets them as tables (bmrt::NameMap) to load Hugging Face files.
  b.setInsertionPointToEnd(&program.getBody().front());
  for (auto map : model.getOps<CheckpointMapOp>()) {
    SmallVector<Attribute> rules;
    for (Attribute a : map.getRules()) {
      auto rule = cast<NameRuleAttr>(a);
      SmallVector<Attribute> parts(rule.getParts().begin(), rule.getParts().end());
      rules.push_back(b.getDictionaryAttr({
          b.getNamedAttr("external", b.getStringAttr(rule.getExternal())),
          b.getNamedAttr("parts", b.getArrayAttr(parts)),
          b.getNamedAttr("axis", b.getI64IntegerAttr(rule.getAxis())),
          b.getNamedAttr("transpose", b.getBoolAttr(rule.getTranspose())),
          b.getNamedAttr("tied", b.getBoolAttr(rule.getTied())),
      }));
    }
    b.create<ex::NameMapOp>(map.getLoc(), map.getName(), b.getArrayAttr(rules));
  }
}

namespace {

struct LowerBmbToExecPass : mlir::bmb::impl::LowerBmbToExecPassBase<LowerBmbToExecPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    JobOp job;
    for (auto j : module.getOps<JobOp>())
      if (j.getKind() == JobKind::Infer)
        job = j;
    // A train or tune job (after bmb-attach-loss, bmb-autodiff, bmb-insert-optimizer).
    for (auto j : module.getOps<JobOp>())
      if ((j.getKind() == JobKind::Train || j.getKind() == JobKind::Tune) && !job) {
        if (failed(lowerTrainJob(module, j)))
          return signalPassFailure();
        return;
      }
    // Already lowered (IR read back from a dump): nothing to do.
    if (!job && !module.getOps<ex::ProgramOp>().empty())
      return;
    if (!job) {
      module.emitError("bmb-lower-to-exec needs an infer, train or tune job: executables for "
                       "compress jobs are not implemented yet");
      return signalPassFailure();
    }
    // Settings this lowering cannot honour yet are errors, not silently
    // ignored knobs.
    DictionaryAttr settings = job.getSettings();
    if (auto q = settings.getAs<StringAttr>("quantize"); q && q.getValue() != "none") {
      job.emitError("quantize = ") << q.getValue()
                                   << " is not implemented yet (int8 inference comes with "
                                      "the compression work); remove it to build in fp32";
      return signalPassFailure();
    }
    // fp64 is for training's gradient checks; the app samples f32 logits.
    if (auto p = settings.getAs<StringAttr>("precision"); p && p.getValue() != "fp32") {
      emitError(settingLoc(job, "precision"), "precision = ")
          << p.getValue() << " is not implemented yet for infer programs (fp32 only)";
      return signalPassFailure();
    }
    if (settings.get("memory")) {
      job.emitError("memory budgets (CPU-GPU layer scheduling) are not implemented yet; "
                    "remove `memory` to build a program that keeps every layer resident");
      return signalPassFailure();
    }
    if (auto bt = settings.getAs<IntegerAttr>("batch"); bt && bt.getInt() != 1) {
      job.emitError("batch = ") << bt.getInt()
                                << ": infer programs run one sequence per call for now "
                                   "(batch = 1)";
      return signalPassFailure();
    }
    auto model = SymbolTable::lookupNearestSymbolFrom<ModelOp>(job, job.getModelAttr());
    func::FuncOp prefillSrc, decodeSrc;
    for (auto f : model.getOps<func::FuncOp>())
      (f.getName() == "decode" ? decodeSrc : prefillSrc) = f;
    if (!prefillSrc || prefillSrc.getName() != "prefill") {
      model.emitError("an infer model needs the entries @prefill and @decode (bmbc makes "
                      "them from the forward)");
      return signalPassFailure();
    }
    OpBuilder b(module.getContext());
    b.setInsertionPointToEnd(module.getBody());
    auto program = b.create<ex::ProgramOp>(job.getLoc(), job.getSymName());
    program.getBody().emplaceBlock();
    b.setInsertionPointToEnd(&program.getBody().front());
    if (failed(lowerParams(model, program)))
      return signalPassFailure();
    int64_t capacity =
        cast<RankedTensorType>(prefillSrc.getArgumentTypes().front()).getDimSize(1);
    bool encoder = false;
    int64_t vocab = 0;
    for (func::FuncOp src : {prefillSrc, decodeSrc}) {
      if (!src || (encoder && src == decodeSrc))
        continue;
      inlineLayers(src);
      EntryLowering lowering(program, src, src == prefillSrc, capacity);
      if (failed(lowering.run()))
        return signalPassFailure();
      encoder |= lowering.sawBidirectional;
      vocab = std::max(vocab, lowering.vocab);
    }
    if (encoder)
      if (auto d = SymbolTable::lookupSymbolIn(program, "decode"))
        d->erase();
    MLIRContext *ctx = module.getContext();
    program->setAttr("job", StringAttr::get(ctx, job.getSymName()));
    program->setAttr("model", StringAttr::get(ctx, model.getSymName()));
    program->setAttr("kind", StringAttr::get(ctx, encoder ? "encoder" : "causal_lm"));
    program->setAttr("vocab", b.getI64IntegerAttr(vocab));
    program->setAttr("ctx", b.getI64IntegerAttr(capacity));
    program->setAttr("from", StringAttr::get(ctx, job.getFrom().value_or("")));
    program->setAttr("settings", job.getSettingsAttr());
    program->setAttr("source", module->hasAttr("bmb.source")
                                   ? module->getAttr("bmb.source")
                                   : StringAttr::get(ctx, ""));
    lowerNameMaps(model, program);
    // The model graph is spent: what remains is the plan (and the job's
    // other declarations, which emission ignores).
    model.erase();
    job.erase();
    // Templates, verbalizers and recipes serve tune and compress jobs.
    for (Operation &op : llvm::make_early_inc_range(module.getBody()->getOperations()))
      if (isa<TemplateOp, VerbalizerOp, RecipeOp>(op))
        op.erase();
  }
};

} // namespace
