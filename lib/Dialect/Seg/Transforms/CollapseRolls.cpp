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
#include "llvm/ADT/MapVector.h"

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

/// Whether a pad value is +0.0, what a zero-filled shift reads outside.
bool isPositiveZero(const APFloat &value) {
  return value.isZero() && !value.isNegative();
}

/// One operand of a concat along dim `g`: the interval
/// [first, first + count) of dim g of `source`, read shifted (`offsets[d]`
/// per dim d, one entry per index of the interval) or not.
struct ShiftedPiece {
  Value source;
  int64_t first = 0;
  int64_t count = 0;
  std::optional<ShiftMode> mode; // none: not shifted
  llvm::SmallMapVector<int64_t, SmallVector<int64_t>, 4> offsets;
};

/// Matches a piece: slice(X) taking an interval of dim g (whole and unit-step
/// along the others), optionally shifted by a roll, a channel_shift or a
/// shift over g, or zero-padded: pad(slice(X), 0) where along every other
/// dim the pad fills exactly the part of the dim a zero-filled shift of the
/// window reads from outside X (TSM's and ShiftViT's slice assignments into
/// a zero buffer, Shift-Net's windows of a padded map).
FailureOr<ShiftedPiece> matchPiece(Value v, int64_t g) {
  ShiftedPiece piece;
  int64_t count = cast<RankedTensorType>(v.getType()).getDimSize(g);
  auto uniform = [&](int64_t offset) {
    return SmallVector<int64_t>(count, offset);
  };
  PadOp pad;
  if (auto roll = v.getDefiningOp<RollOp>()) {
    if (llvm::is_contained(roll.getDims(), g))
      return failure();
    piece.mode = ShiftMode::Cyclic;
    for (auto [shift, dim] : llvm::zip_equal(roll.getShifts(), roll.getDims()))
      piece.offsets[dim] = uniform(shift);
    v = roll.getInput();
  } else if (auto shift = v.getDefiningOp<ChannelShiftOp>()) {
    if (g != 1)
      return failure();
    piece.mode = shift.getMode();
    if (!shift.getOffsetsH().empty())
      piece.offsets[2] = llvm::to_vector(shift.getOffsetsH());
    if (!shift.getOffsetsW().empty())
      piece.offsets[3] = llvm::to_vector(shift.getOffsetsW());
    v = shift.getInput();
  } else if (auto shift = v.getDefiningOp<ShiftOp>()) {
    if (shift.getGroupDim() != g)
      return failure();
    piece.mode = shift.getMode();
    for (auto [k, dim] : llvm::enumerate(shift.getDims()))
      piece.offsets[dim] =
          llvm::to_vector(shift.getOffsets().slice(k * count, count));
    v = shift.getInput();
  } else if ((pad = v.getDefiningOp<PadOp>())) {
    if (!isPositiveZero(pad.getValue()) || pad.getLow()[g] || pad.getHigh()[g])
      return failure();
    piece.mode = ShiftMode::Zero;
    v = pad.getInput();
  }
  auto slice = v.getDefiningOp<SliceOp>();
  if (!slice || llvm::any_of(slice.getStep(), [](int64_t s) { return s != 1; }))
    return failure();
  // A window of X's size of a zero padding of X (no padding along g) reads
  // X shifted by low - start, zero-filled, even where it reads only padding
  // (a shift by the size or more, which the slice-of-pad rewrite leaves).
  // Windows of another size (UNeXt's chunks of the padded map) are not.
  auto padded = slice.getInput().getDefiningOp<PadOp>();
  auto xSized = [&] {
    ArrayRef<int64_t> inner =
        cast<RankedTensorType>(padded.getInput().getType()).getShape();
    for (auto [d, size] : llvm::enumerate(inner))
      if (static_cast<int64_t>(d) != g && slice.getSize()[d] != size)
        return false;
    return true;
  };
  if (padded && !piece.mode && isPositiveZero(padded.getValue()) &&
      !padded.getLow()[g] && !padded.getHigh()[g] && xSized()) {
    for (int64_t d = 0, e = slice.getType().getRank(); d < e; ++d)
      if (int64_t offset = padded.getLow()[d] - slice.getStart()[d];
          d != g && offset)
        piece.offsets[d] = uniform(offset);
    piece.mode = ShiftMode::Zero;
    piece.source = padded.getInput();
    piece.first = slice.getStart()[g];
    piece.count = slice.getSize()[g];
    return piece;
  }
  ArrayRef<int64_t> shape =
      cast<RankedTensorType>(slice.getInput().getType()).getShape();
  for (auto [d, size] : llvm::enumerate(shape)) {
    int64_t d64 = static_cast<int64_t>(d);
    if (d64 == g)
      continue;
    int64_t s = slice.getStart()[d], z = slice.getSize()[d];
    if (!pad) {
      if (s != 0 || z != size)
        return failure();
      continue;
    }
    // The pad of a window [s, s + z) to the whole dim is a zero-filled shift
    // by low - s when what it fills is exactly what the shift reads from
    // outside: below the window only if it starts at 0, above only if it
    // ends at the dim's end.
    int64_t low = pad.getLow()[d], high = pad.getHigh()[d];
    if (low + z + high != size || (low != 0 && s != 0) ||
        (high != 0 && s + z != size))
      return failure();
    if (low != s)
      piece.offsets[d64] = uniform(low - s);
  }
  piece.source = slice.getInput();
  piece.first = slice.getStart()[g];
  piece.count = slice.getSize()[g];
  return piece;
}

