//===- SegCanonicalize.cpp - seg op canonicalization patterns -------------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// The canonicalization patterns of the seg ops (hasCanonicalizer in
// SegOps.td): rewrites that create ops, where a folder could not.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Dialect/Seg/IR/SegOps.h"

#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/STLExtras.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::gpuopt::seg;

namespace {

bool unitSteps(SliceOp op) {
  return llvm::all_of(op.getStep(), [](int64_t s) { return s == 1; });
}

/// slice(pad(x)) -> pad(slice(x)) where the window cuts into the padding of
/// some dim: the part of the window inside x is sliced, the rest padded.
/// Windows that keep every padded dim whole stay (UNeXt's channel chunks of
/// a padded map: its crop-of-shift pattern reads them).
struct SliceOfPad : OpRewritePattern<SliceOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(SliceOp op,
                                PatternRewriter &rewriter) const override {
    auto pad = op.getInput().getDefiningOp<PadOp>();
    if (!pad || !unitSteps(op))
      return rewriter.notifyMatchFailure(op, "not a unit-step slice of a pad");
    ArrayRef<int64_t> inner =
        cast<RankedTensorType>(pad.getInput().getType()).getShape();
    ArrayRef<int64_t> low = pad.getLow(), high = pad.getHigh();
    SmallVector<int64_t> start, size, newLow, newHigh;
    bool cuts = false;
    for (auto [d, s] : llvm::enumerate(op.getStart())) {
      int64_t z = op.getSize()[d];
      // x occupies [low, low + inner) of the padded dim.
      int64_t first = std::max(s, low[d]);
      int64_t last = std::min(s + z, low[d] + inner[d]);
      if (first >= last)
        return rewriter.notifyMatchFailure(op, "the window reads only padding");
      bool padded = low[d] != 0 || high[d] != 0;
      bool whole = s == 0 && z == low[d] + inner[d] + high[d];
      cuts |= padded && !whole;
      start.push_back(first - low[d]);
      size.push_back(last - first);
      newLow.push_back(first - s);
      newHigh.push_back(s + z - last);
    }
    if (!cuts)
      return rewriter.notifyMatchFailure(op, "keeps every padded dim whole");
    Value slice =
        SliceOp::create(rewriter, op.getLoc(), pad.getInput(),
                        rewriter.getDenseI64ArrayAttr(start),
                        rewriter.getDenseI64ArrayAttr(size), op.getStepAttr());
    rewriter.replaceOpWithNewOp<PadOp>(
        op, slice, rewriter.getDenseI64ArrayAttr(newLow),
        rewriter.getDenseI64ArrayAttr(newHigh), pad.getValueAttr());
    return success();
  }
};

/// slice(concat(p_1, ..., p_n, dim = d)) with a unit step along d and a
/// window strictly inside d -> the concat of the windows along d of the
/// pieces it overlaps (one piece: its window), sliced along the other dims
/// when the slice cuts them (a crop of a circular pad: the windows then form
/// a rotation, --collapse-rolls' hand-written roll).
struct SliceOfConcat : OpRewritePattern<SliceOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(SliceOp op,
                                PatternRewriter &rewriter) const override {
    auto concat = op.getInput().getDefiningOp<ConcatOp>();
    if (!concat)
      return rewriter.notifyMatchFailure(op, "not a slice of a concat");
    int64_t d = concat.getDim();
    ArrayRef<int64_t> shape = concat.getType().getShape();
    int64_t s = op.getStart()[d], z = op.getSize()[d];
    if (op.getStep()[d] != 1 || (s == 0 && z == shape[d]))
      return rewriter.notifyMatchFailure(op,
                                         "not a unit-step window inside dim");
    SmallVector<int64_t> ones(shape.size(), 1);
    SmallVector<Value> parts;
    int64_t offset = 0;
    for (Value piece : concat.getInputs()) {
      ArrayRef<int64_t> pieceShape =
          cast<RankedTensorType>(piece.getType()).getShape();
      int64_t n = pieceShape[d];
      int64_t first = std::max(s, offset), last = std::min(s + z, offset + n);
      if (first < last) {
        SmallVector<int64_t> start(shape.size(), 0), size(pieceShape);
        start[d] = first - offset;
        size[d] = last - first;
        parts.push_back(SliceOp::create(rewriter, op.getLoc(), piece,
                                        rewriter.getDenseI64ArrayAttr(start),
                                        rewriter.getDenseI64ArrayAttr(size),
                                        rewriter.getDenseI64ArrayAttr(ones)));
      }
      offset += n;
    }
    Value windows = parts.front();
    if (parts.size() > 1)
      windows =
          ConcatOp::create(rewriter, op.getLoc(), parts, concat.getDimAttr());
    // The window along the other dims (whole along d), folded when whole.
    SmallVector<int64_t> start(op.getStart());
    start[d] = 0;
    rewriter.replaceOpWithNewOp<SliceOp>(op, windows,
                                         rewriter.getDenseI64ArrayAttr(start),
                                         op.getSizeAttr(), op.getStepAttr());
    return success();
  }
};

