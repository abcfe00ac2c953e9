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
//   fused_conv2d(channel_shift(X))    -> fused_conv2d(X), the offsets composed
//                                        (a shift folded before the shift
//                                        under it was recognized: the crop of
//                                        a circular pad along H and W)
//   conv(merge(shift(view(X))))       -> fused_conv2d(X) with frame_shift
//                                        (TSM: a zero-filled shift along T
//                                        of the (N/T, T, C, H, W) view, read
//                                        back as (N, C, H, W))
// where tokens(Y) is the NCHW -> (N, H·W, C) layout change (TokenLayout.h).
// A roll along the channels of an ungrouped convolution's input (also one
// piece of a channel concat) is a permutation of the weight's input
// channels: it moves onto the weight, where --seg-split-load-time computes it
// once at load.
//
//===----------------------------------------------------------------------===//

#include "TokenLayout.h"
#include "gpuopt/Dialect/Seg/Transforms/Passes.h"
#include "gpuopt/Dialect/Seg/Transforms/Transforms.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/Support/CheckedArithmetic.h"

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
        op, shift.getInput(), op.getWeight(), op.getBias(),
        /*residual=*/Value(), shift.getOffsetsHAttr(), shift.getOffsetsWAttr(),
        shift.getModeAttr(), op.getStrideAttr(), op.getPaddingAttr(),
        op.getDilationAttr(), op.getGroupsAttr(),
        ActivationAttr::get(rewriter.getContext(), Activation::None),
        /*frame_shift=*/FrameShiftAttr());
    return success();
  }
};

/// fused_conv2d(channel_shift(X)) -> fused_conv2d(X) reading through both
/// shifts, where they compose exactly: the convolution reads no shift yet;
/// both are cyclic (the offsets add, mod the map's size); or both are
/// zero-filled and no channel is shifted along one axis by both (a zero
/// shift along H of a zero shift along W is the zero shift along both; two
/// along one axis in opposite directions would zero more than their sum).
struct ShiftIntoShiftedConv : OpRewritePattern<FusedConv2dOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(FusedConv2dOp op,
                                PatternRewriter &rewriter) const override {
    auto shift = op.getInput().getDefiningOp<ChannelShiftOp>();
    if (!shift)
      return rewriter.notifyMatchFailure(op, "input is not a channel_shift");
    ShiftMode mode = shift.getMode();
    SmallVector<int64_t> h(shift.getOffsetsH()), w(shift.getOffsetsW());
    if (op.hasShift()) {
      if (op.getMode() != mode)
        return rewriter.notifyMatchFailure(op, "cyclic and zero-filled");
      ArrayRef<int64_t> shape = shift.getType().getShape();
      auto compose = [&](ArrayRef<int64_t> outer, ArrayRef<int64_t> inner,
                         int64_t size) -> FailureOr<SmallVector<int64_t>> {
        if (outer.empty() || inner.empty())
          return SmallVector<int64_t>(outer.empty() ? inner : outer);
        SmallVector<int64_t> sum;
        for (auto [a, b] : llvm::zip_equal(outer, inner)) {
          if (mode == ShiftMode::Cyclic) {
            if (size == 0)
              return failure();
            // |a % size| + |b % size| < 2 · size: no overflow.
            sum.push_back(((a % size + b % size) % size + size) % size);
          } else {
            if (a != 0 && b != 0)
              return failure();
            sum.push_back(a + b);
          }
        }
        return sum;
      };
      FailureOr<SmallVector<int64_t>> ch =
          compose(op.getOffsetsH(), h, shape[2]);
      FailureOr<SmallVector<int64_t>> cw =
          compose(op.getOffsetsW(), w, shape[3]);
      if (failed(ch) || failed(cw))
        return rewriter.notifyMatchFailure(op, "shifts do not compose");
      h = std::move(*ch);
      w = std::move(*cw);
    }
    rewriter.modifyOpInPlace(op, [&] {
      op.getInputMutable().assign(shift.getInput());
      op.setOffsetsH(h);
      op.setOffsetsW(w);
      op.setMode(mode);
    });
    return success();
  }
};

