//===- DataMovementOps.cpp - seg data movement, pooling, resampling -------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//

#include "Utils.h"

#include "gpuopt/Conversion/SegToLinalg/SegToLinalg.h"
#include "gpuopt/Dialect/Seg/IR/SegOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <limits>

using namespace mlir;
using namespace mlir::gpuopt::detail;
namespace seg = mlir::gpuopt::seg;

namespace {

Value extractSlice(OpBuilder &b, Location loc, Value x, ArrayRef<int64_t> start,
                   ArrayRef<int64_t> size, ArrayRef<int64_t> step) {
  auto type = RankedTensorType::get(size, tensorTypeOf(x).getElementType());
  return tensor::ExtractSliceOp::create(b, loc, type, x, indexAttrs(b, start),
                                        indexAttrs(b, size),
                                        indexAttrs(b, step));
}

struct SliceLowering : OpRewritePattern<seg::SliceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(seg::SliceOp op,
                                PatternRewriter &rewriter) const override {
    rewriter.replaceOp(op,
                       extractSlice(rewriter, op.getLoc(), op.getInput(),
                                    op.getStart(), op.getSize(), op.getStep()));
    return success();
  }
};

struct ConcatLowering : OpRewritePattern<seg::ConcatOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(seg::ConcatOp op,
                                PatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<tensor::ConcatOp>(
        op, op.getType(), op.getDimAttr().getInt(), op.getInputs());
    return success();
  }
};

struct PadLowering : OpRewritePattern<seg::PadOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(seg::PadOp op,
                                PatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, padTensor(rewriter, op.getLoc(), op.getInput(),
                                     op.getLow(), op.getHigh(),
                                     op.getValue().convertToDouble()));
    return success();
  }
};

/// A roll by s along a dim of size L is concat(x[L − s :], x[: L − s]).
struct RollLowering : OpRewritePattern<seg::RollOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(seg::RollOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = op.getInput();
    ArrayRef<int64_t> shape = op.getType().getShape();
    for (auto [shift, dim] : llvm::zip_equal(op.getShifts(), op.getDims())) {
      int64_t size = shape[dim];
      int64_t s = ((shift % size) + size) % size;
      if (s == 0)
        continue;
      SmallVector<int64_t> start(shape.size(), 0), ones(shape.size(), 1);
      SmallVector<int64_t> tailSize(shape), headSize(shape);
      start[dim] = size - s;
      tailSize[dim] = s;
      headSize[dim] = size - s;
      Value tail = extractSlice(rewriter, loc, x, start, tailSize, ones);
      start[dim] = 0;
      Value head = extractSlice(rewriter, loc, x, start, headSize, ones);
      x = tensor::ConcatOp::create(rewriter, loc, op.getType(), dim,
                                   ValueRange{tail, head});
    }
    rewriter.replaceOp(op, x);
    return success();
  }
};

struct ChannelShiftLowering : OpRewritePattern<seg::ChannelShiftOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(seg::ChannelShiftOp op,
                                PatternRewriter &rewriter) const override {
    rewriter.replaceOp(op,
                       channelShift(rewriter, op.getLoc(), op.getInput(),
                                    op.getOffsetsH(), op.getOffsetsW(),
                                    op.getMode() == seg::ShiftMode::Cyclic));
    return success();
  }
};

struct ShiftLowering : OpRewritePattern<seg::ShiftOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(seg::ShiftOp op,
                                PatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, groupShift(rewriter, op.getLoc(), op.getInput(),
                                      op.getGroupDim(), op.getDims(),
                                      op.getNormalizedOffsets(),
                                      op.getMode() == seg::ShiftMode::Cyclic));
    return success();
  }
};

struct ReshapeLowering : OpRewritePattern<seg::ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(seg::ReshapeOp op,
                                PatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, reshapeTensor(rewriter, op.getLoc(), op.getInput(),
                                         tensorTypeOf(op.getResult())));
    return success();
  }
};

