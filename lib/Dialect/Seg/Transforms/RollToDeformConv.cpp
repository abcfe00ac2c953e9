//===- RollToDeformConv.cpp - shifts as deformable convolutions -----------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// conv2d(channel_shift(X)) -> deform_conv2d(X, shift_offsets(...)), one offset
// group per channel. The alternative to --fuse-roll that the benchmarks
// compare it with.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Dialect/Seg/Transforms/Passes.h"
#include "gpuopt/Dialect/Seg/Transforms/Transforms.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir {
namespace gpuopt {
namespace seg {
#define GEN_PASS_DEF_ROLLTODEFORMCONVPASS
#include "gpuopt/Dialect/Seg/Transforms/Passes.h.inc"
} // namespace seg
} // namespace gpuopt
} // namespace mlir

using namespace mlir;
using namespace mlir::gpuopt::seg;

namespace {

struct ShiftConvToDeformConv : OpRewritePattern<Conv2dOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(Conv2dOp op,
                                PatternRewriter &rewriter) const override {
    auto shift = op.getInput().getDefiningOp<ChannelShiftOp>();
    if (!shift)
      return rewriter.notifyMatchFailure(op, "input is not a channel_shift");
    if (shift.getOffsetsH().empty() && shift.getOffsetsW().empty())
      return rewriter.notifyMatchFailure(op, "the shift is empty (it folds)");
    auto in = cast<RankedTensorType>(shift.getInput().getType());
    auto weight = cast<RankedTensorType>(op.getWeight().getType());
    ArrayRef<int64_t> out = op.getType().getShape();
    int64_t channels = in.getDimSize(1);
    auto offsetType = RankedTensorType::get(
        {1, 2 * channels * weight.getDimSize(2) * weight.getDimSize(3), out[2],
         out[3]},
        in.getElementType());
    Value offsets = ShiftOffsetsOp::create(
        rewriter, op.getLoc(), offsetType, shift.getOffsetsHAttr(),
        shift.getOffsetsWAttr(), shift.getModeAttr(),
        rewriter.getDenseI64ArrayAttr(in.getShape().drop_front(2)),
        rewriter.getDenseI64ArrayAttr(weight.getShape().drop_front(2)),
        op.getStrideAttr(), op.getPaddingAttr(), op.getDilationAttr());
    rewriter.replaceOpWithNewOp<DeformConv2dOp>(
        op, shift.getInput(), offsets, op.getWeight(), op.getBias(),
        op.getStrideAttr(), op.getPaddingAttr(), op.getDilationAttr(),
        op.getGroupsAttr(), rewriter.getI64IntegerAttr(channels));
    return success();
  }
};

struct RollToDeformConvPass
    : mlir::gpuopt::seg::impl::RollToDeformConvPassBase<RollToDeformConvPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateCollapseRollsPatterns(patterns);
    populateShiftedTokenLinearToConvPatterns(patterns);
    populateChannelRollIntoWeightPatterns(patterns);
    populateShiftToDeformConvPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    getOperation().walk([&](DeformConv2dOp) { ++numDeformConvs; });
  }
};
} // namespace

void mlir::gpuopt::seg::populateShiftToDeformConvPatterns(
    RewritePatternSet &patterns) {
  patterns.add<ShiftConvToDeformConv>(patterns.getContext());
}
