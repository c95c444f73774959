//===- FuseKernels.cpp - Element-wise ops into epilogues and kernels ------===//
//
// Every bmb_exec.ewise leaves this pass as one of:
//  1. a GEMM epilogue: act(x . w^T + b) when the activation reads a GEMM's
//     output and nothing else does (bias + GELU, as cuBLASLt and llm.c's
//     matmul_forward offer);
//  2. a fused residual norm: s = a + r followed by norm(s) becomes
//     bmrt::residual_layernorm_forward / residual_rmsnorm_forward (llm.c's
//     fused residual + layernorm), writing both s and norm(s);
//  3. a GEMM residual: y = x . w^T + b + r when the add reads a GEMM's
//     output (the residual stream after the attention and MLP projections);
//  4. a generated bmb_exec.kernel with an arith/math body, where chains of
//     element-wise ops over the same elements are merged into one kernel
//     (a producer whose output only the consumer reads). Activation
//     derivatives of training (`gelu_tanh_grad` (x, dy), ...) are calls of
//     the runtime's __host__ __device__ element functions
//     (bmb_exec.elem_call), so they merge like any other element op.
//     Kernels with scalar operands (training dropout's key, built by the
//     train lowering) merge too, keeping each scalar once.
// Fusion may only produce a generated kernel or a kernel of the declared
// list (DESIGN: "One source, two backends"); the forms above are exactly the
// declared gemm and norm signatures in runtime/include/bmrt/kernels.h.
//
// Buffers are written once before this pass (lowering allocates a fresh
// destination per value), which is what makes the "only reader" checks
// sufficient.
//
//===----------------------------------------------------------------------===//
#include "dialects/BmbExec/BmbExecOps.h"
#include "passes/ExecBuffers.h"
#include "passes/Passes.h"

#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::bmb {
#define GEN_PASS_DEF_FUSEKERNELSPASS
#include "passes/Passes.h.inc"
} // namespace mlir::bmb

using namespace mlir;
using namespace mlir::bmb;
using namespace mlir::bmb::exec;