struct PermuteLowering : OpRewritePattern<seg::PermuteOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(seg::PermuteOp op,
                                PatternRewriter &rewriter) const override {
    RankedTensorType type = tensorTypeOf(op.getResult());
    Value init = tensor::EmptyOp::create(rewriter, op.getLoc(), type.getShape(),
                                         type.getElementType());
    rewriter.replaceOp(op, linalg::TransposeOp::create(rewriter, op.getLoc(),
                                                       op.getInput(), init,
                                                       op.getDims())
                               .getResult()[0]);
    return success();
  }
};

/// Pad with −∞ (extra at the end for ceil_mode) + linalg.pooling_nchw_max.
struct MaxPool2dLowering : OpRewritePattern<seg::MaxPool2dOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(seg::MaxPool2dOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = tensorTypeOf(op.getResult());
    ArrayRef<int64_t> in = tensorTypeOf(op.getInput()).getShape();
    ArrayRef<int64_t> k = op.getKernel(), s = op.getStride(),
                      p = op.getPadding(), d = op.getDilation();
    SmallVector<int64_t> low = {0, 0, p[0], p[1]}, high = {0, 0, 0, 0};
    for (int i = 0; i < 2; ++i) {
      int64_t needed =
          (type.getDimSize(2 + i) - 1) * s[i] + d[i] * (k[i] - 1) + 1;
      high[2 + i] = std::max<int64_t>(needed - in[2 + i] - p[i], 0);
    }
    double lowest = -std::numeric_limits<double>::infinity();
    Value padded = padTensor(rewriter, loc, op.getInput(), low, high, lowest);
    Value window =
        tensor::EmptyOp::create(rewriter, loc, k, type.getElementType());
    Value init = filledTensor(rewriter, loc, type, lowest);
    rewriter.replaceOp(
        op, linalg::PoolingNchwMaxOp::create(rewriter, loc, TypeRange{type},
                                             ValueRange{padded, window}, init,
                                             rewriter.getI64VectorAttr(s),
                                             rewriter.getI64VectorAttr(d))
                .getResult(0));
    return success();
  }
};

/// PyTorch's source coordinate of output index `i` (as f32): align_corners
/// maps corners to corners, otherwise pixel centres (clamped at 0).
Value sourceCoordinate(OpBuilder &b, Location l, Value i, int64_t in,
                       int64_t out, bool alignCorners, Type elt) {
  auto cf = [&](double v) { return floatConstant(b, l, elt, v); };
  Value fi = arith::SIToFPOp::create(
      b, l, elt, arith::IndexCastOp::create(b, l, b.getI64Type(), i));
  if (alignCorners) {
    double scale = out > 1 ? double(in - 1) / double(out - 1) : 0.0;
    return arith::MulFOp::create(b, l, cf(float(scale)), fi);
  }
  double scale = double(in) / double(out);
  Value src = arith::SubFOp::create(
      b, l,
      arith::MulFOp::create(b, l, cf(float(scale)),
                            arith::AddFOp::create(b, l, fi, cf(0.5))),
      cf(0.5));
  return arith::MaximumFOp::create(b, l, src, cf(0.0));
}