/// A frame shift `v` reads through: `v` is the (N, C, H, W) merge of a
/// zero-filled seg.shift of the (N/T, T, C, H, W) view along T with one
/// offset per channel (TSM's temporal shift, as --collapse-rolls makes it).
struct FrameShiftSource {
  ShiftOp shift;
  int64_t frames;
  SmallVector<int64_t> offsets; // One per channel, in (-frames, frames).
};

FailureOr<FrameShiftSource> matchFrameShift(Value v, PatternRewriter &rewriter,
                                            Operation *op) {
  auto merge = v.getDefiningOp<ReshapeOp>();
  if (!merge)
    return rewriter.notifyMatchFailure(op, "input is not a reshape");
  auto shift = merge.getInput().getDefiningOp<ShiftOp>();
  if (!shift)
    return rewriter.notifyMatchFailure(op, "input is not a reshaped shift");
  auto view = cast<RankedTensorType>(shift.getType());
  auto nchw = cast<RankedTensorType>(v.getType());
  if (view.getRank() != 5 || shift.getGroupDim() != 2 ||
      shift.getDims() != ArrayRef<int64_t>{1})
    return rewriter.notifyMatchFailure(
        op, "not a shift of the channels along dim 1 of a 5-D view");
  if (shift.getMode() != ShiftMode::Zero)
    return rewriter.notifyMatchFailure(op, "a cyclic shift along the frames");
  ArrayRef<int64_t> s = view.getShape();
  if (nchw.getRank() != 4 ||
      nchw.getShape() != ArrayRef<int64_t>{s[0] * s[1], s[2], s[3], s[4]})
    return rewriter.notifyMatchFailure(
        op, "the reshape does not merge the frames into the batch");
  int64_t frames = s[1];
  SmallVector<int64_t> offsets = shift.getNormalizedOffsets();
  if (frames < 1 || llvm::any_of(offsets, [&](int64_t dt) {
        return dt <= -frames || dt >= frames;
      }))
    return rewriter.notifyMatchFailure(
        op, "a channel shifted by the whole clip (reads only zeros)");
  return FrameShiftSource{shift, frames, std::move(offsets)};
}

/// conv2d / fused_conv2d(reshape(shift(view(X)))) with the shift along the
/// frames of the (N/T, T, C, H, W) view -> fused_conv2d(X) with
/// `frame_shift`. Over an existing frame shift of the same frames, the
/// offsets add where they compose exactly: per channel one is 0 or both have
/// the same sign (zero-filled shifts by a then b, a · b >= 0, are the
/// shift by a + b), with the sum inside the clip.
template <typename ConvOp>
struct FrameShiftIntoConv : OpRewritePattern<ConvOp> {
  using OpRewritePattern<ConvOp>::OpRewritePattern;

  LogicalResult matchAndRewrite(ConvOp op,
                                PatternRewriter &rewriter) const override {
    FailureOr<FrameShiftSource> source =
        matchFrameShift(op.getInput(), rewriter, op);
    if (failed(source))
      return failure();
    SmallVector<int64_t> offsets = source->offsets;
    FusedConv2dOp fused;
    if constexpr (std::is_same_v<ConvOp, FusedConv2dOp>)
      fused = op;
    if (fused && fused.hasFrameShift()) {
      FrameShiftAttr inner = fused.getFrameShiftAttr();
      if (inner.getFrames() != source->frames)
        return rewriter.notifyMatchFailure(op, "frame shifts of other clips");
      for (auto [a, b] : llvm::zip_equal(offsets, inner.getOffsets())) {
        if (a * b < 0 || a + b <= -source->frames || a + b >= source->frames)
          return rewriter.notifyMatchFailure(op, "frame shifts do not compose");
        a += b;
      }
    }
    Location loc = op.getLoc();
    // reshape(view(X)) folds to X.
    Value input = ReshapeOp::create(rewriter, loc, op.getInput().getType(),
                                    source->shift.getInput());
    auto frameShift =
        FrameShiftAttr::get(rewriter.getContext(), source->frames, offsets);
    if (fused) {
      rewriter.modifyOpInPlace(fused, [&] {
        fused.getInputMutable().assign(input);
        fused.setFrameShiftAttr(frameShift);
      });
      return success();
    }
    rewriter.replaceOpWithNewOp<FusedConv2dOp>(
        op, input, op.getWeight(), op.getBias(), /*residual=*/Value(),
        rewriter.getDenseI64ArrayAttr({}), rewriter.getDenseI64ArrayAttr({}),
        ShiftModeAttr::get(rewriter.getContext(), ShiftMode::Zero),
        op.getStrideAttr(), op.getPaddingAttr(), op.getDilationAttr(),
        op.getGroupsAttr(),
        ActivationAttr::get(rewriter.getContext(), Activation::None),
        frameShift);
    return success();
  }
};