namespace {

bool isActivation(StringRef k) {
  return llvm::is_contained({"gelu_tanh", "gelu_erf", "relu", "silu", "tanh"}, k);
}

/// A fresh alloc used exactly by `writer` (as its output) and `reader`.
bool isPrivateTemp(Value buf, Operation *writer, Operation *reader) {
  if (!buf.getDefiningOp<AllocOp>())
    return false;
  for (Operation *u : buf.getUsers())
    if (u != writer && u != reader)
      return false;
  return soleWriter(buf) == writer;
}

/// Whether any op strictly between `from` and `to` (same block) writes one of
/// `bufs` or touches `touched`.
/// Buffers compare by their roots: in training programs a buffer is written
/// more than once (gradients accumulate), and through views.
bool interferes(Operation *from, Operation *to, ArrayRef<Value> written, Value touched) {
  auto sameRoot = [](Value a, Value b) { return a && b && rootBuffer(a) == rootBuffer(b); };
  for (Operation *it = from->getNextNode(); it && it != to; it = it->getNextNode()) {
    for (Value w : writtenBuffers(it))
      if (llvm::any_of(written, [&](Value v) { return sameRoot(v, w); }) || sameRoot(w, touched))
        return true;
    if (touched && llvm::is_contained(it->getOperands(), touched))
      return true;
    if (it->getNumRegions())
      return true; // a loop in between: be conservative
  }
  return false;
}

bool sameType(Value a, Value b) { return a.getType() == b.getType(); }

/// Whether `gemm` reads `buf` as a, b or bias (through views). It must not
/// then write `buf`: BLAS forbids c aliasing a or b. A repeat body
/// `relu(linear(h))` whose result is written straight into the carried h
/// fused into gemm(h) outs(h) before this check.
bool gemmReads(GemmOp gemm, Value buf) {
  Value root = rootBuffer(buf);
  for (Value v : {gemm.getA(), gemm.getB(), gemm.getBias()})
    if (v && rootBuffer(v) == root)
      return true;
  return false;
}

/// 1. act(gemm(...)) -> gemm(...) with the activation as its epilogue.
bool fuseActivation(EwiseOp e) {
  if (!isActivation(e.getKind()))
    return false;
  Value x = e.getInputs()[0];
  auto gemm = dyn_cast_or_null<GemmOp>(soleWriter(x));
  if (!gemm || gemm.getAct() != "none" || gemm.getResidual() || !sameType(x, e.getOut()) ||
      !isPrivateTemp(x, gemm, e) || gemm->getBlock() != e->getBlock())
    return false;
  if (interferes(gemm, e, {}, e.getOut()) || gemmReads(gemm, e.getOut()))
    return false;
  // Only a def in the GEMM's block can be after it (an outer def, such as a
  // repeat's carried buffer, dominates it already); isBeforeInBlock across
  // blocks moved the carried buffer's alloc into the loop.
  if (Operation *def = e.getOut().getDefiningOp();
      def && def->getBlock() == gemm->getBlock() && gemm->isBeforeInBlock(def))
    def->moveBefore(gemm);
  gemm.setAct(e.getKind());
  gemm.getOutMutable().assign(e.getOut());
  Operation *tmp = x.getDefiningOp();
  e.erase();
  tmp->erase();
  return true;
}

/// 2. s = a + r; y = norm(s) -> y = norm(a + r), writing s too.
bool fuseResidualNorm(EwiseOp e) {
  if (e.getKind() != "add")
    return false;
  Value a = e.getInputs()[0], r = e.getInputs()[1], s = e.getOut();
  if (!sameType(a, s) || !sameType(r, s))
    return false;
  NormOp norm;
  for (Operation *u : s.getUsers())
    if (auto n = dyn_cast<NormOp>(u); n && n.getX() == s && !n.getResidual() &&
                                      n->getBlock() == e->getBlock() && e->isBeforeInBlock(n))
      if (!norm || n->isBeforeInBlock(norm))
        norm = n;
  if (!norm || interferes(e, norm, {a, r}, s))
    return false;
  norm.getXMutable().assign(a);
  norm.getResidualMutable().assign(r);
  norm.getSumMutable().assign(s);
  e.erase();
  return true;
}

/// 3. y = gemm(...) + r -> gemm(...) with residual r.
bool fuseResidualGemm(EwiseOp e) {
  if (e.getKind() != "add")
    return false;
  Value s = e.getOut();
  for (int i = 0; i < 2; ++i) {
    Value g = e.getInputs()[i], r = e.getInputs()[1 - i];
    auto gemm = dyn_cast_or_null<GemmOp>(soleWriter(g));
    if (!gemm || gemm.getResidual() || !sameType(g, s) || !sameType(r, s) ||
        !isPrivateTemp(g, gemm, e) || gemm->getBlock() != e->getBlock())
      continue;
    // r must be final when the GEMM runs and defined before it; s must be
    // untouched in between (it is written at the GEMM now).
    if (interferes(gemm, e, {r}, s) || gemmReads(gemm, s))
      continue;
    if (Operation *def = r.getDefiningOp(); def && def->getBlock() == gemm->getBlock() &&
                                             gemm->isBeforeInBlock(def))
      continue;
    if (Operation *def = s.getDefiningOp(); def && def->getBlock() == gemm->getBlock() &&
                                            gemm->isBeforeInBlock(def))
      def->moveBefore(gemm);
    gemm.getResidualMutable().assign(r);
    gemm.getOutMutable().assign(s);
    Operation *tmp = g.getDefiningOp();
    e.erase();
    tmp->erase();
    return true;
  }
  return false;
}

/// The scalar body of one element-wise kind.
Value buildScalar(OpBuilder &b, Location loc, StringRef kind, ValueRange in, FloatAttr factor) {
  Type t = in[0].getType();
  auto cst = [&](double v) { return b.create<arith::ConstantOp>(loc, b.getFloatAttr(t, v)); };
  Value x = in[0];
  if (kind == "add")
    return b.create<arith::AddFOp>(loc, in[0], in[1]);
  if (kind == "sub")
    return b.create<arith::SubFOp>(loc, in[0], in[1]);
  if (kind == "mul")
    return b.create<arith::MulFOp>(loc, in[0], in[1]);
  if (kind == "scale")
    return b.create<arith::MulFOp>(loc, x, cst(factor.getValueAsDouble()));
  if (kind == "copy")
    return x;
  // Activation derivatives (x, dy): the runtime's own element function.
  if (kind.ends_with("_grad"))
    return b.create<ElemCallOp>(loc, t, b.getStringAttr(kind.drop_back(5).str() + "_backward"),
                                in);
  if (kind == "relu")
    return b.create<arith::MaximumFOp>(loc, x, cst(0.0));
  if (kind == "tanh")
    return b.create<math::TanhOp>(loc, x);
  if (kind == "silu") {
    Value e = b.create<math::ExpOp>(loc, b.create<arith::NegFOp>(loc, x));
    return b.create<arith::DivFOp>(loc, x, b.create<arith::AddFOp>(loc, cst(1.0), e));
  }
  Value half = b.create<arith::MulFOp>(loc, cst(0.5), x);
  Value phi;
  if (kind == "gelu_tanh") {
    // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), multiplied in the
    // order of bmrt::gelu_tanh (((0.044715 x) x) x): a GEMM epilogue and a
    // generated kernel then give the same bits, so which one fusion picks
    // (it depends on who else reads the pre-activation, e.g. a save that
    // activation checkpointing removes) does not change the result.
    Value cubic = b.create<arith::MulFOp>(
        loc, b.create<arith::MulFOp>(loc, b.create<arith::MulFOp>(loc, cst(0.044715), x), x), x);
    Value inner = b.create<arith::AddFOp>(loc, x, cubic);
    phi = b.create<math::TanhOp>(loc, b.create<arith::MulFOp>(loc, cst(0.7978845608028654), inner));
  } else {
    // gelu_erf: 0.5 x (1 + erf(x / sqrt(2)))
    phi = b.create<math::ErfOp>(loc, b.create<arith::MulFOp>(loc, x, cst(0.7071067811865476)));
  }
  return b.create<arith::MulFOp>(loc, half, b.create<arith::AddFOp>(loc, cst(1.0), phi));
}

/// 4a. One ewise -> one generated kernel.
LogicalResult toKernel(EwiseOp e, int &counter) {
  auto outT = cast<MemRefType>(e.getOut().getType());
  if (!isa<FloatType>(outT.getElementType()))
    return e.emitError("element-wise '") << e.getKind() << "' on " << outT.getElementType()
                                         << " is not supported by generated kernels yet";
  OpBuilder b(e);
  auto k = b.create<KernelOp>(e.getLoc(), b.getStringAttr("k" + std::to_string(counter++)),
                              e.getInputs(), e.getOut(), e.getRows(), DenseI64ArrayAttr(),
                              DenseI64ArrayAttr(), IntegerAttr());
  Block *body = new Block();
  k.getBody().push_back(body);
  SmallVector<Value> args;
  for (Value in : e.getInputs())
    args.push_back(body->addArgument(cast<MemRefType>(in.getType()).getElementType(), e.getLoc()));
  b.setInsertionPointToStart(body);
  Value v = buildScalar(b, e.getLoc(), e.getKind(), args, e.getFactorAttr());
  b.create<KernelYieldOp>(e.getLoc(), v);
  e.erase();
  return success();
}

/// 4b. producer kernel -> consumer kernel, when the consumer is the only
/// reader of the producer's output and both run over the same elements.
bool mergeKernels(KernelOp consumer) {
  for (auto [idx, in] : llvm::enumerate(consumer.getInputs())) {
    auto producer = dyn_cast_or_null<KernelOp>(soleWriter(in));
    if (!producer || producer->getBlock() != consumer->getBlock() ||
        !sameType(in, consumer.getOut()) || producer.getRows() != consumer.getRows() ||
        !isPrivateTemp(in, producer, consumer) ||
        interferes(producer, consumer, SmallVector<Value>(producer.getInputs()), Value()))
      continue;
    OpBuilder b(consumer);
    SmallVector<Value> inputs(producer.getInputs());
    for (auto [j, v] : llvm::enumerate(consumer.getInputs()))
      if (j != idx)
        inputs.push_back(v);
    // Scalar operands (dropout's seed, step, ...): both kernels', once each.
    // They dominate the consumer, where the merged kernel goes.
    llvm::SetVector<Value> scalars;
    scalars.insert(producer.getScalars().begin(), producer.getScalars().end());
    scalars.insert(consumer.getScalars().begin(), consumer.getScalars().end());
    auto merged = b.create<KernelOp>(consumer.getLoc(), consumer.getSymNameAttr(), inputs,
                                     consumer.getOut(), consumer.getRows(), DenseI64ArrayAttr(),
                                     DenseI64ArrayAttr(), IntegerAttr(),
                                     scalars.getArrayRef());
    Block *body = new Block();
    merged.getBody().push_back(body);
    for (Value v : inputs)
      body->addArgument(cast<MemRefType>(v.getType()).getElementType(), consumer.getLoc());
    for (Value v : scalars)
      body->addArgument(v.getType(), consumer.getLoc());
    auto scalarArg = [&](Value operand) {
      return body->getArgument(inputs.size() + (llvm::find(scalars, operand) - scalars.begin()));
    };
    b.setInsertionPointToStart(body);
    IRMapping map;
    Block &pb = producer.getBody().front(), &cb = consumer.getBody().front();
    unsigned pIn = producer.getInputs().size(), cIn = consumer.getInputs().size();
    map.map(pb.getArguments().take_front(pIn), body->getArguments().take_front(pIn));
    for (auto [arg, s] : llvm::zip(pb.getArguments().drop_front(pIn), producer.getScalars()))
      map.map(arg, scalarArg(s));
    for (Operation &op : pb.without_terminator())
      b.clone(op, map);
    Value produced = map.lookupOrDefault(cast<KernelYieldOp>(pb.getTerminator()).getValue());
    unsigned next = pIn;
    for (auto [j, arg] : llvm::enumerate(cb.getArguments().take_front(cIn)))
      map.map(arg, j == idx ? produced : body->getArgument(next++));
    for (auto [arg, s] : llvm::zip(cb.getArguments().drop_front(cIn), consumer.getScalars()))
      map.map(arg, scalarArg(s));
    for (Operation &op : cb)
      b.clone(op, map);
    Operation *tmp = in.getDefiningOp();
    consumer.erase();
    producer.erase();
    tmp->erase();
    return true;
  }
  return false;
}

struct FuseKernelsPass : mlir::bmb::impl::FuseKernelsPassBase<FuseKernelsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // 1-3: epilogues and residual norms, until nothing changes.
    bool changed = true;
    while (changed) {
      changed = false;
      SmallVector<EwiseOp> ops;
      module.walk([&](EwiseOp e) { ops.push_back(e); });
      for (EwiseOp e : ops)
        if (fuseActivation(e) || fuseResidualNorm(e) || fuseResidualGemm(e)) {
          changed = true;
          break; // the list may hold erased ops now
        }
    }
    // 4: what is left becomes generated kernels, merged along chains.
    // New kernel names continue after the largest existing "kN" (merging
    // leaves gaps, so a count of the kernels could repeat a name).
    int counter = 0;
    module.walk([&](KernelOp k) {
      int n;
      if (!k.getSymName().drop_front().getAsInteger(10, n))
        counter = std::max(counter, n + 1);
    });
    SmallVector<EwiseOp> rest;
    module.walk([&](EwiseOp e) { rest.push_back(e); });
    for (EwiseOp e : rest)
      if (failed(toKernel(e, counter)))
        return signalPassFailure();
    changed = true;
    while (changed) {
      changed = false;
      SmallVector<KernelOp> kernels;
      module.walk([&](KernelOp k) { kernels.push_back(k); });
      for (KernelOp k : kernels)
        if (mergeKernels(k)) {
          changed = true;
          break;
        }
    }
  }
};

} // namespace
