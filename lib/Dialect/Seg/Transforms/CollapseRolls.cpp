//===- CollapseRolls.cpp - rolls to per-channel shifts --------------------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// Three local rewrites, applied to a fixed point together with the seg
// folders, recognize the *semantics* of roll groups:
//   roll of an NCHW map along H/W            -> uniform channel_shift
//   concat of shifted channel slices of X    -> channel_shift of X
//   crop(cyclic shift(zero pad(X)))          -> zero-filled shift of X
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Dialect/Seg/Transforms/Passes.h"
#include "gpuopt/Dialect/Seg/Transforms/Transforms.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir {
namespace gpuopt {
namespace seg {
#define GEN_PASS_DEF_COLLAPSEROLLSPASS
#include "gpuopt/Dialect/Seg/Transforms/Passes.h.inc"
} // namespace seg
} // namespace gpuopt
} // namespace mlir

using namespace mlir;
using namespace mlir::gpuopt::seg;

namespace {

bool isNCHW(Value v) {
  return cast<RankedTensorType>(v.getType()).getRank() == 4;
}

/// roll(x, shifts, dims ⊆ {2, 3}) on NCHW -> channel_shift with the same
/// offsets for every channel.
struct RollToChannelShift : OpRewritePattern<RollOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(RollOp op,
                                PatternRewriter &rewriter) const override {
    if (!isNCHW(op.getInput()))
      return rewriter.notifyMatchFailure(op, "not a rank-4 (NCHW) tensor");
    int64_t channels = op.getType().getDimSize(1);
    SmallVector<int64_t> offsetsH, offsetsW;
    for (auto [shift, dim] : llvm::zip_equal(op.getShifts(), op.getDims())) {
      if (dim != 2 && dim != 3)
        return rewriter.notifyMatchFailure(op, "rolls a non-spatial dim");
      (dim == 2 ? offsetsH : offsetsW).assign(channels, shift);
    }
    rewriter.replaceOpWithNewOp<ChannelShiftOp>(
        op, op.getInput(), rewriter.getDenseI64ArrayAttr(offsetsH),
        rewriter.getDenseI64ArrayAttr(offsetsW),
        ShiftModeAttr::get(rewriter.getContext(), ShiftMode::Cyclic));
    return success();
  }
};

/// A channel slice `slice(X)[:, c0 : c0 + n]` (full along every other dim,
/// unit steps), optionally shifted.
struct ShiftedSlice {
  Value source;
  int64_t firstChannel = 0;
  int64_t numChannels = 0;
  ChannelShiftOp shift; // null: not shifted
};

FailureOr<ShiftedSlice> matchShiftedSlice(Value v) {
  ShiftedSlice result;
  if (auto shift = v.getDefiningOp<ChannelShiftOp>()) {
    result.shift = shift;
    v = shift.getInput();
  }
  auto slice = v.getDefiningOp<SliceOp>();
  if (!slice || !isNCHW(slice.getInput()))
    return failure();
  ArrayRef<int64_t> shape =
      cast<RankedTensorType>(slice.getInput().getType()).getShape();
  for (int64_t d : {0, 2, 3})
    if (slice.getStart()[d] != 0 || slice.getSize()[d] != shape[d])
      return failure();
  if (llvm::any_of(slice.getStep(), [](int64_t s) { return s != 1; }))
    return failure();
  result.source = slice.getInput();
  result.firstChannel = slice.getStart()[1];
  result.numChannels = slice.getSize()[1];
  return result;
}

