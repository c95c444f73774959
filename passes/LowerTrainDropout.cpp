//===- LowerTrainDropout.cpp - Training dropout as a generated kernel -----===//
//
// DESIGN decision 6: a dropout mask is a pure function of (seed, step,
// micro-step, rng_id, repeat iteration, element index), drawn by the
// runtime's element function bmrt::dropout (runtime/include/bmrt/dropout.h,
// which documents the Philox keying and its field widths). So the lowering
// makes no state: a generated kernel takes the key's run-time parts as i64
// scalar operands and the element's index from bmb_exec.elem_index. The
// backward's dropout of dy has the forward's id and layer and draws the
// same mask; so would a recomputed forward and a resumed run.
//
//===----------------------------------------------------------------------===//
#include "passes/EntryLowering.h"

using namespace mlir;
using namespace mlir::bmb;

LogicalResult EntryLowering::lowerTrainDropout(DropoutOp op) {
  // A generated kernel calling bmrt::dropout (runtime/include/bmrt/dropout.h)
  // with the mask's key: (seed, step, micro_step) of StepArgs, the op's
  // rng_id, the iteration of the enclosing repeat (the forward layer, also
  // in the reverse loop of the backward: its induction var maps to
  // count-1-j) and the element's index. The backward's dropout of dy has
  // the same id and layer, so it draws the forward's mask.
  Location loc = op.getLoc();
  int64_t rngId = op.getRngId();
  auto t = cast<RankedTensorType>(op.getType());
  // The key's field widths (dropout.h): beyond them masks would repeat.
  if (rngId < 0 || rngId >= (1 << 15))
    return op.emitError("dropout rng_id ") << rngId << " is outside [0, 2^15) (the mask's key)";
  if (t.getNumElements() >= (int64_t(1) << 48))
    return op.emitError("dropout over ") << t.getNumElements()
                                         << " elements: the mask's key holds 2^48";
  auto repeat = op->getParentOfType<RepeatOp>();
  if (repeat && repeat->getParentOfType<RepeatOp>())
    return op.emitError("dropout inside nested repeats is not supported yet (the mask's key "
                        "holds one layer index)");
  if (repeat && repeat.getCount() > (1 << 16))
    return op.emitError("dropout in a repeat of ")
           << repeat.getCount() << " layers: the mask's key holds 2^16";
  Value layer = repeat ? b.create<arith::IndexCastOp>(loc, b.getI64Type(),
                                                      lookup(repeat.getInductionVar()))
                       : b.create<arith::ConstantIntOp>(loc, 0, 64).getResult();
  SmallVector<Value> scalars = {stepArg(loc, "seed"), stepArg(loc, "step"),
                                stepArg(loc, "micro_step"), layer};
  Value out = alloc(loc, t);
  buffers[op.getResult()] = out;
  int64_t n = 0; // a program-wide unique name (fusion names its kernels kN)
  program.walk([&](ex::KernelOp) { ++n; });
  auto k = b.create<ex::KernelOp>(loc, b.getStringAttr("dropout" + std::to_string(n)),
                                  ValueRange{lookup(op.getInput())}, out, Value(),
                                  DenseI64ArrayAttr(), DenseI64ArrayAttr(), IntegerAttr(),
                                  scalars);
  Block *body = new Block();
  k.getBody().push_back(body);
  Type elem = t.getElementType();
  Value x = body->addArgument(elem, loc);
  SmallVector<Value> key;
  for (Value s : scalars)
    key.push_back(body->addArgument(s.getType(), loc));
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(body);
  Value p = b.create<arith::ConstantOp>(loc, b.getF64FloatAttr(op.getP().convertToDouble()));
  Value id = b.create<arith::ConstantIntOp>(loc, rngId, 64);
  Value index = b.create<ex::ElemIndexOp>(loc, b.getI64Type());
  Value y = b.create<ex::ElemCallOp>(
      loc, elem, b.getStringAttr("dropout"),
      ValueRange{x, p, key[0], key[1], key[2], id, key[3], index});
  b.create<ex::KernelYieldOp>(loc, y);
  return success();
}
