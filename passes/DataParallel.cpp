//===- DataParallel.cpp - Gradient all-reduce in buckets -------------------===//
//
// bmb-data-parallel (docs/distributed.md). Every train program can run on N
// ranks (mpirun -np N): each rank runs forward/backward on its own
// micro-batches, with the loss divided by the target count of the whole
// global batch (the app's dlossScale), so the sum of the ranks' gradients is
// the gradient of the global mean loss. This pass puts that sum at the start
// of @optimizer_step: the trainable params in declaration order (the order
// of the flat trainable group that bmb-plan-memory lays out, so each bucket
// is one contiguous range of the gradients) are cut into buckets of at most
// `bucket-bytes` (PyTorch DDP's 25 MiB by default; one param larger than a
// bucket is a bucket of its own). All buckets are issued before the first
// wait, so the collectives queue back to back. On one rank they are no-ops.
//
//===----------------------------------------------------------------------===//
#include "dialects/Bmb/BmbOps.h"
#include "passes/Passes.h"
#include "passes/TrainJobs.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

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
    SmallVector<SmallVector<Attribute>> buckets;
    int64_t filled = 0;
    const int64_t limit = bucketBytes.getValue();
    for (ParamOp p : model.getParams()) {
      if (!p.isTrainable())
        continue;
      int64_t bytes = byteSize(cast<RankedTensorType>(p.getType()));
      if (buckets.empty() || (filled > 0 && filled + bytes > limit)) {
        buckets.emplace_back();
        filled = 0;
      }
      buckets.back().push_back(FlatSymbolRefAttr::get(p.getSymNameAttr()));
      filled += bytes;
    }
    OpBuilder b(step.getContext());
    b.setInsertionPointToStart(&step.getBody().front());
    for (ArrayRef<Attribute> bucket : buckets)
      b.create<GradAllReduceOp>(job.getLoc(), b.getArrayAttr(bucket));
    return success();
  }
};

} // namespace