/// concat(dim = 1) of (shifted) channel slices that partition X in order ->
/// channel_shift(X) with the slices' offsets side by side.
struct ConcatOfShiftedSlices : OpRewritePattern<ConcatOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ConcatOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getDim() != 1 || !isNCHW(op.getResult()))
      return rewriter.notifyMatchFailure(op, "not a channel concat of NCHW");
    Value source;
    std::optional<ShiftMode> mode;
    SmallVector<int64_t> offsetsH, offsetsW;
    bool anyH = false, anyW = false;
    int64_t next = 0;
    for (Value operand : op.getInputs()) {
      FailureOr<ShiftedSlice> part = matchShiftedSlice(operand);
      if (failed(part))
        return rewriter.notifyMatchFailure(op,
                                           "operand is not a channel slice");
      if (source && part->source != source)
        return rewriter.notifyMatchFailure(op, "slices of different tensors");
      if (part->firstChannel != next)
        return rewriter.notifyMatchFailure(op,
                                           "slices not contiguous in order");
      source = part->source;
      next += part->numChannels;
      auto append = [&](ArrayRef<int64_t> offsets, SmallVector<int64_t> &all,
                        bool &any) {
        if (offsets.empty()) {
          all.append(part->numChannels, 0);
          return;
        }
        any = true;
        llvm::append_range(all, offsets);
      };
      if (part->shift) {
        ShiftMode partMode = part->shift.getMode();
        if (mode && *mode != partMode)
          return rewriter.notifyMatchFailure(op,
                                             "cyclic and zero shifts mixed");
        mode = partMode;
        append(part->shift.getOffsetsH(), offsetsH, anyH);
        append(part->shift.getOffsetsW(), offsetsW, anyW);
      } else {
        offsetsH.append(part->numChannels, 0);
        offsetsW.append(part->numChannels, 0);
      }
    }
    if (next != cast<RankedTensorType>(source.getType()).getDimSize(1) ||
        source.getType() != op.getType())
      return rewriter.notifyMatchFailure(op, "slices do not cover the tensor");
    if (!anyH)
      offsetsH.clear();
    if (!anyW)
      offsetsW.clear();
    rewriter.replaceOpWithNewOp<ChannelShiftOp>(
        op, source, rewriter.getDenseI64ArrayAttr(offsetsH),
        rewriter.getDenseI64ArrayAttr(offsetsW),
        ShiftModeAttr::get(rewriter.getContext(),
                           mode.value_or(ShiftMode::Cyclic)));
    return success();
  }
};

/// slice(channel_shift(pad(X, 0), cyclic)) that crops exactly the padding
/// away, where no offset exceeds the total padding of its axis ->
/// zero-filled channel_shift(X): the wrapped-around elements are all padding
/// zeros.
struct CroppedPaddedShiftToZeroShift : OpRewritePattern<SliceOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(SliceOp op,
                                PatternRewriter &rewriter) const override {
    auto shift = op.getInput().getDefiningOp<ChannelShiftOp>();
    if (!shift || shift.getMode() != ShiftMode::Cyclic)
      return rewriter.notifyMatchFailure(op, "not a crop of a cyclic shift");
    auto pad = shift.getInput().getDefiningOp<PadOp>();
    if (!pad || pad.getValue().convertToDouble() != 0.0)
      return rewriter.notifyMatchFailure(op, "not a shift of a zero padding");
    ArrayRef<int64_t> low = pad.getLow(), high = pad.getHigh();
    ArrayRef<int64_t> shape =
        cast<RankedTensorType>(pad.getInput().getType()).getShape();
    if (op.getStart() != low || op.getSize() != shape ||
        llvm::any_of(op.getStep(), [](int64_t s) { return s != 1; }))
      return rewriter.notifyMatchFailure(op, "does not crop the padding away");
    if (low[0] || high[0] || low[1] || high[1])
      return rewriter.notifyMatchFailure(op, "pads batch or channels");
    // A source index that wraps around lands in the other side's padding
    // as long as |offset| <= low + high: every wrapped element is a zero.
    auto fits = [](ArrayRef<int64_t> offsets, int64_t lo, int64_t hi) {
      return llvm::all_of(offsets,
                          [&](int64_t s) { return std::abs(s) <= lo + hi; });
    };
    if (!fits(shift.getOffsetsH(), low[2], high[2]) ||
        !fits(shift.getOffsetsW(), low[3], high[3]))
      return rewriter.notifyMatchFailure(op, "an offset exceeds the padding");
    rewriter.replaceOpWithNewOp<ChannelShiftOp>(
        op, pad.getInput(), shift.getOffsetsHAttr(), shift.getOffsetsWAttr(),
        ShiftModeAttr::get(rewriter.getContext(), ShiftMode::Zero));
    return success();
  }
};

struct CollapseRollsPass
    : mlir::gpuopt::seg::impl::CollapseRollsPassBase<CollapseRollsPass> {
  using CollapseRollsPassBase::CollapseRollsPassBase;

  void runOnOperation() override {
    int64_t rollsBefore = countOps<RollOp>(getOperation());
    RewritePatternSet patterns(&getContext());
    populateCollapseRollsPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    int64_t removed = rollsBefore - countOps<RollOp>(getOperation());
    int64_t shifts = countOps<ChannelShiftOp>(getOperation());
    numRollsRemoved += removed;
    numShifts += shifts;
    if (report)
      emitRemark(getOperation().getLoc())
          << "collapse-rolls: " << removed << " seg.roll removed, " << shifts
          << " seg.channel_shift";
  }
};
} // namespace

void mlir::gpuopt::seg::populateCollapseRollsPatterns(
    RewritePatternSet &patterns) {
  patterns.add<RollToChannelShift, ConcatOfShiftedSlices,
               CroppedPaddedShiftToZeroShift>(patterns.getContext());
}
