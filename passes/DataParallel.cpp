//===- DataParallel.cpp - Gradient all-reduce in buckets -------------------===//
//
// bmb-data-parallel (docs/distributed.md). Every train program can run on N
// ranks (mpirun -np N): each rank runs forward/backward on its own
// micro-batches, with the loss divided by the target count of the whole
// global batch (the app's dlossScale), so the sum of the ranks' gradients is
// the gradient of the global mean loss. This pass puts that sum at the start
// of @optimizer_step, in buckets of at most `bucket-bytes` (PyTorch DDP's 25
// MiB by default) that follow the units of the layer-major trainable group
// bmb-plan-memory lays out, so each bucket is one contiguous range of the
// gradients: the params outside repeats in declaration order (one larger
// than a bucket is a bucket of its own), then each repeat's layers, whole
// layers per bucket (`layers [a, b]`; a layer larger than a bucket is a
// bucket of its own). All buckets are issued before the first wait, so the
// collectives queue back to back. On one rank they are no-ops.
//
// Overlap: the same sums are also put into @train_step's backward, one per
// layer at the end of each reverse repeat iteration (`layer %i`: the unit
// that iteration finished) and the params outside repeats before it
// returns. The app chooses per step which ones run (StepArgs::overlapGrads,
// docs/distributed.md): the backward's when the step's last micro-batch can
// send its gradients as they are done, else the optimizer step's buckets.
//
//===----------------------------------------------------------------------===//
#include "dialects/Bmb/BmbOps.h"
#include "passes/Passes.h"
#include "passes/TrainJobs.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/SetVector.h"

#include <string>

namespace mlir::bmb {
#define GEN_PASS_DEF_DATAPARALLELPASS
#include "passes/Passes.h.inc"
} // namespace mlir::bmb

using namespace mlir;
using namespace mlir::bmb;

namespace {

int64_t byteSize(RankedTensorType t) {
  return t.getNumElements() * ((t.getElementTypeBitWidth() + 7) / 8);
}

struct DataParallelPass : mlir::bmb::impl::DataParallelPassBase<DataParallelPass> {
  using DataParallelPassBase::DataParallelPassBase;

  void runOnOperation() override {
    if (bucketBytes <= 0) {
      getOperation().emitError("bmb-data-parallel: bucket-bytes must be positive, got ")
          << std::to_string(bucketBytes.getValue());
      return signalPassFailure();
    }
    if (failed(forEachTrainJob(getOperation(),
                               [&](JobOp job, ModelOp model) { return insert(job, model); })))
      signalPassFailure();
  }

