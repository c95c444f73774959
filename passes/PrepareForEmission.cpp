//===- PrepareForEmission.cpp - Make the plan printable ---------------------===//
//
// The last pass before emission (as CIRCT's PrepareForEmission): afterwards
// the emitter only prints. It
//  - checks that memory planning gave every buffer, param and state an
//    offset, that outputs are whole planned buffers, and that nothing of the
//    `bmb` dialect is left;
//  - gives each generated kernel its index arithmetic: `inner` (elements
//    per row when the kernel runs over `%rows` rows) and, per input, the
//    divisor and modulus that map an output element to the input element it
//    broadcasts from (numpy rules, aligned from the right).
//
//===----------------------------------------------------------------------===//
#include "dialects/BmbExec/BmbExecOps.h"
#include "passes/ExecBuffers.h"
#include "passes/Passes.h"

namespace mlir::bmb {
#define GEN_PASS_DEF_PREPAREFOREMISSIONPASS
#include "passes/Passes.h.inc"
} // namespace mlir::bmb

using namespace mlir;
using namespace mlir::bmb;
using namespace mlir::bmb::exec;

namespace {

int64_t product(ArrayRef<int64_t> dims) {
  int64_t p = 1;
  for (int64_t d : dims)
    p *= d;
  return p;
}

ArrayRef<int64_t> stripLeadingOnes(ArrayRef<int64_t> s) {
  while (!s.empty() && s.front() == 1)
    s = s.drop_front();
  return s;
}

/// The index map of one kernel input: element i of the output reads element
/// (i / div) % mod of the input (0: no division / no modulus).
LogicalResult broadcastMap(KernelOp k, MemRefType in, MemRefType out, bool runtimeRows,
                           int64_t &div, int64_t &mod) {
  ArrayRef<int64_t> si = stripLeadingOnes(in.getShape());
  ArrayRef<int64_t> so = stripLeadingOnes(out.getShape());
  div = 0;
  mod = 0;
  if (si == so)
    return success();
  // A suffix of the output's shape: repeats every numel(in) elements.
  if (si.size() <= so.size() && so.take_back(si.size()) == si) {
    if (runtimeRows && si.size() == so.size())
      return success();
    mod = product(si);
    return success();
  }
  // The output's leading dims followed by ones: [T, 1] into [T, C].
  size_t lead = 0;
  while (lead < si.size() && lead < so.size() && si[lead] == so[lead])
    ++lead;
  if (lead > 0 && si.size() == so.size() &&
      llvm::all_of(si.drop_front(lead), [](int64_t d) { return d == 1; })) {
    div = product(so.drop_front(lead));
    return success();
  }
  return k.emitError("a generated kernel cannot broadcast ")
         << in << " to " << out << " (only suffixes and trailing ones)";
}

struct PrepareForEmissionPass : mlir::bmb::impl::PrepareForEmissionPassBase<PrepareForEmissionPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    bool failed = false;
    auto fail = [&](Operation *op, const Twine &msg) {
      op->emitError(msg);
      failed = true;
    };
    module.walk([&](Operation *op) {
      if (op->getDialect() && op->getDialect()->getNamespace() == "bmb")
        fail(op, "is left over from the model graph: lower it first (bmb-lower-to-exec)");
      if (auto a = dyn_cast<AllocOp>(op); a && !a.getOffset())
        fail(op, "has no offset: run memory planning (bmb-plan-memory) first");
      if (auto i = dyn_cast<InputOp>(op); i && !i.getOffset())
        fail(op, "has no offset: run memory planning (bmb-plan-memory) first");
      if (auto p = dyn_cast<ParamOp>(op); p && !p.getOffset())
        fail(op, "has no offset: run memory planning (bmb-plan-memory) first");
      if (auto s = dyn_cast<StateOp>(op); s && !s.getOffset())
        fail(op, "has no offset: run memory planning (bmb-plan-memory) first");
      if (isa<EwiseOp>(op))
        fail(op, "is not fused yet: run bmb-fuse-kernels first");
      if (auto o = dyn_cast<OutputOp>(op); o && !o.getBuffer().getDefiningOp<AllocOp>())
        fail(op, "must name a planned activation buffer");
    });
    if (failed)
      return signalPassFailure();
    module.walk([&](KernelOp k) {
      auto out = cast<MemRefType>(k.getOut().getType());
      bool runtimeRows = static_cast<bool>(k.getRows());
      // With run-time rows the first dim that is not 1 is the sequence dim
      // (infer programs run one sequence: batch 1).
      ArrayRef<int64_t> so = stripLeadingOnes(out.getShape());
      // An all-ones output strips to nothing: drop_front on it crashed.
      int64_t inner = !runtimeRows ? out.getNumElements()
                      : so.empty() ? 1
                                   : product(so.drop_front());
      // In a program the sequence dim has the program's capacity (`ctx`):
      // exact even where the heuristic above is not (ctx = 1).
      if (auto program = k->getParentOfType<ProgramOp>(); runtimeRows && program)
        if (auto ctx = program->getAttrOfType<IntegerAttr>("ctx");
            ctx && ctx.getInt() > 0 && out.getNumElements() % ctx.getInt() == 0)
          inner = out.getNumElements() / ctx.getInt();
      SmallVector<int64_t> divs, mods;
      for (Value in : k.getInputs()) {
        int64_t d, m;
        if (mlir::failed(broadcastMap(k, cast<MemRefType>(in.getType()), out, runtimeRows, d, m)))
          return signalPassFailure();
        divs.push_back(d);
        mods.push_back(m);
      }
      Builder b(k.getContext());
      k.setInDivAttr(b.getDenseI64ArrayAttr(divs));
      k.setInModAttr(b.getDenseI64ArrayAttr(mods));
      k.setInnerAttr(b.getI64IntegerAttr(inner));
    });
  }
};

} // namespace