/// The channel rotation of `v` if it is a roll along dim 1 only, normalized
/// to [0, C); std::nullopt otherwise.
std::optional<int64_t> channelRotation(Value v) {
  auto roll = v.getDefiningOp<RollOp>();
  if (!roll || roll.getDims().size() != 1 || roll.getDims()[0] != 1)
    return std::nullopt;
  int64_t channels = roll.getType().getDimSize(1);
  if (channels <= 0)
    return std::nullopt;
  int64_t s = roll.getShifts()[0] % channels;
  return s < 0 ? s + channels : s;
}

/// conv2d(roll(X, s, dim 1), W) with groups = 1 -> conv2d(X, roll(W, -s,
/// dim 1)): out[o] = Σ_c W[o, c] · X[(c − s) mod C] = Σ_c W[o, (c + s) mod C]
/// · X[c]. Through a channel concat, each rolled piece rotates its own slice
/// of the weight's input channels.
struct ChannelRollIntoConvWeight : OpRewritePattern<Conv2dOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(Conv2dOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getGroups() != 1)
      return rewriter.notifyMatchFailure(op, "grouped convolution");
    SmallVector<Value> pieces;
    auto concat = op.getInput().getDefiningOp<ConcatOp>();
    if (concat && concat.getDim() == 1)
      llvm::append_range(pieces, concat.getInputs());
    else
      pieces.push_back(op.getInput());
    if (llvm::none_of(pieces, [](Value p) { return channelRotation(p); }))
      return rewriter.notifyMatchFailure(op, "no channel roll in the input");
    Location loc = op.getLoc();
    auto weightType = cast<RankedTensorType>(op.getWeight().getType());
    SmallVector<int64_t> size(weightType.getShape());
    SmallVector<int64_t> start(size.size(), 0), step(size.size(), 1);
    SmallVector<Value> inputs, weights;
    for (Value piece : pieces) {
      int64_t channels = cast<RankedTensorType>(piece.getType()).getDimSize(1);
      size[1] = channels;
      Value w = pieces.size() == 1
                    ? op.getWeight()
                    : SliceOp::create(rewriter, loc, op.getWeight(),
                                      rewriter.getDenseI64ArrayAttr(start),
                                      rewriter.getDenseI64ArrayAttr(size),
                                      rewriter.getDenseI64ArrayAttr(step))
                          .getResult();
      start[1] += channels;
      std::optional<int64_t> s = channelRotation(piece);
      if (!s) {
        inputs.push_back(piece);
        weights.push_back(w);
        continue;
      }
      inputs.push_back(piece.getDefiningOp<RollOp>().getInput());
      weights.push_back(RollOp::create(rewriter, loc, w,
                                       rewriter.getDenseI64ArrayAttr({-*s}),
                                       rewriter.getDenseI64ArrayAttr({1})));
    }
    Value input = inputs.size() == 1
                      ? inputs[0]
                      : ConcatOp::create(rewriter, loc, inputs, 1).getResult();
    Value weight =
        weights.size() == 1
            ? weights[0]
            : ConcatOp::create(rewriter, loc, weights, 1).getResult();
    rewriter.modifyOpInPlace(op, [&] {
      op.getInputMutable().assign(input);
      op.getWeightMutable().assign(weight);
    });
    return success();
  }
};

