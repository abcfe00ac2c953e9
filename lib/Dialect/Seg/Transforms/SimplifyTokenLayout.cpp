//===- SimplifyTokenLayout.cpp - cancel NCHW <-> token switches -----------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// Layout changes (seg.reshape, seg.permute) are pushed towards the results
// through elementwise ops, token linears become 1×1 convolutions, and the
// permute/reshape folders cancel the round trips that meet.
//
//===----------------------------------------------------------------------===//

#include "TokenLayout.h"
#include "gpuopt/Dialect/Seg/Transforms/Passes.h"
#include "gpuopt/Dialect/Seg/Transforms/Transforms.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir {
namespace gpuopt {
namespace seg {
#define GEN_PASS_DEF_SIMPLIFYTOKENLAYOUTPASS
#include "gpuopt/Dialect/Seg/Transforms/Passes.h.inc"
} // namespace seg
} // namespace gpuopt
} // namespace mlir

using namespace mlir;
using namespace mlir::gpuopt::seg;

namespace {

bool isLayoutOp(Operation *op) {
  return isa_and_nonnull<ReshapeOp, PermuteOp>(op);
}

/// Re-creates the layout op `layout` on `value`; the result keeps the
/// element type of `value`.
Value applyLayout(Operation *layout, Value value, PatternRewriter &rewriter) {
  IRMapping mapping;
  mapping.map(layout->getOperand(0), value);
  return rewriter.clone(*layout, mapping)->getResult(0);
}

/// unary(L(x)) -> L(unary(x)) for a layout op L used only here.
template <typename OpTy> struct UnaryBelowLayout : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    Operation *layout = op.getInput().getDefiningOp();
    if (!isLayoutOp(layout) || !layout->hasOneUse())
      return rewriter.notifyMatchFailure(op,
                                         "input is not a one-use layout op");
    Operation *moved = rewriter.clone(*op.getOperation());
    moved->setOperand(0, layout->getOperand(0));
    moved->getResult(0).setType(layout->getOperand(0).getType());
    rewriter.replaceOp(op, applyLayout(layout, moved->getResult(0), rewriter));
    return success();
  }
};

/// Whether `a` and `b` are the same layout change of same-typed values.
bool sameLayout(Operation *a, Operation *b) {
  if (!isLayoutOp(a) || !isLayoutOp(b) || a->getName() != b->getName() ||
      a->getOperand(0).getType() != b->getOperand(0).getType() ||
      a->getResult(0).getType() != b->getResult(0).getType())
    return false;
  return a->getPropertiesAsAttribute() == b->getPropertiesAsAttribute();
}

/// binary(L(a), L(b)) -> L(binary(a, b)) when both operands have the same
/// layout change (no broadcasting involved).
template <typename OpTy> struct BinaryBelowLayout : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    Operation *lhs = op.getLhs().getDefiningOp();
    Operation *rhs = op.getRhs().getDefiningOp();
    if (!lhs || !rhs || !sameLayout(lhs, rhs))
      return rewriter.notifyMatchFailure(op, "operands differ in layout");
    if (!lhs->hasOneUse() && !(lhs == rhs && op.getLhs() == op.getRhs()))
      return rewriter.notifyMatchFailure(op, "layout op has other uses");
    Value inner = OpTy::create(rewriter, op.getLoc(), lhs->getOperand(0),
                               rhs->getOperand(0));
    rewriter.replaceOp(op, applyLayout(lhs, inner, rewriter));
    return success();
  }
};

/// linear(tokens(X)) -> tokens(conv2d 1×1(X)).
struct TokenLinearToConv : OpRewritePattern<LinearOp> {
  TokenLinearToConv(MLIRContext *context, int64_t &counter)
      : OpRewritePattern(context), counter(counter) {}

  LogicalResult matchAndRewrite(LinearOp op,
                                PatternRewriter &rewriter) const override {
    FailureOr<TokenView> view = matchTokenView(op.getInput());
    if (failed(view))
      return rewriter.notifyMatchFailure(op, "input is not a token view");
    rewriteTokenLinearAsConv(op, *view, rewriter);
    ++counter;
    return success();
  }

  int64_t &counter;
};

struct SimplifyTokenLayoutPass
    : mlir::gpuopt::seg::impl::SimplifyTokenLayoutPassBase<
          SimplifyTokenLayoutPass> {
  void runOnOperation() override {
    int64_t converted = 0;
    RewritePatternSet patterns(&getContext());
    populateSimplifyTokenLayoutPatterns(patterns);
    patterns.add<TokenLinearToConv>(&getContext(), converted);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    numLinearsToConv += converted;
  }
};
} // namespace

void mlir::gpuopt::seg::populateSimplifyTokenLayoutPatterns(
    RewritePatternSet &patterns) {
  patterns.add<UnaryBelowLayout<ReluOp>, UnaryBelowLayout<GeluOp>,
               UnaryBelowLayout<SigmoidOp>, BinaryBelowLayout<AddOp>,
               BinaryBelowLayout<MulOp>>(patterns.getContext());
}
