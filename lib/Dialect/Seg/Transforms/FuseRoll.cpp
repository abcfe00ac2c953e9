//===- FuseRoll.cpp - fold shifts into conv/linear addressing -------------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// After --collapse-rolls, every roll group is one seg.channel_shift. Here each
// shift is folded into the input addressing of its consumers:
//   conv2d(channel_shift(X))          -> fused_conv2d(X) (shifted addressing)
//   linear(tokens(channel_shift(X)))  -> tokens(fused_conv2d(X) as 1×1)
// where tokens(Y) is the NCHW -> (N, H·W, C) layout change, and the linear
// becomes a 1×1 convolution over the channels.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Dialect/Seg/Transforms/Passes.h"
#include "gpuopt/Dialect/Seg/Transforms/Transforms.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir {
namespace gpuopt {
namespace seg {
#define GEN_PASS_DEF_FUSEROLLPASS
#include "gpuopt/Dialect/Seg/Transforms/Passes.h.inc"
} // namespace seg
} // namespace gpuopt
} // namespace mlir

using namespace mlir;
using namespace mlir::gpuopt::seg;

namespace {

/// conv2d(channel_shift(X)) -> fused_conv2d(X) reading through the shift.
struct ShiftIntoConv : OpRewritePattern<Conv2dOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(Conv2dOp op,
                                PatternRewriter &rewriter) const override {
    auto shift = op.getInput().getDefiningOp<ChannelShiftOp>();
    if (!shift)
      return rewriter.notifyMatchFailure(op, "input is not a channel_shift");
    rewriter.replaceOpWithNewOp<FusedConv2dOp>(
        op, shift.getInput(), op.getWeight(), op.getBias(), /*residual=*/Value(),
        shift.getOffsetsHAttr(), shift.getOffsetsWAttr(), shift.getModeAttr(),
        op.getStrideAttr(), op.getPaddingAttr(), op.getDilationAttr(),
        op.getGroupsAttr(), rewriter.getStringAttr("none"));
    return success();
  }
};

/// How the tokens a linear consumes were made from an NCHW map.
enum class TokenLayout {
  /// reshape (N, C, H·W) then permute [0, 2, 1]: tokens (N, H·W, C).
  FlattenTranspose,
  /// permute [0, 2, 3, 1], then optionally reshape (N, H·W, C).
  ChannelsLast,
};

struct TokenView {
  Value nchw;
  TokenLayout layout;
};

/// Matches `tokens` as a channels-last view of an NCHW value.
FailureOr<TokenView> matchTokenView(Value tokens) {
  auto type = cast<RankedTensorType>(tokens.getType());
  if (auto permute = tokens.getDefiningOp<PermuteOp>()) {
    // (N, C, H·W) -> (N, H·W, C), from a reshape of an NCHW map.
    if (permute.getDims() == ArrayRef<int64_t>{0, 2, 1}) {
      auto reshape = permute.getInput().getDefiningOp<ReshapeOp>();
      if (!reshape)
        return failure();
      auto src = cast<RankedTensorType>(reshape.getInput().getType());
      if (src.getRank() != 4 ||
          type.getShape() !=
              ArrayRef<int64_t>{src.getDimSize(0),
                                src.getDimSize(2) * src.getDimSize(3),
                                src.getDimSize(1)})
        return failure();
      return TokenView{reshape.getInput(), TokenLayout::FlattenTranspose};
    }
    if (permute.getDims() == ArrayRef<int64_t>{0, 2, 3, 1})
      return TokenView{permute.getInput(), TokenLayout::ChannelsLast};
    return failure();
  }
  if (auto reshape = tokens.getDefiningOp<ReshapeOp>()) {
    // (N, H, W, C) -> (N, H·W, C).
    auto permute = reshape.getInput().getDefiningOp<PermuteOp>();
    if (!permute || permute.getDims() != ArrayRef<int64_t>{0, 2, 3, 1})
      return failure();
    ArrayRef<int64_t> nhwc =
        cast<RankedTensorType>(permute.getType()).getShape();
    if (type.getShape() !=
        ArrayRef<int64_t>{nhwc[0], nhwc[1] * nhwc[2], nhwc[3]})
      return failure();
    return TokenView{permute.getInput(), TokenLayout::ChannelsLast};
  }
  return failure();
}

RankedTensorType withShape(Type like, ArrayRef<int64_t> shape) {
  return RankedTensorType::get(shape,
                               cast<RankedTensorType>(like).getElementType());
}