/// concat(dim = g) of (shifted) slices that partition dim g of X in order ->
/// seg.shift(X) with group_dim g and the pieces' offsets side by side
/// (NCHW channel groups then canonicalize to seg.channel_shift).
struct ConcatOfShiftedPieces : OpRewritePattern<ConcatOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ConcatOp op,
                                PatternRewriter &rewriter) const override {
    int64_t g = op.getDim();
    SmallVector<ShiftedPiece, 4> pieces;
    std::optional<ShiftMode> mode;
    SmallVector<int64_t> dims;
    int64_t next = 0;
    for (Value operand : op.getInputs()) {
      FailureOr<ShiftedPiece> piece = matchPiece(operand, g);
      if (failed(piece))
        return rewriter.notifyMatchFailure(op, "operand is not a slice");
      if (!pieces.empty() && piece->source != pieces.front().source)
        return rewriter.notifyMatchFailure(op, "slices of different tensors");
      if (piece->first != next)
        return rewriter.notifyMatchFailure(op,
                                           "slices not contiguous in order");
      next += piece->count;
      if (piece->mode && !piece->offsets.empty()) {
        if (mode && *mode != *piece->mode)
          return rewriter.notifyMatchFailure(op,
                                             "cyclic and zero shifts mixed");
        mode = piece->mode;
        for (auto &entry : piece->offsets)
          if (!llvm::is_contained(dims, entry.first))
            dims.push_back(entry.first);
      }
      pieces.push_back(std::move(*piece));
    }
    Value source = pieces.front().source;
    if (next != cast<RankedTensorType>(source.getType()).getDimSize(g) ||
        source.getType() != op.getType())
      return rewriter.notifyMatchFailure(op, "slices do not cover the tensor");
    if (!mode) {
      rewriter.replaceOp(op, source);
      return success();
    }
    llvm::sort(dims);
    SmallVector<int64_t> offsets;
    for (int64_t dim : dims)
      for (ShiftedPiece &piece : pieces) {
        auto it = piece.offsets.find(dim);
        if (it == piece.offsets.end())
          offsets.append(piece.count, 0);
        else
          llvm::append_range(offsets, it->second);
      }
    rewriter.replaceOpWithNewOp<ShiftOp>(
        op, source, rewriter.getI64IntegerAttr(g),
        rewriter.getDenseI64ArrayAttr(dims),
        rewriter.getDenseI64ArrayAttr(offsets),
        ShiftModeAttr::get(rewriter.getContext(), *mode));
    return success();
  }
};

/// concat(X[a : L], X[0 : a], dim = d) (any number of whole, unit-step
/// slices of X or X itself, each starting where the last ended, wrapping
/// once from L to 0, covering L) is roll(X, L - a, d): a hand-written
/// torch.roll, or a crop of a circular pad once the crop has moved into the
/// pieces.
struct ConcatRotationToRoll : OpRewritePattern<ConcatOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ConcatOp op,
                                PatternRewriter &rewriter) const override {
    int64_t d = op.getDim();
    int64_t length = op.getType().getDimSize(d);
    Value source;
    int64_t first = 0, pos = 0, total = 0;
    bool wrapped = false;
    for (auto [i, operand] : llvm::enumerate(op.getInputs())) {
      Value x = operand;
      int64_t start = 0;
      if (auto slice = operand.getDefiningOp<SliceOp>()) {
        ArrayRef<int64_t> shape =
            cast<RankedTensorType>(slice.getInput().getType()).getShape();
        for (auto [k, size] : llvm::enumerate(shape))
          if (slice.getStep()[k] != 1 ||
              (static_cast<int64_t>(k) != d &&
               (slice.getStart()[k] != 0 || slice.getSize()[k] != size)))
            return rewriter.notifyMatchFailure(op, "not a window of one dim");
        x = slice.getInput();
        start = slice.getStart()[d];
      }
      if (source && x != source)
        return rewriter.notifyMatchFailure(op, "slices of different tensors");
      source = x;
      if (i == 0) {
        first = pos = start;
      } else if (start != pos) {
        if (wrapped || pos != length || start != 0)
          return rewriter.notifyMatchFailure(op, "not a rotation");
        wrapped = true;
        pos = 0;
      }
      int64_t count = cast<RankedTensorType>(operand.getType()).getDimSize(d);
      pos += count;
      total += count;
    }
    if (source.getType() != op.getType() || total != length || first == 0 ||
        (wrapped && pos != first) || (!wrapped && pos != length))
      return rewriter.notifyMatchFailure(op, "not a rotation");
    rewriter.replaceOpWithNewOp<RollOp>(
        op, source, rewriter.getDenseI64ArrayAttr({length - first}),
        rewriter.getDenseI64ArrayAttr({d}));
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
    int64_t channelShifts = countOps<ChannelShiftOp>(getOperation());
    int64_t shifts = countOps<ShiftOp>(getOperation());
    numRollsRemoved += removed;
    numShifts += channelShifts + shifts;
    if (report)
      emitRemark(getOperation().getLoc())
          << "collapse-rolls: " << removed << " seg.roll removed, "
          << channelShifts << " seg.channel_shift, " << shifts << " seg.shift";
  }
};
} // namespace

void mlir::gpuopt::seg::populateCollapseRollsPatterns(
    RewritePatternSet &patterns) {
  MLIRContext *context = patterns.getContext();
  patterns.add<RollToChannelShift, ConcatOfShiftedPieces, ConcatRotationToRoll,
               CroppedPaddedShiftToZeroShift>(context);
  // Slices of pads and concats, and the NCHW form of seg.shift.
  SliceOp::getCanonicalizationPatterns(patterns, context);
  ShiftOp::getCanonicalizationPatterns(patterns, context);
}
