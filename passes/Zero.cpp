//===- Zero.cpp - ZeRO stages on the bmb level ------------------------------===//
//
// bmb-zero (docs/distributed.md; DESIGN decision 5). The job's `zero`
// setting says what the ranks partition; stage 0 (the default) is plain data
// parallelism as bmb-data-parallel left it. Stage 1 partitions the optimizer
// state: the flat trainable group is split into rank-contiguous partitions
// (bmrt::Partition; bmb-plan-memory lays the group out, the runtime sizes the
// partitions for the world size it runs at), and @optimizer_step becomes
//   bmb.grad_reduce_scatter         each rank: the summed gradients of its partition
//   bmb.clip_grad_norm ...          the norm of the partitions, summed over ranks
//   bmb.adamw_update ...            on the rank's partition only
//   bmb.param_all_gather            every rank's updated partition to all
// in place of the all-reduce buckets: the same sums for half the traffic of
// an all-reduce's reduce-scatter + all-gather of gradients, and 1/N of the
// optimizer state per rank.
//
// Stage 2 partitions the gradients too: the grads allocation holds only
// the rank's partition of the same group. bmb-data-parallel's per-unit
// all-reduces of the backward (end of each reverse repeat iteration, and
// the params outside repeats at the end) become
//   bmb.grad_reduce_scatter_unit [...] layer %i
// which the lowering turns into a reduce-scatter with per-rank counts of the
// unit's staging buffer (the unit meets each rank's partition in a piece of
// its own length) and an add of the rank's piece into its partition; a
// layer's goes one layer ahead, in flight through the next layer's
// backward from one of two slots (LowerTrain.cpp).
// @optimizer_step then has nothing to reduce: clip, update the partition,
// all-gather the params as in stage 1.
//
// Stage 3 partitions the params too: each rank holds only its partition of
// the group (the master copy its optimizer updates), and the entries read
// every trainable param from a staging buffer (unit 0, and two slots per
// repeat that its layers alternate between). Stage 2's reduce-scatters
// stay; in front of every read of a unit's params comes its gather:
//   bmb.param_gather_unit [...]              start of @train_step and @loss
//   bmb.param_gather_unit [...] layer %i     start of each repeat iteration,
//                                            forward and reverse
// and @optimizer_step ends without the all-gather (the next step gathers
// what it reads). The lowering turns a layer's gather into a wait for the
// gather the previous iteration issued ahead, and issues the next layer's
// (LowerTrain.cpp). All-gather only copies, so stage 3 computes what stage
// 2 does, bit for bit. With precision = bf16/fp16 the gathers carry `low
// bf16`: the GEMMs' reduced weight copy is made per gathered unit (rounding
// is elementwise, so again the bits of stage 2), since no rank holds the
// whole group to convert.
//
// fp16's loss scaling needs nothing here: under stages 2 and 3 the app
// checks and unscales the rank's partition of the summed gradients
// (runtime/app/loss_scale.cpp).
// `auto` is bmbc's to resolve before the pipeline (compiler/ZeroAuto.cpp).
//
//===----------------------------------------------------------------------===//
#include "dialects/Bmb/BmbOps.h"
#include "passes/EntryLowering.h"
#include "passes/Passes.h"
#include "passes/TrainJobs.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::bmb {
#define GEN_PASS_DEF_ZEROPASS
#include "passes/Passes.h.inc"
} // namespace mlir::bmb

using namespace mlir;
using namespace mlir::bmb;

namespace {

struct ZeroPass : mlir::bmb::impl::ZeroPassBase<ZeroPass> {
  void runOnOperation() override {
    if (failed(forEachTrainJob(getOperation(),
                               [&](JobOp job, ModelOp model) { return apply(job, model); })))
      signalPassFailure();
  }

  LogicalResult apply(JobOp job, ModelOp model) {
    Attribute setting = job.getSettings().get("zero");
    if (!setting)
      return success();
    auto stage = dyn_cast<IntegerAttr>(setting);
    if (auto word = dyn_cast<StringAttr>(setting); word && word.getValue() == "auto")
      return emitError(settingLoc(job, "zero"),
                       "zero = auto is chosen by bmbc, which compiles each candidate plan "
                       "(compiler/ZeroAuto.cpp); without bmbc set zero = 0, 1, 2 or 3");
    if (!stage)
      return emitError(settingLoc(job, "zero"), "zero = ")
             << setting << " is not implemented yet (zero = 0, 1, 2 and 3 are)";
    if (stage.getInt() == 0)
      return success();
    if (stage.getInt() < 1 || stage.getInt() > 3)
      return emitError(settingLoc(job, "zero"), "zero = ")
             << stage.getInt() << " is not implemented yet (zero = 0, 1, 2 and 3 are)";
    if (stage.getInt() == 3 && failed(checkStage3(job)))
      return failure();
    auto step = dyn_cast_or_null<func::FuncOp>(model.lookupSymbol("optimizer_step"));
    SmallVector<GradAllReduceOp> buckets;
    if (step)
      buckets = llvm::to_vector(step.getOps<GradAllReduceOp>());
    if (buckets.empty())
      return job.emitError("bmb-zero: @optimizer_step has no gradient all-reduce to partition "
                           "(run bmb-data-parallel first)");
    OpBuilder b(buckets.front());
    if (stage.getInt() >= 2) {
      if (failed(partitionBackward(job, model, stage.getInt())))
        return failure();
    } else {
      b.create<GradReduceScatterOp>(buckets.front().getLoc());
    }
    for (GradAllReduceOp op : buckets)
      op.erase();
    // The backward's per-layer all-reduces (bmb-data-parallel's overlap)
    // go too: stage 1 reduce-scatters the group at the optimizer step.
    if (auto fwdBwd = dyn_cast_or_null<func::FuncOp>(model.lookupSymbol("train_step")))
      fwdBwd.walk([](GradAllReduceOp op) { op.erase(); });
    if (stage.getInt() == 3)
      return gatherParams(job, model);
    b.setInsertionPoint(step.getBody().front().getTerminator());
    b.create<ParamAllGatherOp>(job.getLoc());
    return success();
  }