struct UpsampleBilinearLowering : OpRewritePattern<seg::UpsampleBilinearOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(seg::UpsampleBilinearOp op,
                                PatternRewriter &rewriter) const override {
    RankedTensorType type = tensorTypeOf(op.getResult());
    Type elt = type.getElementType();
    Value x = op.getInput();
    ArrayRef<int64_t> in = tensorTypeOf(x).getShape();
    bool align = op.getAlignCorners();
    rewriter.replaceOp(
        op,
        elementwise(
            rewriter, op.getLoc(), type, {}, {},
            [&](OpBuilder &b, Location l, ValueRange) -> Value {
              auto idx = [&](int64_t d) {
                return linalg::IndexOp::create(b, l, d);
              };
              auto ci = [&](int64_t v) {
                return arith::ConstantIndexOp::create(b, l, v);
              };
              auto cf = [&](double v) { return floatConstant(b, l, elt, v); };
              // Per axis: low index, high index, weight of the high one.
              auto axis = [&](int64_t d, int64_t size, int64_t outSize) {
                Value src =
                    sourceCoordinate(b, l, idx(d), size, outSize, align, elt);
                Value lowF = math::FloorOp::create(b, l, src);
                Value low = arith::IndexCastOp::create(
                    b, l, b.getIndexType(),
                    arith::FPToSIOp::create(b, l, b.getI64Type(), lowF));
                Value high = arith::MinSIOp::create(
                    b, l, arith::AddIOp::create(b, l, low, ci(1)),
                    ci(size - 1));
                Value lambda = arith::SubFOp::create(b, l, src, lowF);
                return std::make_tuple(low, high, lambda);
              };
              auto [y0, y1, ly] = axis(2, in[2], type.getDimSize(2));
              auto [x0, x1, lx] = axis(3, in[3], type.getDimSize(3));
              Value n = idx(0), c = idx(1);
              auto at = [&](Value y, Value xx) {
                return tensor::ExtractOp::create(b, l, x,
                                                 ValueRange{n, c, y, xx});
              };
              auto lerp = [&](Value a, Value bb, Value t) {
                Value oneMinus = arith::SubFOp::create(b, l, cf(1.0), t);
                return arith::AddFOp::create(
                    b, l, arith::MulFOp::create(b, l, oneMinus, a),
                    arith::MulFOp::create(b, l, t, bb));
              };
              return lerp(lerp(at(y0, x0), at(y0, x1), lx),
                          lerp(at(y1, x0), at(y1, x1), lx), ly);
            }));
    return success();
  }
};

struct UpsampleNearestLowering : OpRewritePattern<seg::UpsampleNearestOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(seg::UpsampleNearestOp op,
                                PatternRewriter &rewriter) const override {
    RankedTensorType type = tensorTypeOf(op.getResult());
    Type elt = type.getElementType();
    Value x = op.getInput();
    ArrayRef<int64_t> in = tensorTypeOf(x).getShape();
    rewriter.replaceOp(
        op,
        elementwise(
            rewriter, op.getLoc(), type, {}, {},
            [&](OpBuilder &b, Location l, ValueRange) -> Value {
              auto idx = [&](int64_t d) {
                return linalg::IndexOp::create(b, l, d);
              };
              auto ci = [&](int64_t v) {
                return arith::ConstantIndexOp::create(b, l, v);
              };
              // PyTorch's legacy nearest: min(floor(i · in / out), in − 1),
              // the scale in f32.
              auto source = [&](int64_t d, int64_t size,
                                int64_t outSize) -> Value {
                Value fi = arith::SIToFPOp::create(
                    b, l, elt,
                    arith::IndexCastOp::create(b, l, b.getI64Type(), idx(d)));
                Value scaled = arith::MulFOp::create(
                    b, l, fi,
                    floatConstant(b, l, elt,
                                  float(double(size) / double(outSize))));
                Value i = arith::IndexCastOp::create(
                    b, l, b.getIndexType(),
                    arith::FPToSIOp::create(
                        b, l, b.getI64Type(),
                        math::FloorOp::create(b, l, scaled)));
                return arith::MinSIOp::create(b, l, i, ci(size - 1));
              };
              return tensor::ExtractOp::create(
                  b, l, x,
                  ValueRange{idx(0), idx(1),
                             source(2, in[2], type.getDimSize(2)),
                             source(3, in[3], type.getDimSize(3))});
            }));
    return success();
  }
};

} // namespace

void mlir::gpuopt::populateSegDataMovementToLinalgPatterns(
    RewritePatternSet &patterns) {
  patterns.add<SliceLowering, ConcatLowering, PadLowering, RollLowering,
               ChannelShiftLowering, ShiftLowering, ReshapeLowering,
               PermuteLowering, MaxPool2dLowering, UpsampleBilinearLowering,
               UpsampleNearestLowering>(patterns.getContext());
}
