//===- BmbPromptOps.cpp - Shapes of the prompt-tuning ops -----------------===//
//
// The ops of BmbPromptOps.td have explicit result types; each verifier
// checks them against the operands, with messages in the "<op>: ..." wording
// of the shape rules.
//
//===----------------------------------------------------------------------===//

#include "dialects/Bmb/BmbOps.h"

#include "mlir/IR/Diagnostics.h"

using namespace mlir;
using namespace mlir::bmb;

namespace {

RankedTensorType typeOf(Value v) { return cast<RankedTensorType>(v.getType()); }

bool isI32(Value v) { return typeOf(v).getElementType().isSignlessInteger(32); }

/// A float table [rows, dim] of `like`'s element type.
bool isTable(Value v, Type elem) {
  RankedTensorType t = typeOf(v);
  return t.getRank() == 2 && t.getElementType() == elem;
}

} // namespace

LogicalResult SoftEmbeddingOp::verify() {
  RankedTensorType ids = typeOf(getIds()), w = typeOf(getWeight()), r = typeOf(getResult());
  if (!isI32(getIds()))
    return emitError("soft_embedding: ids must be i32, got ") << ids;
  if (w.getRank() != 2 || !isa<FloatType>(w.getElementType()))
    return emitError("soft_embedding: weight must be a float [num, dim] table, got ") << w;
  if (!isTable(getSoft(), w.getElementType()) || typeOf(getSoft()).getDimSize(1) != w.getDimSize(1))
    return emitError("soft_embedding: soft must be a [n_soft, ")
           << w.getDimSize(1) << "] table of the weight's type, got " << getSoft().getType();
  SmallVector<int64_t> shape(ids.getShape());
  shape.push_back(w.getDimSize(1));
  if (r.getShape() != ArrayRef<int64_t>(shape) || r.getElementType() != w.getElementType())
    return emitError("soft_embedding: result ") << r << " should be "
           << RankedTensorType::get(shape, w.getElementType());
  return success();
}

LogicalResult SoftEmbeddingGradOp::verify() {
  RankedTensorType dy = typeOf(getGrad()), ids = typeOf(getIds());
  if (!isI32(getIds()))
    return emitError("soft_embedding_grad: ids must be i32, got ") << ids;
  SmallVector<int64_t> shape(ids.getShape());
  shape.push_back(dy.getShape().back());
  if (dy.getShape() != ArrayRef<int64_t>(shape))
    return emitError("soft_embedding_grad: grad ") << dy << " is not [ids..., dim] for ids " << ids;
  for (Value t : {getDweight(), getDsoft()})
    if (!isTable(t, dy.getElementType()) || typeOf(t).getDimSize(1) != dy.getShape().back())
      return emitError("soft_embedding_grad: results must be [rows, ")
             << dy.getShape().back() << "] tables of the grad's type, got " << t.getType();
  return success();
}

/// gather_rows's shapes: x [B, T, D], positions i32 [B, M], rows [B*M, D].
static LogicalResult verifyGather(Operation *op, const char *name, RankedTensorType x,
                                  Value positions, RankedTensorType rows) {
  RankedTensorType p = typeOf(positions);
  if (x.getRank() != 3)
    return op->emitError(name) << ": input must be [B, T, D], got " << x;
  if (!isI32(positions) || p.getRank() != 2 || p.getDimSize(0) != x.getDimSize(0))
    return op->emitError(name) << ": positions must be i32 [" << x.getDimSize(0)
                               << ", M], got " << p;
  auto want = RankedTensorType::get({p.getDimSize(0) * p.getDimSize(1), x.getDimSize(2)},
                                    x.getElementType());
  if (rows != want)
    return op->emitError(name) << ": rows " << rows << " should be " << want;
  return success();
}

LogicalResult GatherRowsOp::verify() {
  return verifyGather(*this, "gather_rows", typeOf(getInput()), getPositions(),
                      typeOf(getResult()));
}

LogicalResult GatherRowsGradOp::verify() {
  return verifyGather(*this, "gather_rows_grad", typeOf(getResult()), getPositions(),
                      typeOf(getGrad()));
}

LogicalResult VerbalizerLossOp::verify() {
  RankedTensorType x = typeOf(getInput()), w = typeOf(getWeight()), labels = typeOf(getLabels()),
                   words = typeOf(getLabelWords()), calib = typeOf(getCalibration());
  if (x.getRank() != 2 || w.getRank() != 2 || x.getDimSize(1) != w.getDimSize(1) ||
      x.getElementType() != w.getElementType() || !isa<FloatType>(x.getElementType()))
    return emitError("verbalizer_loss: input [rows, D] and weight [V, D] must be float with "
                     "the same D, got ")
           << x << " and " << w;
  if (getBias() && typeOf(getBias()) != RankedTensorType::get({w.getDimSize(0)},
                                                              w.getElementType()))
    return emitError("verbalizer_loss: bias must be [") << w.getDimSize(0) << "], got "
                                                        << getBias().getType();
  if (!isI32(getLabels()) || labels.getRank() != 1)
    return emitError("verbalizer_loss: labels must be i32 [B], got ") << labels;
  if (!isI32(getLabelWords()) || words.getRank() != 4)
    return emitError("verbalizer_loss: label_words must be i32 [M, C, W, K], got ") << words;
  int64_t B = labels.getDimSize(0), M = words.getDimSize(0), C = words.getDimSize(1),
          W = words.getDimSize(2);
  if (x.getDimSize(0) != B * M)
    return emitError("verbalizer_loss: input has ") << x.getDimSize(0) << " rows, but "
           << B << " examples x " << M << " masks need " << B * M;
  if (calib.getShape() != ArrayRef<int64_t>{M, C, W} || !isa<FloatType>(calib.getElementType()))
    return emitError("verbalizer_loss: calibration must be float [")
           << M << ", " << C << ", " << W << "], got " << calib;
  if (static_cast<int64_t>(getReduce().size()) != M)
    return emitError("verbalizer_loss: reduce has ") << getReduce().size()
           << " entries, one per mask needs " << M;
  for (Attribute r : getReduce())
    if (!llvm::is_contained({"first", "mean", "max"}, cast<StringAttr>(r).getValue()))
      return emitError("verbalizer_loss: reduce is first, mean or max, got ") << r;
  Type f = x.getElementType();
  auto expect = [&](Value v, RankedTensorType want, const char *what) -> LogicalResult {
    if (v.getType() != want)
      return emitError("verbalizer_loss: ") << what << " " << v.getType() << " should be " << want;
    return success();
  };
  Type lossElem = f.isF64() ? f : Float32Type::get(getContext());
  if (failed(expect(getLoss(), RankedTensorType::get({}, lossElem), "loss")) ||
      failed(expect(getDlogits(), RankedTensorType::get({B * M, w.getDimSize(0)}, f), "dlogits")) ||
      failed(expect(getScores(), RankedTensorType::get({B, C}, f), "scores")) ||
      failed(expect(getWordProbs(), RankedTensorType::get({B, M, C, W}, f), "word_probs")))
    return failure();
  return success();
}
