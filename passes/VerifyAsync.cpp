//===- VerifyAsync.cpp - Nothing touches a collective's buffers in flight --===//
//
// bmb-verify-async (docs/distributed.md; DESIGN decision 5). A collective
// (bmb_exec.all_reduce_grads, reduce_scatter_grads, all_gather_params,
// zero = 2's reduce_scatter_unit of a staged unit, zero = 3's gather_unit)
// owns
// its buffers from its issue to its bmb_exec.wait: the progress thread (a
// comm stream on a GPU) reads and writes them meanwhile. This pass checks,
// per entry function, that
//  - every request is waited on, in the same block, after its issue;
//  - no op between the issue and the wait (nested regions included) reads or
//    writes the role the collective owns: the gradients for the gradient
//    collectives, the trainable params for the all-gather;
// and fails at the offending op naming the collective. Collectives of the
// same role may overlap each other: they are queued in issue order and the
// buckets of one step are disjoint.
//
// The offloaded optimizer step (bmb-offload-optimizer) is checked the same
// way: bmb_exec.offload_grads_out owns the gradients until the
// offload_adamw_update that consumes its request (the copies out are read
// there), and that update owns the trainable params until its wait (the
// copies back are in flight). Unlike collectives of one role, which queue
// behind each other on the communicator, a collective overlapping an offload
// copy of the same role is an error too: they run on different engines.
//
// Deferred collectives (the backward's per-layer gradient all-reduces,
// bmb_exec.defer_all_reduce_grads, waited by @optimizer_step's
// bmb_exec.wait_deferred) cross entries, so they are checked by program
// order instead (verifyDeferred): nothing after the issue touches what it
// owns, each loop iteration touches only the layer it issues, nothing
// before the wait touches the gradients, and a wait exists.
//
// zero = 3 programs read every trainable param from the staging that
// bmb_exec.gather_unit fills, one unit at a time, so each read must come
// after the wait of its unit's gather, with no other gather of that unit in
// between (verifyGathered): a layer's read in the same loop iteration (the
// same layer value, after its bmb_exec.wait_unit), unit 0's anywhere after
// its gather in the entry. A layer's bmb_exec.prefetch_unit may only fetch
// the layer next to the one its wait_unit fetched (%i + 1 or %i - 1): the
// other of the two slots, which no read of the iteration touches.
//
// zero = 2's layer reduce-scatters stay in flight across loop iterations
// (bmb_exec.reduce_scatter_ahead, finished by wait_unit_grads of the same
// layer), so they too are followed in program order, each loop over the
// layers run trip by trip (verifyAhead): no write of a gradient slot
// (grad_ref of the layer l % 2 shares with the one in flight), no second
// reduce-scatter from it, and no read of the partition, nor the entry's
// end, while one is in flight.
//
//===----------------------------------------------------------------------===//
#include "dialects/BmbExec/BmbExecOps.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Matchers.h"

namespace mlir::bmb {
#define GEN_PASS_DEF_VERIFYASYNCPASS
#include "passes/Passes.h.inc"
} // namespace mlir::bmb

using namespace mlir;
using namespace mlir::bmb::exec;