/// linear(tokens(channel_shift(X))) -> tokens(fused_conv2d(X, w as 1×1)).
struct ShiftIntoTokenLinear : OpRewritePattern<LinearOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(LinearOp op,
                                PatternRewriter &rewriter) const override {
    FailureOr<TokenView> view = matchTokenView(op.getInput());
    if (failed(view))
      return rewriter.notifyMatchFailure(op, "input is not a token view");
    auto shift = view->nchw.getDefiningOp<ChannelShiftOp>();
    if (!shift)
      return rewriter.notifyMatchFailure(op, "tokens are not of a shift");

    Location loc = op.getLoc();
    auto weightType = cast<RankedTensorType>(op.getWeight().getType());
    int64_t outChannels = weightType.getDimSize(0);
    Value weight = ReshapeOp::create(
        rewriter, loc,
        withShape(weightType,
                  {outChannels, weightType.getDimSize(1), 1, 1}),
        op.getWeight());
    Value conv = FusedConv2dOp::create(
        rewriter, loc, shift.getInput(), weight, op.getBias(),
        /*residual=*/Value(), shift.getOffsetsHAttr(), shift.getOffsetsWAttr(),
        shift.getModeAttr(), rewriter.getDenseI64ArrayAttr({1, 1}),
        rewriter.getDenseI64ArrayAttr({0, 0}),
        rewriter.getDenseI64ArrayAttr({1, 1}), rewriter.getI64IntegerAttr(1),
        rewriter.getStringAttr("none"));

    ArrayRef<int64_t> nchw = cast<RankedTensorType>(conv.getType()).getShape();
    Value tokens;
    if (view->layout == TokenLayout::FlattenTranspose) {
      Value flat = ReshapeOp::create(
          rewriter, loc,
          withShape(conv.getType(), {nchw[0], nchw[1], nchw[2] * nchw[3]}),
          conv);
      tokens = PermuteOp::create(rewriter, loc, flat,
                                 ArrayRef<int64_t>{0, 2, 1});
    } else {
      Value nhwc =
          PermuteOp::create(rewriter, loc, conv, ArrayRef<int64_t>{0, 2, 3, 1});
      tokens = nhwc.getType() == op.getType()
                   ? nhwc
                   : ReshapeOp::create(rewriter, loc, op.getType(), nhwc)
                         .getResult();
    }
    rewriter.replaceOp(op, tokens);
    return success();
  }
};

/// Bytes of a tensor value.
int64_t bytesOf(Value v) {
  auto type = cast<RankedTensorType>(v.getType());
  return type.getNumElements() *
         static_cast<int64_t>(type.getElementTypeBitWidth() / 8);
}

template <typename... Ops>
int64_t countOpsOf(Operation *root) {
  int64_t n = 0;
  root->walk([&](Operation *op) { n += isa<Ops...>(op); });
  return n;
}

struct FuseRollPass
    : mlir::gpuopt::seg::impl::FuseRollPassBase<FuseRollPass> {
  using FuseRollPassBase::FuseRollPassBase;

  void runOnOperation() override {
    Operation *root = getOperation();
    int64_t rollsBefore = countOpsOf<RollOp>(root);
    int64_t bytesBefore = countDataMovementBytes(root);
    auto countFused = [&] {
      int64_t n = 0;
      root->walk([&](FusedConv2dOp op) { n += op.hasShift(); });
      return n;
    };
    int64_t fusedBefore = countFused();

    RewritePatternSet patterns(&getContext());
    populateCollapseRollsPatterns(patterns);
    populateFuseShiftPatterns(patterns);
    if (failed(applyPatternsGreedily(root, std::move(patterns))))
      return signalPassFailure();

    int64_t removed = rollsBefore - countOpsOf<RollOp>(root);
    int64_t fused = countFused() - fusedBefore;
    int64_t left = countOpsOf<ChannelShiftOp>(root);
    int64_t saved =
        std::max<int64_t>(0, bytesBefore - countDataMovementBytes(root));
    numRollsRemoved += removed;
    numShiftsFused += fused;
    numShiftsLeft += left;
    numBytesSaved += saved;
    if (report)
      emitRemark(root->getLoc()) << "fuse-roll: " << removed << " seg.roll removed, "
                         << fused << " shifts fused, " << left
                         << " seg.channel_shift left, " << saved
                         << " bytes no longer moved";
  }
};
} // namespace

void mlir::gpuopt::seg::populateFuseShiftPatterns(RewritePatternSet &patterns) {
  patterns.add<ShiftIntoConv, ShiftIntoTokenLinear>(patterns.getContext());
}

int64_t mlir::gpuopt::seg::countDataMovementBytes(Operation *root) {
  int64_t bytes = 0;
  root->walk([&](Operation *op) {
    if (!isa<RollOp, SliceOp, ConcatOp, PadOp, ChannelShiftOp>(op))
      return;
    for (Value v : op->getOperands())
      bytes += bytesOf(v);
    bytes += bytesOf(op->getResult(0));
  });
  return bytes;
}
