//===- ExecBuffers.cpp - Who reads and writes which bmb_exec buffer -------===//
#include "passes/ExecBuffers.h"

using namespace mlir;
using namespace mlir::bmb::exec;

SmallVector<Value, 2> mlir::bmb::exec::writtenBuffers(Operation *op) {
  SmallVector<Value, 2> out;
  if (auto e = dyn_cast<EwiseOp>(op))
    out.push_back(e.getOut());
  else if (auto k = dyn_cast<KernelOp>(op))
    out.push_back(k.getOut());
  else if (auto g = dyn_cast<GemmOp>(op))
    out.push_back(g.getOut());
  else if (auto n = dyn_cast<NormOp>(op)) {
    out.push_back(n.getOut());
    if (n.getSum())
      out.push_back(n.getSum());
  } else if (auto a = dyn_cast<AttentionOp>(op)) {
    out.push_back(a.getOut());
    // The new k/v rows are written into the caches (when they are not k and
    // v themselves).
    if (a.getKCache() != a.getK())
      out.push_back(a.getKCache());
    if (a.getVCache() != a.getV())
      out.push_back(a.getVCache());
  } else if (auto r = dyn_cast<RotaryOp>(op))
    out.push_back(r.getOut());
  else if (auto e = dyn_cast<EmbeddingOp>(op))
    out.push_back(e.getOut());
  else if (auto g = dyn_cast<IterationGateOp>(op))
    out.push_back(g.getOut());
  else if (auto p = dyn_cast<PositionsOp>(op))
    out.push_back(p.getOut());
  else if (auto s = dyn_cast<SoftmaxOp>(op))
    out.push_back(s.getOut());
  else if (auto t = dyn_cast<TakeOp>(op))
    out.push_back(t.getOut());
  // Training: every gradient output below accumulates (is read, too).
  else if (auto z = dyn_cast<ZeroOp>(op))
    out.push_back(z.getOut());
  else if (auto m = dyn_cast<MatmulOp>(op))
    out.push_back(m.getC());
  else if (auto s = dyn_cast<SumRowsOp>(op))
    out.push_back(s.getOut());
  else if (auto n = dyn_cast<NormGradOp>(op)) {
    for (Value g : {n.getDx(), n.getDw(), n.getDb()})
      if (g)
        out.push_back(g);
  } else if (auto a = dyn_cast<AttentionGradOp>(op)) {
    out.append({a.getDq(), a.getDk(), a.getDv()});
    if (a.getDprefixK())
      out.append({a.getDprefixK(), a.getDprefixV()});
  }
  else if (auto r = dyn_cast<RotaryGradOp>(op))
    out.push_back(r.getDx());
  else if (auto s = dyn_cast<SoftmaxGradOp>(op))
    out.push_back(s.getDx());
  else if (auto e = dyn_cast<EmbeddingGradOp>(op))
    out.push_back(e.getDtable());
  else if (auto t = dyn_cast<TakeGradOp>(op))
    out.push_back(t.getDx());
  else if (auto c = dyn_cast<ClassifierOp>(op)) {
    out.push_back(c.getLosses());
    if (c.getDlogits())
      out.push_back(c.getDlogits());
  }
  // Prompt tuning.
  else if (auto e = dyn_cast<SoftEmbeddingOp>(op))
    out.push_back(e.getOut());
  else if (auto e = dyn_cast<SoftEmbeddingGradOp>(op)) {
    for (Value g : {e.getDtable(), e.getDsoft()})
      if (g)
        out.push_back(g);
  } else if (auto g = dyn_cast<GatherRowsOp>(op))
    out.push_back(g.getOut());
  else if (auto g = dyn_cast<GatherRowsGradOp>(op))
    out.push_back(g.getDx());
  else if (auto v = dyn_cast<VerbalizerLossOp>(op)) {
    out.append({v.getLosses(), v.getScores(), v.getWordProbs()});
    if (v.getDlogits())
      out.push_back(v.getDlogits());
  }
  return out;
}

bool mlir::bmb::exec::accumulates(Operation *op) {
  if (auto m = dyn_cast<MatmulOp>(op))
    return m.getAccumulate();
  return isa<SumRowsOp, NormGradOp, AttentionGradOp, RotaryGradOp, SoftmaxGradOp,
             EmbeddingGradOp, TakeGradOp, SoftEmbeddingGradOp, GatherRowsGradOp>(op);
}

bool mlir::bmb::exec::readsBuffer(Operation *op, Value buf) {
  SmallVector<Value, 2> written = writtenBuffers(op);
  for (OpOperand &use : op->getOpOperands()) {
    if (use.get() != buf)
      continue;
    // A destination that is also passed as an input (gemm residual, an
    // in-place element-wise op) is read too.
    bool isDest = llvm::is_contained(written, buf);
    if (!isDest)
      return true;
    if (auto g = dyn_cast<GemmOp>(op); g && g.getResidual() == buf)
      return true;
    if (auto n = dyn_cast<NormOp>(op); n && (n.getX() == buf || n.getResidual() == buf))
      return true;
    if (auto e = dyn_cast<EwiseOp>(op); e && llvm::is_contained(e.getInputs(), buf))
      return true;
    if (auto k = dyn_cast<KernelOp>(op); k && llvm::is_contained(k.getInputs(), buf))
      return true;
    if (accumulates(op))
      return true;
    if (auto c = dyn_cast<ClassifierOp>(op); c && c.getLogits() == buf)
      return true;
    if (auto v = dyn_cast<VerbalizerLossOp>(op); v && v.getLogits() == buf)
      return true;
  }
  // Reads through the caches: attention reads what it wrote and all before.
  if (auto a = dyn_cast<AttentionOp>(op))
    return a.getKCache() == buf || a.getVCache() == buf;
  return false;
}

Operation *mlir::bmb::exec::soleWriter(Value buf) {
  Operation *writer = nullptr;
  for (Operation *user : buf.getUsers()) {
    if (!llvm::is_contained(writtenBuffers(user), buf))
      continue;
    if (writer && writer != user)
      return nullptr;
    writer = user;
  }
  return writer;
}

Value mlir::bmb::exec::rootBuffer(Value v) {
  while (true) {
    if (auto r = v.getDefiningOp<ReshapeOp>())
      v = r.getSource();
    else if (auto r = v.getDefiningOp<RowViewOp>())
      v = r.getSource();
    else if (auto l = v.getDefiningOp<LayerViewOp>())
      v = l.getSource();
    else
      return v;
  }
}
