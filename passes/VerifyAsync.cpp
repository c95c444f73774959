//===- VerifyAsync.cpp - Nothing touches a collective's buffers in flight --===//
//
// bmb-verify-async (docs/distributed.md; DESIGN decision 5). A collective
// (bmb_exec.all_reduce_grads, reduce_scatter_grads, all_gather_params) owns
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
//===----------------------------------------------------------------------===//
#include "dialects/BmbExec/BmbExecOps.h"
#include "passes/Passes.h"

namespace mlir::bmb {
#define GEN_PASS_DEF_VERIFYASYNCPASS
#include "passes/Passes.h.inc"
} // namespace mlir::bmb

using namespace mlir;
using namespace mlir::bmb::exec;

namespace {

enum class Role { Grads, Params };

bool isCollective(Operation *op) {
  return isa<AllReduceGradsOp, ReduceScatterGradsOp, AllGatherParamsOp>(op);
}

/// The role a collective owns.
Role ownedBy(Operation *op) { return isa<AllGatherParamsOp>(op) ? Role::Params : Role::Grads; }

/// Whether `op` (not a collective) touches `role`.
bool touches(Operation *op, Role role) {
  if (role == Role::Grads)
    return isa<GradRefOp, GradNormOp, ClipGradsOp, AdamWUpdateOp, SGDUpdateOp, ZeroGradsOp>(op);
  return isa<ParamRefOp, AdamWUpdateOp, SGDUpdateOp>(op);
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
      auto wait = dyn_cast<WaitOp>(*request.user_begin());
      if (!wait || wait->getBlock() != issue->getBlock() || wait->isBeforeInBlock(issue)) {
        issue->emitError("bmb-verify-async: the wait of this collective must follow it in "
                         "the same block");
        ok = false;
        return;
      }
      Role role = ownedBy(issue);
      for (Operation *op = issue->getNextNode(); op != wait.getOperation();
           op = op->getNextNode()) {
        WalkResult r = op->walk([&](Operation *inner) {
          if (isCollective(inner) || !touches(inner, role))
            return WalkResult::advance();
          InFlightDiagnostic d = inner->emitError("bmb-verify-async: touches the ")
                                 << what(role) << " while a collective owns them";
          d.attachNote(issue->getLoc()) << "the collective, issued here";
          d.attachNote(wait.getLoc()) << "its wait";
          return WalkResult::interrupt();
        });
        if (r.wasInterrupted()) {
          ok = false;
          break;
        }
      }
    });
    if (!ok)
      signalPassFailure();
  }
};

} // namespace