  /// What stage 3 does not do yet, refused at the setting.
  LogicalResult checkStage3(JobOp job) {
    if (job.getKind() == JobKind::Tune)
      return emitError(settingLoc(job, "zero"),
                       "zero = 3 is not implemented for tune jobs yet (use zero = 0, 1 or 2)");
    return success();
  }

  /// Stage 3: each entry that reads the params gathers every unit before
  /// its reads. The units are stage 2's: the reduce-scatters of the
  /// backward name them (unit 0 possibly in several pieces, one repeat per
  /// layer count).
  LogicalResult gatherParams(JobOp job, ModelOp model) {
    auto fwdBwd = cast<func::FuncOp>(model.lookupSymbol("train_step"));
    auto eval = dyn_cast_or_null<func::FuncOp>(model.lookupSymbol("loss"));
    if (!eval)
      return job.emitError("bmb-zero: model @")
             << model.getSymName() << " has no @loss for the held-out evaluation to gather in";
    SmallVector<ArrayAttr> outside;
    DenseMap<int64_t, ArrayAttr> layerUnits; // repeat count -> its unit's params
    fwdBwd.walk([&](GradReduceScatterUnitOp op) {
      if (!op.getLayer())
        outside.push_back(op.getParamsAttr());
      else
        layerUnits[getInductionVarOwner(op.getLayer()).getCount()] = op.getParamsAttr();
    });
    // A stacked param is read only at its repeat's induction variable (the
    // bmb.param_get verifier), and stage 2's units cover every repeat, so
    // these gathers precede every read; bmb-verify-async checks that on
    // the lowered entries.
    // Mixed precision: the autocast GEMMs read their weights rounded, from
    // a copy that cannot be the whole group any more; each gathered unit is
    // rounded into a reduced staging instead (`low`).
    TypeAttr low;
    if (auto p = job.getSettings().getAs<StringAttr>("precision")) {
      Builder b(job.getContext());
      if (p.getValue() == "bf16")
        low = TypeAttr::get(b.getBF16Type());
      else if (p.getValue() == "fp16")
        low = TypeAttr::get(b.getF16Type());
    }
    for (func::FuncOp f : {fwdBwd, eval}) {
      OpBuilder b(f.getContext());
      b.setInsertionPointToStart(&f.getBody().front());
      for (ArrayAttr params : outside)
        b.create<ParamGatherUnitOp>(f.getLoc(), params, Value(), low);
      f.walk([&](RepeatOp rep) {
        auto it = layerUnits.find(rep.getCount());
        if (it == layerUnits.end())
          return; // stacks no trainable param
        b.setInsertionPointToStart(rep.getBodyBlock());
        b.create<ParamGatherUnitOp>(rep.getLoc(), it->second, rep.getInductionVar(), low);
      });
    }
    return success();
  }

  /// Stage 2 (and 3): each per-unit all-reduce of @train_step's backward
  /// becomes that unit's reduce-scatter into the partition.
  /// bmb-data-parallel put them only where every unit is covered exactly
  /// once.
  LogicalResult partitionBackward(JobOp job, ModelOp model, int64_t stage) {
    auto fwdBwd = dyn_cast_or_null<func::FuncOp>(model.lookupSymbol("train_step"));
    SmallVector<GradAllReduceOp> units;
    if (fwdBwd)
      fwdBwd.walk([&](GradAllReduceOp op) { units.push_back(op); });
    if (units.empty())
      return emitError(settingLoc(job, "zero"), "zero = ")
             << stage
             << " needs a backward that finishes the gradients one unit at a "
                "time (each repeat's params all stacked alike, no repeat run twice); "
                "bmb-data-parallel found none here, so use zero = 1";
    for (GradAllReduceOp op : units) {
      OpBuilder b(op);
      b.create<GradReduceScatterUnitOp>(op.getLoc(), op.getParamsAttr(), op.getLayer());
      op.erase();
    }
    return success();
  }
};

} // namespace