/// Whether `op` keeps every dim in `dims` whole (start 0, every index).
bool keepsWhole(SliceOp op, ArrayRef<int64_t> dims) {
  ArrayRef<int64_t> shape =
      cast<RankedTensorType>(op.getInput().getType()).getShape();
  return llvm::all_of(dims, [&](int64_t d) {
    return op.getStart()[d] == 0 && op.getStep()[d] == 1 &&
           op.getSize()[d] == shape[d];
  });
}

/// slice(roll(x)) keeping every rolled dim whole -> roll(slice(x)).
struct SliceOfRoll : OpRewritePattern<SliceOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(SliceOp op,
                                PatternRewriter &rewriter) const override {
    auto roll = op.getInput().getDefiningOp<RollOp>();
    if (!roll || !keepsWhole(op, roll.getDims()))
      return rewriter.notifyMatchFailure(op, "not a slice across a roll");
    Value slice =
        SliceOp::create(rewriter, op.getLoc(), roll.getInput(),
                        op.getStartAttr(), op.getSizeAttr(), op.getStepAttr());
    rewriter.replaceOpWithNewOp<RollOp>(op, slice, roll.getShiftsAttr(),
                                        roll.getDimsAttr());
    return success();
  }
};

/// The offsets of the indices a slice keeps of the group dim.
SmallVector<int64_t> keptOffsets(ArrayRef<int64_t> offsets, int64_t start,
                                 int64_t size, int64_t step) {
  SmallVector<int64_t> kept;
  for (int64_t i = 0; i < size; ++i)
    kept.push_back(offsets[start + i * step]);
  return kept;
}

/// slice(channel_shift(x)) keeping the shifted dims whole ->
/// channel_shift(slice(x)) with the kept channels' offsets.
struct SliceOfChannelShift : OpRewritePattern<SliceOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(SliceOp op,
                                PatternRewriter &rewriter) const override {
    auto shift = op.getInput().getDefiningOp<ChannelShiftOp>();
    if (!shift)
      return rewriter.notifyMatchFailure(op, "not a slice of a channel_shift");
    SmallVector<int64_t> shifted;
    if (!shift.getOffsetsH().empty())
      shifted.push_back(2);
    if (!shift.getOffsetsW().empty())
      shifted.push_back(3);
    if (!keepsWhole(op, shifted))
      return rewriter.notifyMatchFailure(op, "cuts a shifted dim");
    auto kept = [&](ArrayRef<int64_t> offsets) {
      if (offsets.empty())
        return SmallVector<int64_t>();
      return keptOffsets(offsets, op.getStart()[1], op.getSize()[1],
                         op.getStep()[1]);
    };
    Value slice =
        SliceOp::create(rewriter, op.getLoc(), shift.getInput(),
                        op.getStartAttr(), op.getSizeAttr(), op.getStepAttr());
    rewriter.replaceOpWithNewOp<ChannelShiftOp>(
        op, slice, rewriter.getDenseI64ArrayAttr(kept(shift.getOffsetsH())),
        rewriter.getDenseI64ArrayAttr(kept(shift.getOffsetsW())),
        shift.getModeAttr());
    return success();
  }
};