  LogicalResult insert(JobOp job, ModelOp model) {
    auto step = dyn_cast_or_null<func::FuncOp>(model.lookupSymbol("optimizer_step"));
    if (!step)
      return job.emitError("bmb-data-parallel: model @")
             << model.getSymName() << " has no @optimizer_step (run bmb-insert-optimizer first)";
    if (!step.getOps<GradAllReduceOp>().empty())
      return step.emitError("bmb-data-parallel: @optimizer_step already reduces its gradients");
    // The group's units (bmb-plan-memory): the params outside repeats, then
    // layer by layer the params of each repeat (stacked params of one layer
    // count). A bucket is whole params of unit 0, or whole layers.
    struct Bucket {
      SmallVector<Attribute> params;
      int64_t first = -1, end = -1; // layers, for a repeat's bucket
    };
    SmallVector<Bucket> buckets;
    SmallVector<std::pair<int64_t, SmallVector<ParamOp>>> repeats;
    int64_t filled = 0;
    const int64_t limit = bucketBytes.getValue();
    for (ParamOp p : model.getParams()) {
      if (!p.isTrainable())
        continue;
      auto t = cast<RankedTensorType>(p.getType());
      if (p.getStacked() > 1)
        return p.emitError("bmb-data-parallel: params stacked by nested repeats are not "
                           "supported");
      if (p.getStacked() == 1) {
        auto it = llvm::find_if(repeats, [&](auto &r) { return r.first == t.getDimSize(0); });
        if (it == repeats.end()) {
          repeats.push_back({t.getDimSize(0), {}});
          it = std::prev(repeats.end());
        }
        it->second.push_back(p);
        continue;
      }
      int64_t bytes = byteSize(t);
      if (buckets.empty() || (filled > 0 && filled + bytes > limit)) {
        buckets.emplace_back();
        filled = 0;
      }
      buckets.back().params.push_back(FlatSymbolRefAttr::get(p.getSymNameAttr()));
      filled += bytes;
    }
    for (auto &[layers, params] : repeats) {
      int64_t layerBytes = 0;
      SmallVector<Attribute> names;
      for (ParamOp p : params) {
        layerBytes += byteSize(cast<RankedTensorType>(p.getType())) / std::max<int64_t>(layers, 1);
        names.push_back(FlatSymbolRefAttr::get(p.getSymNameAttr()));
      }
      for (int64_t l = 0; l < layers; ++l) {
        // A new bucket when the layer would overflow the last one (or that
        // one is not this repeat's).
        if (buckets.empty() || buckets.back().end != l || filled + layerBytes > limit) {
          buckets.push_back({names, l, l});
          filled = 0;
        }
        buckets.back().end = l + 1;
        filled += layerBytes;
      }
    }
    OpBuilder b(step.getContext());
    b.setInsertionPointToStart(&step.getBody().front());
    SmallVector<ArrayAttr> outsideRepeats;
    for (const Bucket &bucket : buckets) {
      b.create<GradAllReduceOp>(job.getLoc(), b.getArrayAttr(bucket.params),
                                bucket.first < 0 ? DenseI64ArrayAttr()
                                                 : b.getDenseI64ArrayAttr({bucket.first, bucket.end}),
                                Value());
      if (bucket.first < 0)
        outsideRepeats.push_back(b.getArrayAttr(bucket.params));
    }
    overlapWithBackward(model, repeats, outsideRepeats);
    return success();
  }

  /// The same sums issued during the backward of @train_step: each reverse
  /// repeat's iteration ends with the all-reduce of the layer it finished
  /// (one unit), and the params outside repeats go out before it returns.
  /// Only where every unit is covered exactly: a repeat's params must be
  /// all the stacked params of its length (repeats of one length share
  /// units, so neither may issue alone); otherwise the program does not
  /// overlap and @optimizer_step's buckets do all the work.
  void overlapWithBackward(ModelOp model,
                           ArrayRef<std::pair<int64_t, SmallVector<ParamOp>>> repeats,
                           ArrayRef<ArrayAttr> outsideRepeats) {
    auto fwdBwd = dyn_cast_or_null<func::FuncOp>(model.lookupSymbol("train_step"));
    if (!fwdBwd)
      return;
    SmallVector<std::pair<RepeatOp, SmallVector<Attribute>>> reverse;
    DenseSet<int64_t> counts;
    bool covered = true;
    fwdBwd.walk([&](RepeatOp r) {
      if (!r.getReverse())
        return;
      SetVector<StringRef> got;
      r.walk([&](GradAccumulateOp acc) { got.insert(acc.getParam()); });
      auto it = llvm::find_if(repeats, [&](auto &x) { return x.first == (int64_t)r.getCount(); });
      if (it == repeats.end() || !counts.insert(it->first).second ||
          got.size() != it->second.size()) {
        covered = false;
        return;
      }
      SmallVector<Attribute> names;
      for (ParamOp p : it->second) {
        if (!got.contains(p.getSymName()))
          covered = false;
        names.push_back(FlatSymbolRefAttr::get(p.getSymNameAttr()));
      }
      reverse.push_back({r, names});
    });
    if (!covered || reverse.size() != repeats.size())
      return;
    OpBuilder b(model.getContext());
    for (auto &[r, names] : reverse) {
      b.setInsertionPoint(r.getBody().front().getTerminator());
      b.create<GradAllReduceOp>(r.getLoc(), b.getArrayAttr(names), DenseI64ArrayAttr(),
                                r.getInductionVar());
    }
    b.setInsertionPoint(fwdBwd.getBody().front().getTerminator());
    for (ArrayAttr params : outsideRepeats)
      b.create<GradAllReduceOp>(fwdBwd.getLoc(), params, DenseI64ArrayAttr(), Value());
  }
};

} // namespace
