//===- BmbCanonicalize.cpp - Folds and canonicalization patterns ----------===//
//
// Identities fold (dropout with p = 0, scale by 1, reshape to the same type,
// the identity transpose); chains of the same data-movement or scaling op
// collapse into one. Each rule is stated above its code. All are exact in
// real arithmetic; combining two scales rounds once instead of twice, so the
// result may differ in the last bit (as any reassociating rewrite does).
//
//===----------------------------------------------------------------------===//

#include "dialects/Bmb/BmbOps.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::bmb;

// dropout(x, p = 0) -> x: nothing is dropped and the scale is 1.
OpFoldResult DropoutOp::fold(FoldAdaptor) {
  if (getP().isZero())
    return getInput();
  return {};
}

// scale(x, 1.0) -> x.
OpFoldResult ScaleOp::fold(FoldAdaptor) {
  if (getFactor().convertToDouble() == 1.0)
    return getInput();
  return {};
}

// reshape(x : T) : T -> x.
OpFoldResult ReshapeOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType())
    return getInput();
  return {};
}

// transpose(x, [0, 1, ..., n-1]) -> x.
OpFoldResult TransposeOp::fold(FoldAdaptor) {
  for (auto [i, p] : llvm::enumerate(getPerm()))
    if (p != int64_t(i))
      return {};
  return getInput();
}

namespace {

// scale(scale(x, a), b) -> scale(x, a * b).
struct CombineScales : OpRewritePattern<ScaleOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ScaleOp op,
                                PatternRewriter &rewriter) const override {
    auto inner = op.getInput().getDefiningOp<ScaleOp>();
    if (!inner)
      return failure();
    double factor =
        inner.getFactor().convertToDouble() * op.getFactor().convertToDouble();
    rewriter.replaceOpWithNewOp<ScaleOp>(op, op.getType(), inner.getInput(),
                                         rewriter.getF64FloatAttr(factor));
    return success();
  }
};

// reshape(reshape(x)) -> reshape(x): a reshape only depends on the element
// order, which the intermediate shape does not change.
struct CombineReshapes : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReshapeOp op,
                                PatternRewriter &rewriter) const override {
    auto inner = op.getInput().getDefiningOp<ReshapeOp>();
    if (!inner)
      return failure();
    rewriter.replaceOpWithNewOp<ReshapeOp>(op, op.getType(), inner.getInput());
    return success();
  }
};

// transpose(transpose(x, p), q) -> transpose(x, r) with r[i] = p[q[i]]:
// the outer result's dimension i is the inner result's q[i], which is the
// input's p[q[i]].
struct CombineTransposes : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rewriter) const override {
    auto inner = op.getInput().getDefiningOp<TransposeOp>();
    if (!inner)
      return failure();
    ArrayRef<int64_t> p = inner.getPerm(), q = op.getPerm();
    SmallVector<int64_t> r;
    for (int64_t qi : q)
      r.push_back(p[qi]);
    rewriter.replaceOpWithNewOp<TransposeOp>(op, op.getType(), inner.getInput(),
                                             rewriter.getDenseI64ArrayAttr(r));
    return success();
  }
};

} // namespace

void ScaleOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                          MLIRContext *ctx) {
  results.add<CombineScales>(ctx);
}

void ReshapeOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                            MLIRContext *ctx) {
  results.add<CombineReshapes>(ctx);
}

void TransposeOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                              MLIRContext *ctx) {
  results.add<CombineTransposes>(ctx);
}