/// slice(shift(x)) keeping the shifted dims whole -> shift(slice(x)) with
/// the kept groups' offsets.
struct SliceOfShift : OpRewritePattern<SliceOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(SliceOp op,
                                PatternRewriter &rewriter) const override {
    auto shift = op.getInput().getDefiningOp<ShiftOp>();
    if (!shift || !keepsWhole(op, shift.getDims()))
      return rewriter.notifyMatchFailure(op, "not a slice across a shift");
    int64_t g = shift.getGroupDim();
    int64_t groups = shift.getType().getDimSize(g);
    SmallVector<int64_t> offsets;
    for (size_t k = 0; k < shift.getDims().size(); ++k)
      llvm::append_range(
          offsets,
          keptOffsets(shift.getOffsets().slice(k * groups, groups),
                      op.getStart()[g], op.getSize()[g], op.getStep()[g]));
    Value slice =
        SliceOp::create(rewriter, op.getLoc(), shift.getInput(),
                        op.getStartAttr(), op.getSizeAttr(), op.getStepAttr());
    rewriter.replaceOpWithNewOp<ShiftOp>(
        op, slice, shift.getGroupDimAttr(), shift.getDimsAttr(),
        rewriter.getDenseI64ArrayAttr(offsets), shift.getModeAttr());
    return success();
  }
};

/// The NCHW form of seg.shift (rank 4, group_dim 1, dims ⊆ {2, 3}) is
/// seg.channel_shift, which --fuse-roll folds into convolutions.
struct ShiftToChannelShift : OpRewritePattern<ShiftOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ShiftOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getType().getRank() != 4 || op.getGroupDim() != 1 ||
        llvm::any_of(op.getDims(), [](int64_t d) { return d != 2 && d != 3; }))
      return rewriter.notifyMatchFailure(op, "not the NCHW form");
    int64_t channels = op.getType().getDimSize(1);
    SmallVector<int64_t> normalized = op.getNormalizedOffsets();
    SmallVector<int64_t> offsetsH, offsetsW;
    for (auto [k, dim] : llvm::enumerate(op.getDims())) {
      ArrayRef<int64_t> row =
          ArrayRef(normalized).slice(k * channels, channels);
      if (llvm::all_of(row, [](int64_t v) { return v == 0; }))
        continue;
      llvm::append_range(dim == 2 ? offsetsH : offsetsW,
                         op.getOffsets().slice(k * channels, channels));
    }
    rewriter.replaceOpWithNewOp<ChannelShiftOp>(
        op, op.getInput(), rewriter.getDenseI64ArrayAttr(offsetsH),
        rewriter.getDenseI64ArrayAttr(offsetsW), op.getModeAttr());
    return success();
  }
};

/// A dim whose offsets are all zero (or multiples of its size, cyclic) is not
/// shifted: it leaves `dims`.
struct DropUnshiftedDims : OpRewritePattern<ShiftOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ShiftOp op,
                                PatternRewriter &rewriter) const override {
    int64_t groups = op.getType().getDimSize(op.getGroupDim());
    SmallVector<int64_t> normalized = op.getNormalizedOffsets();
    SmallVector<int64_t> dims, offsets;
    for (auto [k, dim] : llvm::enumerate(op.getDims())) {
      ArrayRef<int64_t> row = ArrayRef(normalized).slice(k * groups, groups);
      if (llvm::all_of(row, [](int64_t v) { return v == 0; }))
        continue;
      dims.push_back(dim);
      llvm::append_range(offsets, op.getOffsets().slice(k * groups, groups));
    }
    // No dim left: the folder returns the input.
    if (dims.size() == op.getDims().size() || dims.empty())
      return rewriter.notifyMatchFailure(op, "every dim is shifted");
    rewriter.modifyOpInPlace(op, [&] {
      op.setDims(dims);
      op.setOffsets(offsets);
    });
    return success();
  }
};

} // namespace

void SliceOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                          MLIRContext *context) {
  patterns.add<SliceOfPad, SliceOfConcat, SliceOfRoll, SliceOfChannelShift,
               SliceOfShift>(context);
}

void ShiftOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                          MLIRContext *context) {
  patterns.add<DropUnshiftedDims, ShiftToChannelShift>(context);
}