namespace {

enum class Role { Grads, Params };

bool isOffload(Operation *op) { return isa<OffloadGradsOutOp, OffloadAdamWUpdateOp>(op); }

/// The ops that issue asynchronous work yielding a request.
bool isCollective(Operation *op) {
  return isa<AllReduceGradsOp, ReduceScatterGradsOp, AllGatherParamsOp, ReduceScatterUnitOp,
             GatherUnitOp>(op) ||
         isOffload(op);
}

/// The role an issued op owns until its request is consumed.
Role ownedBy(Operation *op) {
  return isa<AllGatherParamsOp, GatherUnitOp, OffloadAdamWUpdateOp>(op) ? Role::Params
                                                                        : Role::Grads;
}

/// Whether `op` (not a collective) touches `role`.
bool touches(Operation *op, Role role) {
  if (role == Role::Grads)
    return isa<GradRefOp, GradNormOp, ClipGradsOp, AdamWUpdateOp, SGDUpdateOp, ZeroGradsOp,
               AddUnitGradsOp, OffloadGradsOutOp, ReduceScatterAheadOp, WaitUnitGradsOp>(op);
  return isa<ParamRefOp, AdamWUpdateOp, SGDUpdateOp, RoundUnitOp>(op);
}

/// An index as a * iv + b, iv a block argument (a loop's induction
/// variable) or none: what the layer expressions of the loops over layers
/// are made of (constants, the induction variable, addi, subi), so that
/// "layer %n is next to layer %i" survives canonicalization.
struct Linear {
  Value iv;
  int64_t a = 0, b = 0;
  bool ok = false;
};

Linear linearIndex(Value v, int depth = 0) {
  APInt c;
  if (matchPattern(v, m_ConstantInt(&c)))
    return {Value(), 0, c.getSExtValue(), true};
  if (isa<BlockArgument>(v))
    return {v, 1, 0, true};
  Operation *op = v.getDefiningOp();
  if (!op || depth > 8 || !isa<arith::AddIOp, arith::SubIOp>(op))
    return {};
  Linear l = linearIndex(op->getOperand(0), depth + 1);
  Linear r = linearIndex(op->getOperand(1), depth + 1);
  if (!l.ok || !r.ok || (l.iv && r.iv && l.iv != r.iv))
    return {};
  const int64_t sign = isa<arith::SubIOp>(op) ? -1 : 1;
  return {l.iv ? l.iv : r.iv, l.a + sign * r.a, l.b + sign * r.b, true};
}

/// Whether index `next` is index `at` plus or minus one.
bool isNextTo(Value next, Value at) {
  Linear n = linearIndex(next), x = linearIndex(at);
  return n.ok && x.ok && n.a == x.a && (n.a == 0 || n.iv == x.iv) &&
         (n.b - x.b == 1 || n.b - x.b == -1);
}

StringRef what(Role role) { return role == Role::Grads ? "gradients" : "trainable params"; }

struct VerifyAsyncPass : mlir::bmb::impl::VerifyAsyncPassBase<VerifyAsyncPass> {
  void runOnOperation() override {
    bool ok = true;
    getOperation().walk([&](Operation *issue) {
      if (!isCollective(issue))
        return;
      Value request = issue->getResult(0);
      if (request.use_empty()) {
        issue->emitError("bmb-verify-async: this collective is never waited on");
        ok = false;
        return;
      }
      // The copy of the gradients out is consumed by the offloaded update
      // (which waits for it chunk by chunk), everything else by a wait.
      Operation *wait = *request.user_begin();
      bool consumed = isa<OffloadGradsOutOp>(issue) ? isa<OffloadAdamWUpdateOp>(wait)
                                                    : isa<WaitOp>(wait);
      if (!consumed || wait->getBlock() != issue->getBlock() || wait->isBeforeInBlock(issue)) {
        issue->emitError(isa<OffloadGradsOutOp>(issue)
                             ? "bmb-verify-async: the offloaded update that reads this copy "
                               "must follow it in the same block"
                             : "bmb-verify-async: the wait of this collective must follow it "
                               "in the same block");
        ok = false;
        return;
      }
      Role role = ownedBy(issue);
      for (Operation *op = issue->getNextNode(); op != wait; op = op->getNextNode()) {
        WalkResult r = op->walk([&](Operation *inner) {
          // Collectives of one role queue behind each other; an offload
          // copy and a collective of the same role would race.
          bool conflict = isCollective(inner)
                              ? (isOffload(issue) || isOffload(inner)) && ownedBy(inner) == role
                              : touches(inner, role);
          if (!conflict)
            return WalkResult::advance();
          InFlightDiagnostic d = inner->emitError("bmb-verify-async: touches the ") << what(role);
          if (isa<OffloadGradsOutOp>(issue))
            d << " while the offloaded step copies them out";
          else if (isa<OffloadAdamWUpdateOp>(issue))
            d << " before the offloaded update's copies into them are waited for";
          else
            d << " while a collective owns them";
          d.attachNote(issue->getLoc())
              << (isOffload(issue) ? "the copies, issued here" : "the collective, issued here");
          d.attachNote(wait->getLoc())
              << (isa<OffloadGradsOutOp>(issue) ? "the update that waits for them" : "its wait");
          return WalkResult::interrupt();
        });
        if (r.wasInterrupted()) {
          ok = false;
          break;
        }
      }
    });
    getOperation().walk([&](func::FuncOp f) {
      if (failed(verifyDeferred(f)))
        ok = false;
      if (failed(verifyGathered(f)))
        ok = false;
      if (failed(verifyAhead(f)))
        ok = false;
    });
    if (!ok)
      signalPassFailure();
  }