/// linear(tokens(channel_shift(X))) -> tokens(conv2d 1×1(channel_shift(X))),
/// which ShiftIntoConv then folds.
struct ShiftIntoTokenLinear : OpRewritePattern<LinearOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(LinearOp op,
                                PatternRewriter &rewriter) const override {
    FailureOr<TokenView> view = matchTokenView(op.getInput());
    if (failed(view))
      return rewriter.notifyMatchFailure(op, "input is not a token view");
    if (!view->nchw.getDefiningOp<ChannelShiftOp>())
      return rewriter.notifyMatchFailure(op, "tokens are not of a shift");
    rewriteTokenLinearAsConv(op, *view, rewriter);
    return success();
  }
};

/// Bytes of a tensor value, saturating at INT64_MAX: a verified shape can
/// hold more bytes than int64 counts.
int64_t bytesOf(Value v) {
  auto type = cast<RankedTensorType>(v.getType());
  int64_t bytes = type.getElementTypeBitWidth() / 8;
  for (int64_t dim : type.getShape())
    bytes = llvm::checkedMul(bytes, dim).value_or(INT64_MAX);
  return bytes;
}

struct FuseRollPass : mlir::gpuopt::seg::impl::FuseRollPassBase<FuseRollPass> {
  using FuseRollPassBase::FuseRollPassBase;

  void runOnOperation() override {
    Operation *root = getOperation();
    int64_t rollsBefore = countOps<RollOp>(root);
    int64_t bytesBefore = countDataMovementBytes(root);
    auto countFused = [&] {
      int64_t n = 0;
      root->walk(
          [&](FusedConv2dOp op) { n += op.hasShift() || op.hasFrameShift(); });
      return n;
    };
    int64_t fusedBefore = countFused();

    RewritePatternSet patterns(&getContext());
    populateCollapseRollsPatterns(patterns);
    populateFuseShiftPatterns(patterns);
    if (failed(applyPatternsGreedily(root, std::move(patterns))))
      return signalPassFailure();

    int64_t removed = rollsBefore - countOps<RollOp>(root);
    int64_t fused = countFused() - fusedBefore;
    int64_t left = countOps<ChannelShiftOp>(root);
    int64_t leftGeneric = countOps<ShiftOp>(root);
    int64_t saved =
        std::max<int64_t>(0, bytesBefore - countDataMovementBytes(root));
    numRollsRemoved += removed;
    numShiftsFused += fused;
    numShiftsLeft += left + leftGeneric;
    numBytesSaved += saved;
    if (report)
      emitRemark(root->getLoc())
          << "fuse-roll: " << removed << " seg.roll removed, " << fused
          << " shifts fused, " << left << " seg.channel_shift left, "
          << leftGeneric << " seg.shift left, " << saved
          << " bytes no longer moved";
  }
};
} // namespace

void mlir::gpuopt::seg::populateShiftedTokenLinearToConvPatterns(
    RewritePatternSet &patterns) {
  patterns.add<ShiftIntoTokenLinear>(patterns.getContext());
}

void mlir::gpuopt::seg::populateChannelRollIntoWeightPatterns(
    RewritePatternSet &patterns) {
  patterns.add<ChannelRollIntoConvWeight>(patterns.getContext());
}

void mlir::gpuopt::seg::populateFuseShiftPatterns(RewritePatternSet &patterns) {
  patterns.add<ShiftIntoConv, ShiftIntoShiftedConv,
               FrameShiftIntoConv<Conv2dOp>, FrameShiftIntoConv<FusedConv2dOp>>(
      patterns.getContext());
  populateChannelRollIntoWeightPatterns(patterns);
  populateShiftedTokenLinearToConvPatterns(patterns);
}

int64_t mlir::gpuopt::seg::countDataMovementBytes(Operation *root) {
  int64_t bytes = 0;
  auto add = [&](Value v) {
    bytes = llvm::checkedAdd(bytes, bytesOf(v)).value_or(INT64_MAX);
  };
  root->walk([&](Operation *op) {
    if (isa<SliceOp>(op)) {
      // A slice reads only what it copies, and writes it.
      add(op->getResult(0));
      add(op->getResult(0));
      return;
    }
    if (!isa<RollOp, ConcatOp, PadOp, ChannelShiftOp, ShiftOp>(op))
      return;
    for (Value v : op->getOperands())
      add(v);
    add(op->getResult(0));
  });
  return bytes;
}