  /// zero = 3: every read of a trainable param follows the wait of its
  /// unit's gather (the same layer value), in program order, with no gather
  /// of that param in flight or overwriting it since. With precision =
  /// bf16/fp16 the GEMMs read the reduced staging too, so a read also
  /// follows the unit's round_unit (which itself follows the wait).
  LogicalResult verifyGathered(func::FuncOp f) {
    auto program = f->getParentOfType<ProgramOp>();
    auto train = program ? program->getAttrOfType<DictionaryAttr>("train") : DictionaryAttr();
    auto stage = train ? train.getAs<IntegerAttr>("zero_stage") : IntegerAttr();
    if (!stage || stage.getInt() != 3)
      return success();
    auto precision = program->getAttrOfType<StringAttr>("precision");
    const bool rounds =
        precision && (precision.getValue() == "bf16" || precision.getValue() == "fp16");
    // Param name -> the layer value of its gathered unit (null: unit 0),
    // set at a gather's wait; a gather's issue takes its params out.
    // `ready` is what reads may use: `gathered`, and rounded when `rounds`.
    using Mark = std::pair<Value, Operation *>;
    DenseMap<StringRef, Mark> gathered, ready;
    // A new gather makes an earlier rounding of the unit stale.
    auto gather = [&](ArrayAttr params, Value layer, Operation *by) {
      for (Attribute a : params) {
        gathered[cast<FlatSymbolRefAttr>(a).getValue()] = {layer, by};
        if (rounds)
          ready.erase(cast<FlatSymbolRefAttr>(a).getValue());
        else
          ready[cast<FlatSymbolRefAttr>(a).getValue()] = {layer, by};
      }
    };
    WalkResult r = f.walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (auto g = dyn_cast<GatherUnitOp>(op)) {
        for (Attribute a : g.getParams()) {
          gathered.erase(cast<FlatSymbolRefAttr>(a).getValue());
          ready.erase(cast<FlatSymbolRefAttr>(a).getValue());
        }
        return WalkResult::advance();
      }
      if (auto w = dyn_cast<WaitOp>(op)) {
        if (auto g = w.getRequest().getDefiningOp<GatherUnitOp>())
          gather(g.getParams(), g.getLayer(), g);
        return WalkResult::advance();
      }
      if (auto w = dyn_cast<WaitUnitOp>(op)) {
        gather(w.getParams(), w.getLayer(), w);
        return WalkResult::advance();
      }
      if (auto u = dyn_cast<RoundUnitOp>(op)) {
        for (Attribute a : u.getParams()) {
          auto it = gathered.find(cast<FlatSymbolRefAttr>(a).getValue());
          if (it == gathered.end() || it->second.first != u.getLayer()) {
            u.emitError("bmb-verify-async: rounds ")
                << a << " (zero = 3) before its unit's gather at this layer has been waited for";
            return WalkResult::interrupt();
          }
          ready[cast<FlatSymbolRefAttr>(a).getValue()] = {u.getLayer(), u};
        }
        return WalkResult::advance();
      }
      if (auto f = dyn_cast<PrefetchUnitOp>(op)) {
        auto it = gathered.find(cast<FlatSymbolRefAttr>(f.getParams()[0]).getValue());
        if (it == gathered.end() || !it->second.first ||
            !isNextTo(f.getLayer(), it->second.first)) {
          f.emitError("bmb-verify-async: prefetches a layer that is not next to the one its "
                      "unit's wait_unit fetched (the two slots alternate by layer)");
          return WalkResult::interrupt();
        }
        return WalkResult::advance();
      }
      auto ref = dyn_cast<ParamRefOp>(op);
      if (!ref)
        return WalkResult::advance();
      auto p = program.lookupSymbol<ParamOp>(ref.getParam());
      if (!p || p.getFrozen())
        return WalkResult::advance(); // frozen params stay whole
      auto it = ready.find(ref.getParam());
      if (it == ready.end()) {
        ref.emitError("bmb-verify-async: reads @")
            << ref.getParam()
            << (rounds && gathered.count(ref.getParam())
                    ? " (zero = 3) before its unit has been rounded to the GEMMs' reduced type"
                    : " (zero = 3) before its unit's gather has been waited for");
        return WalkResult::interrupt();
      }
      if (it->second.first != ref.getLayer()) {
        InFlightDiagnostic d = ref.emitError("bmb-verify-async: reads @")
                               << ref.getParam()
                               << " (zero = 3) at another layer than its unit's gather";
        d.attachNote(it->second.second->getLoc()) << "the gather";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    return failure(r.wasInterrupted());
  }

  /// zero = 2's layer reduce-scatters left in flight
  /// (bmb_exec.reduce_scatter_ahead of layer l from slot l % 2, finished by
  /// wait_unit_grads of layer l), followed through the entry in program
  /// order with the loops over the layers run trip by trip: no gradient of
  /// a unit may be written in a slot whose reduce-scatter is in flight, no
  /// reduce-scatter issued into such a slot, and nothing may read the
  /// partition (nor the entry end) while any is.
  struct Ahead {
    Operation *issue;
    ArrayAttr params;
    int64_t layer;
  };

  LogicalResult verifyAhead(func::FuncOp f) {
    bool any = false;
    f.walk([&](ReduceScatterAheadOp) { any = true; });
    if (!any)
      return success();
    AheadState state;
    return runAhead(f.getBody().front(), state);
  }

  struct AheadState {
    SmallVector<Ahead> inFlight;
    DenseMap<Value, int64_t> trip; // a loop's induction variable -> this trip's value
  };

  /// A layer index at this trip: a * iv + b, iv the trip's value.
  static FailureOr<int64_t> layerAt(Operation *op, Value v, const AheadState &state) {
    Linear l = linearIndex(v);
    if (l.ok && !l.iv)
      return l.b;
    if (l.ok && state.trip.count(l.iv))
      return l.a * state.trip.lookup(l.iv) + l.b;
    return op->emitError("bmb-verify-async: cannot follow this layer index through the loop "
                         "over the layers (zero = 2's reduce-scatters in flight are checked "
                         "trip by trip)");
  }

  /// Ops that read the rank's partition of the gradients (the entry's end
  /// hands it to the next entry).
  static bool readsPartition(Operation *op) {
    return isa<GradNormOp, ClipGradsOp, AdamWUpdateOp, SGDUpdateOp, ZeroGradsOp,
               OffloadGradsOutOp, AllReduceGradsOp, ReduceScatterGradsOp, func::ReturnOp>(op);
  }

  static bool namesParam(ArrayAttr params, StringRef name) {
    return llvm::any_of(params,
                        [&](Attribute a) { return cast<FlatSymbolRefAttr>(a).getValue() == name; });
  }

  LogicalResult runAhead(Block &block, AheadState &state) {
    for (Operation &op : block) {
      if (auto loop = dyn_cast<scf::ForOp>(op)) {
        bool relevant = false;
        loop.walk([&](Operation *inner) {
          if (isa<ReduceScatterAheadOp, WaitUnitGradsOp, GradRefOp>(inner) ||
              readsPartition(inner))
            relevant = true;
        });
        if (!relevant)
          continue;
        std::optional<int64_t> lb = getConstantIntValue(loop.getLowerBound()),
                               ub = getConstantIntValue(loop.getUpperBound()),
                               step = getConstantIntValue(loop.getStep());
        if (!lb || !ub || !step || *step <= 0)
          return loop.emitError("bmb-verify-async: zero = 2's reduce-scatters in flight are "
                                "checked trip by trip; this loop's bounds are not constant");
        for (int64_t j = *lb; j < *ub; j += *step) {
          state.trip[loop.getInductionVar()] = j;
          if (failed(runAhead(*loop.getBody(), state)))
            return failure();
        }
        state.trip.erase(loop.getInductionVar());
        continue;
      }
      for (Region &r : op.getRegions())
        for (Block &inner : r)
          if (failed(runAhead(inner, state)))
            return failure();
      if (failed(stepAhead(&op, state)))
        return failure();
    }
    return success();
  }

  LogicalResult stepAhead(Operation *op, AheadState &state) {
    auto inFlightNote = [](InFlightDiagnostic &d, const Ahead &a) {
      d.attachNote(a.issue->getLoc()) << "the reduce-scatter, issued here (layer " << a.layer
                                      << ")";
    };
    if (auto r = dyn_cast<ReduceScatterAheadOp>(op)) {
      FailureOr<int64_t> l = layerAt(op, r.getLayer(), state);
      if (failed(l))
        return failure();
      for (const Ahead &a : state.inFlight)
        if (a.params == r.getParams() && a.layer % 2 == *l % 2) {
          InFlightDiagnostic d = r.emitError("bmb-verify-async: issues layer ")
                                 << *l << "'s reduce-scatter from slot " << *l % 2
                                 << " while layer " << a.layer
                                 << "'s from the same slot is in flight";
          inFlightNote(d, a);
          return failure();
        }
      state.inFlight.push_back({op, r.getParams(), *l});
      return success();
    }
    if (auto w = dyn_cast<WaitUnitGradsOp>(op)) {
      FailureOr<int64_t> l = layerAt(op, w.getLayer(), state);
      if (failed(l))
        return failure();
      for (auto *it = state.inFlight.begin(); it != state.inFlight.end(); ++it) {
        if (it->params != w.getParams() || it->layer % 2 != *l % 2)
          continue;
        if (it->layer != *l) {
          InFlightDiagnostic d = w.emitError("bmb-verify-async: waits for layer ")
                                 << *l << "'s reduce-scatter, but slot " << *l % 2
                                 << " holds layer " << it->layer << "'s";
          inFlightNote(d, *it);
          return failure();
        }
        state.inFlight.erase(it);
        break;
      }
      return success();
    }
    if (auto g = dyn_cast<GradRefOp>(op)) {
      for (const Ahead &a : state.inFlight) {
        if (!namesParam(a.params, g.getParam()))
          continue;
        int64_t l = -1;
        if (g.getLayer()) {
          FailureOr<int64_t> at = layerAt(op, g.getLayer(), state);
          if (failed(at))
            return failure();
          l = *at;
          if (l % 2 != a.layer % 2)
            continue;
        }
        InFlightDiagnostic d = g.emitError("bmb-verify-async: writes @")
                               << g.getParam() << "'s gradient slot " << a.layer % 2
                               << " while layer " << a.layer
                               << "'s reduce-scatter from it is in flight (finish it first: "
                                  "bmb_exec.wait_unit_grads)";
        inFlightNote(d, a);
        return failure();
      }
      return success();
    }
    if (readsPartition(op) && !state.inFlight.empty()) {
      const Ahead &a = state.inFlight.front();
      InFlightDiagnostic d =
          isa<func::ReturnOp>(op)
              ? op->emitError("bmb-verify-async: the entry ends while layer ")
                    << a.layer
                    << "'s reduce-scatter is in flight (the partition is read after it)"
              : op->emitError("bmb-verify-async: reads the gradient partition while layer ")
                    << a.layer << "'s reduce-scatter into it is in flight";
      inFlightNote(d, a);
      return failure();
    }
    return success();
  }

  /// Whether `defer` hands over layer 0 of params that all have one layer:
  /// a repeat of one layer, whose loop was inlined.
  static bool isOnlyLayer(ProgramOp program, DeferAllReduceGradsOp defer) {
    APInt layer;
    if (!program || !matchPattern(defer.getLayer(), m_ConstantInt(&layer)) || !layer.isZero())
      return false;
    for (Attribute a : defer.getParams()) {
      auto p = dyn_cast_or_null<ParamOp>(
          SymbolTable::lookupSymbolIn(program, cast<FlatSymbolRefAttr>(a).getAttr()));
      auto t = p ? dyn_cast<ShapedType>(p.getType()) : ShapedType();
      if (!p || !p.getStacked() || !t || t.getRank() < 1 || t.getDimSize(0) != 1)
        return false;
    }
    return true;
  }

  /// The collectives one entry issues and a later one waits for
  /// (bmb_exec.defer_all_reduce_grads in the backward, wait_deferred in the
  /// optimizer step): after a deferred issue nothing later in its entry
  /// touches the gradients it owns; in a loop, each iteration touches its
  /// params only at the layer it issues (so later iterations stay on other
  /// units); before a wait_deferred nothing touches the gradients.
  LogicalResult verifyDeferred(func::FuncOp f) {
    SmallVector<Operation *> order; // pre-order: program order of the entry
    f.walk<WalkOrder::PreOrder>([&](Operation *op) { order.push_back(op); });
    auto touchesGrads = [](Operation *op) { return touches(op, Role::Grads); };
    auto fail = [&](Operation *bad, Operation *owner, StringRef why) {
      InFlightDiagnostic d = bad->emitError("bmb-verify-async: ") << why;
      d.attachNote(owner->getLoc()) << "the deferred collective, issued here";
      return failure();
    };
    for (size_t i = 0; i < order.size(); ++i) {
      if (auto w = dyn_cast<WaitDeferredOp>(order[i])) {
        for (size_t k = 0; k < i; ++k)
          if (touchesGrads(order[k])) {
            InFlightDiagnostic d = order[k]->emitError(
                "bmb-verify-async: touches the gradients before the deferred collectives "
                "are waited for");
            d.attachNote(w.getLoc()) << "the wait";
            return failure();
          }
        continue;
      }
      auto defer = dyn_cast<DeferAllReduceGradsOp>(order[i]);
      if (!defer)
        continue;
      auto program = defer->getParentOfType<ProgramOp>();
      auto step = program ? program.lookupSymbol<func::FuncOp>("optimizer_step") : nullptr;
      bool waited = false;
      if (step)
        step.walk([&](WaitDeferredOp) { waited = true; });
      if (!waited)
        return defer.emitError("bmb-verify-async: this deferred collective is never waited on "
                               "(@optimizer_step has no bmb_exec.wait_deferred)");
      DenseSet<StringRef> owned;
      for (Attribute a : defer.getParams())
        owned.insert(cast<FlatSymbolRefAttr>(a).getValue());
      auto ownsRef = [&](Operation *op) {
        auto g = dyn_cast<GradRefOp>(op);
        return g && owned.contains(g.getParam());
      };
      // A layer's collective sits at the end of the loop body over the
      // layers. A repeat of one layer has no loop left (a one-trip loop is
      // inlined): its layer index is a constant and what follows it in the
      // entry is the rest of the backward, checked below by what it touches.
      Operation *loop = nullptr;
      bool unrolledLayer = false;
      if (defer.getLayer()) {
        loop = defer->getParentOfType<scf::ForOp>();
        bool inBody = loop && defer->getBlock() == &cast<scf::ForOp>(loop).getRegion().front();
        unrolledLayer = !inBody && isOnlyLayer(program, defer);
        if (!inBody && !unrolledLayer)
          return defer.emitError("bmb-verify-async: a deferred layer collective must be in a "
                                 "loop's body (the loop over the layers)");
        if (!inBody)
          loop = nullptr;
      }
      // The rest of its block (the loop body's, for a layer).
      for (Operation *op = unrolledLayer ? nullptr : defer->getNextNode(); op;
           op = op->getNextNode()) {
        WalkResult r = op->walk([&](Operation *inner) {
          return touchesGrads(inner) ? WalkResult::interrupt() : WalkResult::advance();
        });
        if (r.wasInterrupted())
          return fail(op, defer, "touches the gradients after they were handed to a deferred "
                                 "collective");
      }
      if (loop) {
        WalkResult r = loop->walk([&](GradRefOp g) {
          if (owned.contains(g.getParam()) && g.getLayer() != defer.getLayer()) {
            (void)fail(g, defer, "reads another layer's gradient than the one this iteration "
                                 "hands to its deferred collective");
            return WalkResult::interrupt();
          }
          return WalkResult::advance();
        });
        if (r.wasInterrupted())
          return failure();
      }
      // Everything after it (after its loop) in the entry.
      for (size_t k = i + 1; k < order.size(); ++k) {
        Operation *op = order[k];
        if (loop && loop->isAncestor(op))
          continue;
        if (ownsRef(op) || (touchesGrads(op) && !isa<GradRefOp>(op)))
          return fail(op, defer, "touches the gradients after they were handed to a deferred "
                                 "collective");
      }
    }
    return success();
  }
};

} // namespace
