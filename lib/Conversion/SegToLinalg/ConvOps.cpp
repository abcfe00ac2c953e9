//===- ConvOps.cpp - seg convolutions and linears to linalg ---------------===//
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
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::gpuopt::detail;
namespace seg = mlir::gpuopt::seg;

namespace {

/// conv2d(x, w) without bias, for any groups, into `resultType`.
Value convolve(OpBuilder &b, Location loc, Value x, Value w,
               ArrayRef<int64_t> stride, ArrayRef<int64_t> padding,
               ArrayRef<int64_t> dilation, int64_t groups,
               RankedTensorType resultType) {
  Value padded = padTensor(b, loc, x, {0, 0, padding[0], padding[1]},
                           {0, 0, padding[0], padding[1]}, 0.0);
  auto strides = b.getI64VectorAttr(stride);
  auto dilations = b.getI64VectorAttr(dilation);
  RankedTensorType wType = tensorTypeOf(w);
  int64_t channels = tensorTypeOf(x).getDimSize(1);
  int64_t out = wType.getDimSize(0);
  Type elt = resultType.getElementType();
  if (groups == 1) {
    Value init = filledTensor(b, loc, resultType, 0.0);
    return linalg::Conv2DNchwFchwOp::create(b, loc, TypeRange{resultType},
                                            ValueRange{padded, w}, init,
                                            strides, dilations)
        .getResult(0);
  }
  if (groups == channels && out == channels) {
    // Depthwise (multiplier 1): weight (C, 1, kh, kw) -> (C, kh, kw).
    auto w3 = RankedTensorType::get(
        {channels, wType.getDimSize(2), wType.getDimSize(3)}, elt);
    Value init = filledTensor(b, loc, resultType, 0.0);
    return linalg::DepthwiseConv2DNchwChwOp::create(
               b, loc, TypeRange{resultType},
               ValueRange{padded, reshapeTensor(b, loc, w, w3)}, init, strides,
               dilations)
        .getResult(0);
  }
  // Grouped: (N, G, C/G, H, W) * (G, O/G, C/G, kh, kw) -> (N, G, O/G, Ho, Wo).
  RankedTensorType pType = tensorTypeOf(padded);
  ArrayRef<int64_t> ps = pType.getShape(), ws = wType.getShape(),
                    rs = resultType.getShape();
  auto xg = RankedTensorType::get(
      {ps[0], groups, channels / groups, ps[2], ps[3]}, elt);
  auto wg =
      RankedTensorType::get({groups, out / groups, ws[1], ws[2], ws[3]}, elt);
  auto rg =
      RankedTensorType::get({rs[0], groups, out / groups, rs[2], rs[3]}, elt);
  Value xe = tensor::ExpandShapeOp::create(
      b, loc, xg, padded,
      SmallVector<ReassociationIndices>{{0}, {1, 2}, {3}, {4}});
  Value we = tensor::ExpandShapeOp::create(
      b, loc, wg, w, SmallVector<ReassociationIndices>{{0, 1}, {2}, {3}, {4}});
  Value init = filledTensor(b, loc, rg, 0.0);
  Value conv = linalg::Conv2DNgchwGfchwOp::create(b, loc, TypeRange{rg},
                                                  ValueRange{xe, we}, init,
                                                  strides, dilations)
                   .getResult(0);
  return tensor::CollapseShapeOp::create(
      b, loc, resultType, conv,
      SmallVector<ReassociationIndices>{{0}, {1, 2}, {3}, {4}});
}

/// init + Σ lhs · rhs over the reduction dims of `iterators`: a contraction
/// generic with the indexing `maps` (lhs, rhs, init).
Value multiplyAccumulate(OpBuilder &b, Location loc, Value lhs, Value rhs,
                         Value init, ArrayRef<AffineMap> maps,
                         ArrayRef<utils::IteratorType> iterators) {
  return linalg::GenericOp::create(
             b, loc, init.getType(), ValueRange{lhs, rhs}, init, maps,
             iterators,
             [&](OpBuilder &nb, Location l, ValueRange args) {
               Value mul = arith::MulFOp::create(nb, l, args[0], args[1]);
               linalg::YieldOp::create(
                   nb, l,
                   arith::AddFOp::create(nb, l, args[2], mul).getResult());
             })
      .getResult(0);
}

/// act(conv + bias) + residual as one elementwise generic (or `conv` itself
/// when there is nothing to apply).
Value epilogue(OpBuilder &b, Location loc, Value conv, Value bias,
               Value residual, seg::Activation activation) {
  if (!bias && !residual && activation == seg::Activation::None)
    return conv;
  RankedTensorType type = tensorTypeOf(conv);
  MLIRContext *ctx = b.getContext();
  SmallVector<Value> inputs = {conv};
  SmallVector<AffineMap> maps = {b.getMultiDimIdentityMap(4)};
  if (bias) {
    inputs.push_back(bias);
    maps.push_back(AffineMap::get(4, 0, {getAffineDimExpr(1, ctx)}, ctx));
  }
  if (residual) {
    inputs.push_back(residual);
    maps.push_back(b.getMultiDimIdentityMap(4));
  }
  return elementwise(b, loc, type, inputs, maps,
                     [&](OpBuilder &nb, Location l, ValueRange args) -> Value {
                       Value v = args[0];
                       size_t next = 1;
                       if (bias)
                         v = arith::AddFOp::create(nb, l, v, args[next++]);
                       v = applyActivation(nb, l, v, activation);
                       if (residual)
                         v = arith::AddFOp::create(nb, l, v, args[next++]);
                       return v;
                     });
}

struct Conv2dLowering : OpRewritePattern<seg::Conv2dOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(seg::Conv2dOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value conv = convolve(rewriter, loc, op.getInput(), op.getWeight(),
                          op.getStride(), op.getPadding(), op.getDilation(),
                          op.getGroupsAttr().getInt(), op.getType());
    rewriter.replaceOp(op, epilogue(rewriter, loc, conv, op.getBias(), Value(),
                                    seg::Activation::None));
    return success();
  }
};

/// `x` (NCHW) read through seg.fused_conv2d's `frame_shift` (none: `x`):
/// the zero-filled gather of seg.shift group_dim = 2 dims = [1] on the
/// (N/T, T, C, H, W) view, read back as NCHW. (Offsets in (-T, T), as the
/// verifier requires, are normalized.)
Value frameShift(OpBuilder &b, Location loc, Value x,
                 seg::FrameShiftAttr frameShift) {
  if (!frameShift)
    return x;
  RankedTensorType type = tensorTypeOf(x);
  ArrayRef<int64_t> s = type.getShape();
  int64_t frames = frameShift.getFrames();
  auto viewType = RankedTensorType::get(
      {s[0] / frames, frames, s[1], s[2], s[3]}, type.getElementType());
  SmallVector<ReassociationIndices> frames5 = {{0, 1}, {2}, {3}, {4}};
  Value view = tensor::ExpandShapeOp::create(b, loc, viewType, x, frames5);
  Value shifted = groupShift(b, loc, view, /*groupDim=*/2, /*dims=*/{1},
                             frameShift.getOffsets(), /*cyclic=*/false);
  return tensor::CollapseShapeOp::create(b, loc, type, shifted, frames5);
}

struct FusedConv2dLowering : OpRewritePattern<seg::FusedConv2dOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(seg::FusedConv2dOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = channelShift(
        rewriter, loc,
        frameShift(rewriter, loc, op.getInput(), op.getFrameShiftAttr()),
        op.getOffsetsH(), op.getOffsetsW(),
        op.getMode() == seg::ShiftMode::Cyclic);
    Value conv = convolve(rewriter, loc, input, op.getWeight(), op.getStride(),
                          op.getPadding(), op.getDilation(),
                          op.getGroupsAttr().getInt(), op.getType());
    rewriter.replaceOp(op, epilogue(rewriter, loc, conv, op.getBias(),
                                    op.getResidual(), op.getActivation()));
    return success();
  }
};

/// The convolution of the GPU pipeline (`remap-conv-inputs`): one
/// contraction generic over (n, o, oh, ow, ci, i, j) whose body reads the
/// input directly at
///   x[n, c, oh·s − p + i·d − dh[c], ow·s − p + j·d − dw[c]]
/// with c = (o floordiv O/G)·(C/G) + ci: no padded copy and no gathered
/// (shifted) copy of the input. An element that padding or a zero-mode shift
/// puts outside the map reads as 0 (the index is clamped into the map and
/// the value selected away, so every load stays inside the buffer: 0 · w as
/// in PyTorch, NaN and Inf weights included); a cyclic shift wraps with one
/// compare per axis (offsets normalized to [0, size) at compile time, no
/// remainder per product). `offsetsH`/`offsetsW` empty: no shift.
Value convolveRemapped(OpBuilder &b, Location loc, Value x, Value w,
                       ArrayRef<int64_t> offsetsH, ArrayRef<int64_t> offsetsW,
                       bool cyclic, ArrayRef<int64_t> stride,
                       ArrayRef<int64_t> padding, ArrayRef<int64_t> dilation,
                       int64_t groups, RankedTensorType resultType) {
  MLIRContext *ctx = b.getContext();
  RankedTensorType xType = tensorTypeOf(x), wType = tensorTypeOf(w);
  Type elt = resultType.getElementType();
  int64_t channels = xType.getDimSize(1), height = xType.getDimSize(2),
          width = xType.getDimSize(3);
  int64_t outPerGroup = wType.getDimSize(0) / groups;
  int64_t inPerGroup = wType.getDimSize(1);
  bool shiftH = !offsetsH.empty(), shiftW = !offsetsW.empty();

  // The per-channel offsets [2, C] (i64), normalized: cyclic to [0, size),
  // zero mode clamped to [-size, size] (beyond it every read is outside).
  Value table;
  if (shiftH || shiftW) {
    SmallVector<int64_t> values;
    auto normalize = [&](ArrayRef<int64_t> offsets, int64_t size) {
      for (int64_t c = 0; c < channels; ++c) {
        int64_t v = offsets.empty() ? 0 : offsets[c];
        values.push_back(cyclic ? ((v % size) + size) % size
                                : std::clamp<int64_t>(v, -size, size));
      }
    };
    normalize(offsetsH, height);
    normalize(offsetsW, width);
    auto tableType = RankedTensorType::get({2, channels}, b.getI64Type());
    table = arith::ConstantOp::create(
        b, loc,
        DenseIntElementsAttr::get(tableType, ArrayRef<int64_t>(values)));
  }

  // The weight is read with tensor.extract too, not as an operand, so that
  // elementwise fusion cannot move its producer (a fold of a runtime weight)
  // into the loop, recomputed per product; an unread [C/G, kh, kw] operand
  // gives the reductions their bounds.
  auto d = [&](unsigned k) { return getAffineDimExpr(k, ctx); };
  Value taps = tensor::EmptyOp::create(
      b, loc,
      ArrayRef<int64_t>{inPerGroup, wType.getDimSize(2), wType.getDimSize(3)},
      elt);
  SmallVector<AffineMap> maps = {
      AffineMap::get(7, 0, {d(4), d(5), d(6)}, ctx),
      AffineMap::get(7, 0, {d(0), d(1), d(2), d(3)}, ctx)};
  SmallVector<utils::IteratorType> iterators(4, utils::IteratorType::parallel);
  iterators.append(3, utils::IteratorType::reduction);
  Value init = filledTensor(b, loc, resultType, 0.0);
  return linalg::GenericOp::create(
             b, loc, resultType, ValueRange{taps}, init, maps, iterators,
             [&](OpBuilder &nb, Location l, ValueRange args) {
               auto idx = [&](int64_t k) {
                 return linalg::IndexOp::create(nb, l, k).getResult();
               };
               auto ci = [&](int64_t v) {
                 return arith::ConstantIndexOp::create(nb, l, v).getResult();
               };
               auto cmp = [&](arith::CmpIPredicate pred, Value a, Value c) {
                 return arith::CmpIOp::create(nb, l, pred, a, c).getResult();
               };
               // The input channel: the reduction index alone for one
               // group (it must not depend on o, so that register tiling
               // along o can share the input load), o itself for a
               // depthwise convolution, else o's group's first channel + c.
               Value n = idx(0), o = idx(1), c = idx(4);
               if (groups != 1 && (outPerGroup != 1 || inPerGroup != 1))
                 c = arith::AddIOp::create(
                     nb, l,
                     arith::MulIOp::create(
                         nb, l,
                         arith::DivUIOp::create(nb, l, o, ci(outPerGroup)),
                         ci(inPerGroup)),
                     c);
               else if (groups != 1)
                 c = o; // depthwise
               Value valid;
               auto andValid = [&](Value v) {
                 valid =
                     valid ? arith::AndIOp::create(nb, l, valid, v).getResult()
                           : v;
               };
               // One axis: the padded coordinate, then the shifted source.
               auto axis = [&](Value out, Value tap, int64_t s, int64_t p,
                               int64_t dil, int64_t size, bool shifted,
                               int64_t row) {
                 Value v = out;
                 if (s != 1)
                   v = arith::MulIOp::create(nb, l, v, ci(s));
                 if (dil != 1)
                   tap = arith::MulIOp::create(nb, l, tap, ci(dil));
                 v = arith::AddIOp::create(nb, l, v, tap);
                 bool mayBeOutside = p != 0;
                 if (p != 0) {
                   v = arith::SubIOp::create(nb, l, v, ci(p));
                   andValid(cmp(arith::CmpIPredicate::sge, v, ci(0)));
                   andValid(cmp(arith::CmpIPredicate::slt, v, ci(size)));
                 }
                 if (shifted) {
                   Value off = arith::IndexCastOp::create(
                       nb, l, nb.getIndexType(),
                       tensor::ExtractOp::create(nb, l, table,
                                                 ValueRange{ci(row), c}));
                   v = arith::SubIOp::create(nb, l, v, off);
                   if (cyclic) {
                     // v in (-size, size) wherever the padded coordinate is
                     // inside: one conditional add wraps it.
                     Value wrapped = arith::AddIOp::create(nb, l, v, ci(size));
                     v = arith::SelectOp::create(
                         nb, l, cmp(arith::CmpIPredicate::slt, v, ci(0)),
                         wrapped, v);
                   } else {
                     andValid(cmp(arith::CmpIPredicate::sge, v, ci(0)));
                     andValid(cmp(arith::CmpIPredicate::slt, v, ci(size)));
                     mayBeOutside = true;
                   }
                 }
                 if (!mayBeOutside)
                   return v;
                 return arith::MinSIOp::create(
                            nb, l, arith::MaxSIOp::create(nb, l, v, ci(0)),
                            ci(size - 1))
                     .getResult();
               };
               Value y = axis(idx(2), idx(5), stride[0], padding[0],
                              dilation[0], height, shiftH, 0);
               Value xw = axis(idx(3), idx(6), stride[1], padding[1],
                               dilation[1], width, shiftW, 1);
               Value v =
                   tensor::ExtractOp::create(nb, l, x, ValueRange{n, c, y, xw});
               if (valid)
                 v = arith::SelectOp::create(nb, l, valid, v,
                                             floatConstant(nb, l, elt, 0.0));
               Value weight = tensor::ExtractOp::create(
                   nb, l, w, ValueRange{o, idx(4), idx(5), idx(6)});
               Value mul = arith::MulFOp::create(nb, l, v, weight);
               linalg::YieldOp::create(
                   nb, l,
                   arith::AddFOp::create(nb, l, args[1], mul).getResult());
             })
      .getResult(0);
}

/// Whether `op` carries only the attributes its lowering knows: any other
/// (one a later change adds to the op) means a semantics this lowering
/// would silently drop, so the generic path, or a failure, is taken.
bool hasOnlyKnownAttributes(Operation *op, ArrayRef<StringRef> known) {
  return llvm::all_of(op->getAttrs(), [&](NamedAttribute attr) {
    return attr.getName() == "operandSegmentSizes" ||
           llvm::is_contained(known, attr.getName().getValue());
  });
}

/// seg.conv2d with its input read through remapped indices (benefit 2: the
/// GPU pipeline's choice over Conv2dLowering).
struct RemappedConv2dLowering : OpRewritePattern<seg::Conv2dOp> {
  RemappedConv2dLowering(MLIRContext *ctx)
      : OpRewritePattern<seg::Conv2dOp>(ctx, /*benefit=*/2) {}
  LogicalResult matchAndRewrite(seg::Conv2dOp op,
                                PatternRewriter &rewriter) const override {
    if (!hasOnlyKnownAttributes(op, seg::Conv2dOp::getAttributeNames()))
      return rewriter.notifyMatchFailure(op, "unknown attribute");
    Location loc = op.getLoc();
    Value conv = convolveRemapped(rewriter, loc, op.getInput(), op.getWeight(),
                                  {}, {}, false, op.getStride(),
                                  op.getPadding(), op.getDilation(),
                                  op.getGroupsAttr().getInt(), op.getType());
    rewriter.replaceOp(op, epilogue(rewriter, loc, conv, op.getBias(), Value(),
                                    seg::Activation::None));
    return success();
  }
};

/// seg.fused_conv2d with its shift and padding in the convolution's loads:
/// zero gather kernels, zero padded copies.
struct RemappedFusedConv2dLowering : OpRewritePattern<seg::FusedConv2dOp> {
  RemappedFusedConv2dLowering(MLIRContext *ctx)
      : OpRewritePattern<seg::FusedConv2dOp>(ctx, /*benefit=*/2) {}
  LogicalResult matchAndRewrite(seg::FusedConv2dOp op,
                                PatternRewriter &rewriter) const override {
    if (!hasOnlyKnownAttributes(op, seg::FusedConv2dOp::getAttributeNames()))
      return rewriter.notifyMatchFailure(op, "unknown attribute");
    Location loc = op.getLoc();
    // A frame shift (TSM's, along the batch) is one gather in front; the
    // (dh, dw) shift and the padding are read in the convolution's loads.
    Value x = frameShift(rewriter, loc, op.getInput(), op.getFrameShiftAttr());
    Value conv = convolveRemapped(
        rewriter, loc, x, op.getWeight(), op.getOffsetsH(), op.getOffsetsW(),
        op.getMode() == seg::ShiftMode::Cyclic, op.getStride(), op.getPadding(),
        op.getDilation(), op.getGroupsAttr().getInt(), op.getType());
    rewriter.replaceOp(op, epilogue(rewriter, loc, conv, op.getBias(),
                                    op.getResidual(), op.getActivation()));
    return success();
  }
};

/// A transposed convolution as PyTorch computes it (GEMM then col2im): the
/// products of every input pixel with every tap,
///   cols[n, g·Og + o, i, j, h, w] = Σ_c x[n, g·Cg + c, h, w] ·
///                                       W[g·Cg + c, o, i, j],
/// then each output pixel sums the products that land on it:
///   out[n, oc, y, x] = Σ_{i, j} cols[n, oc, i, j, h, w] where
///   y = h·s − p + i·d and x = w·s − p + j·d.
/// (A convolution of the zero-upsampled input would multiply the inserted
/// zeros by the weights: 0 · NaN or 0 · Inf in a weight would make outputs
/// NaN that no product of PyTorch's reaches.)
struct ConvTranspose2dLowering : OpRewritePattern<seg::ConvTranspose2dOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(seg::ConvTranspose2dOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    RankedTensorType xType = tensorTypeOf(op.getInput());
    RankedTensorType wType = tensorTypeOf(op.getWeight());
    Type elt = xType.getElementType();
    ArrayRef<int64_t> xs = xType.getShape(), ws = wType.getShape();
    ArrayRef<int64_t> stride = op.getStride(), padding = op.getPadding(),
                      dilation = op.getDilation();
    int64_t groups = op.getGroupsAttr().getInt();
    int64_t inPerGroup = ws[0] / groups, outPerGroup = ws[1];
    int64_t outChannels = groups * outPerGroup;

    // dims: n, g, o, i, j, h, w, c (reduction), over x as [N, G, Cg, H, W]
    // and W as [G, Cg, Og, kh, kw] (every map a projection).
    auto d = [&](unsigned k) { return getAffineDimExpr(k, ctx); };
    Value x = reshapeTensor(
        rewriter, loc, op.getInput(),
        RankedTensorType::get({xs[0], groups, inPerGroup, xs[2], xs[3]}, elt));
    Value weight = reshapeTensor(
        rewriter, loc, op.getWeight(),
        RankedTensorType::get({groups, inPerGroup, outPerGroup, ws[2], ws[3]},
                              elt));
    SmallVector<AffineMap> maps = {
        AffineMap::get(8, 0, {d(0), d(1), d(7), d(5), d(6)}, ctx),
        AffineMap::get(8, 0, {d(1), d(7), d(2), d(3), d(4)}, ctx),
        AffineMap::get(8, 0, {d(0), d(1), d(2), d(3), d(4), d(5), d(6)}, ctx)};
    SmallVector<utils::IteratorType> iterators(7,
                                               utils::IteratorType::parallel);
    iterators.push_back(utils::IteratorType::reduction);
    auto groupedType = RankedTensorType::get(
        {xs[0], groups, outPerGroup, ws[2], ws[3], xs[2], xs[3]}, elt);
    Value grouped = multiplyAccumulate(
        rewriter, loc, x, weight, filledTensor(rewriter, loc, groupedType, 0.0),
        maps, iterators);
    Value cols = reshapeTensor(
        rewriter, loc, grouped,
        RankedTensorType::get({xs[0], outChannels, ws[2], ws[3], xs[2], xs[3]},
                              elt));

    // dims: n, oc, y, x, i, j (reductions); the taps that do not land on
    // (y, x) add 0, selected after the product. (An unread [kh, kw] operand
    // gives the reductions their bounds, as a pooling window does.)
    RankedTensorType type = op.getType();
    Value taps = tensor::EmptyOp::create(rewriter, loc,
                                         ArrayRef<int64_t>{ws[2], ws[3]}, elt);
    SmallVector<AffineMap> gatherMaps = {
        AffineMap::get(6, 0, {d(4), d(5)}, ctx),
        AffineMap::get(6, 0, {d(0), d(1), d(2), d(3)}, ctx)};
    SmallVector<utils::IteratorType> gatherIterators(
        4, utils::IteratorType::parallel);
    gatherIterators.append(2, utils::IteratorType::reduction);
    Value out =
        linalg::GenericOp::create(
            rewriter, loc, type, ValueRange{taps},
            filledTensor(rewriter, loc, type, 0.0), gatherMaps, gatherIterators,
            [&](OpBuilder &nb, Location l, ValueRange args) {
              auto idx = [&](int64_t k) {
                return linalg::IndexOp::create(nb, l, k);
              };
              auto ci = [&](int64_t v) {
                return arith::ConstantIndexOp::create(nb, l, v);
              };
              // Source pixel of output coordinate `o` through tap `k` on one
              // axis: (o + p − k·d) / s when that is exact and in [0, size).
              auto source = [&](Value o, Value k, int64_t s, int64_t p,
                                int64_t dil, int64_t size) {
                Value t = arith::SubIOp::create(
                    nb, l, arith::AddIOp::create(nb, l, o, ci(p)),
                    arith::MulIOp::create(nb, l, k, ci(dil)));
                Value q = arith::DivSIOp::create(nb, l, t, ci(s));
                Value valid = arith::AndIOp::create(
                    nb, l,
                    arith::AndIOp::create(
                        nb, l,
                        arith::CmpIOp::create(nb, l, arith::CmpIPredicate::sge,
                                              t, ci(0)),
                        arith::CmpIOp::create(
                            nb, l, arith::CmpIPredicate::eq,
                            arith::RemSIOp::create(nb, l, t, ci(s)), ci(0))),
                    arith::CmpIOp::create(nb, l, arith::CmpIPredicate::slt, q,
                                          ci(size)));
                Value clamped = arith::MinSIOp::create(
                    nb, l, arith::MaxSIOp::create(nb, l, q, ci(0)),
                    ci(size - 1));
                return std::make_pair(clamped, valid);
              };
              Value n = idx(0), oc = idx(1), i = idx(4), j = idx(5);
              auto [h, validH] =
                  source(idx(2), i, stride[0], padding[0], dilation[0], xs[2]);
              auto [w, validW] =
                  source(idx(3), j, stride[1], padding[1], dilation[1], xs[3]);
              Value product = tensor::ExtractOp::create(
                  nb, l, cols, ValueRange{n, oc, i, j, h, w});
              Value term = arith::SelectOp::create(
                  nb, l, arith::AndIOp::create(nb, l, validH, validW), product,
                  floatConstant(nb, l, elt, 0.0));
              linalg::YieldOp::create(
                  nb, l,
                  arith::AddFOp::create(nb, l, args[1], term).getResult());
            })
            .getResult(0);
    rewriter.replaceOp(op, epilogue(rewriter, loc, out, op.getBias(), Value(),
                                    seg::Activation::None));
    return success();
  }
};

/// linear: collapse the leading dims, contract with the transposed weight,
/// add the bias, expand back.
struct LinearLowering : OpRewritePattern<seg::LinearOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(seg::LinearOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType inType = tensorTypeOf(op.getInput());
    RankedTensorType wType = tensorTypeOf(op.getWeight());
    Type elt = inType.getElementType();
    int64_t k = wType.getDimSize(1), n = wType.getDimSize(0);
    // The rows: every input dim but the last (K may be 0: no terms).
    int64_t m = 1;
    for (int64_t d : inType.getShape().drop_back())
      m *= d;
    Value in2 = reshapeTensor(rewriter, loc, op.getInput(),
                              RankedTensorType::get({m, k}, elt));
    auto outType = RankedTensorType::get({m, n}, elt);
    Value init = filledTensor(rewriter, loc, outType, 0.0);
    MLIRContext *ctx = rewriter.getContext();
    auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
    SmallVector<AffineMap> maps = {AffineMap::get(3, 0, {d(0), d(2)}, ctx),
                                   AffineMap::get(3, 0, {d(1), d(2)}, ctx),
                                   AffineMap::get(3, 0, {d(0), d(1)}, ctx)};
    SmallVector<utils::IteratorType> iterators = {
        utils::IteratorType::parallel, utils::IteratorType::parallel,
        utils::IteratorType::reduction};
    Value product = multiplyAccumulate(rewriter, loc, in2, op.getWeight(), init,
                                       maps, iterators);
    if (Value bias = op.getBias())
      product =
          elementwise(rewriter, loc, outType, {product, bias},
                      {rewriter.getMultiDimIdentityMap(2),
                       AffineMap::get(2, 0, {d(1)}, ctx)},
                      [](OpBuilder &nb, Location l, ValueRange args) -> Value {
                        return arith::AddFOp::create(nb, l, args[0], args[1]);
                      });
    rewriter.replaceOp(op, reshapeTensor(rewriter, loc, product, op.getType()));
    return success();
  }
};

/// seg.shift_offsets is a compile-time constant.
struct ShiftOffsetsLowering : OpRewritePattern<seg::ShiftOffsetsOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(seg::ShiftOffsetsOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.getType().getElementType().isF32())
      return rewriter.notifyMatchFailure(op, "only f32 offsets");
    SmallVector<float> values = op.computeOffsets();
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(
        op, DenseElementsAttr::get(op.getType(), ArrayRef<float>(values)));
    return success();
  }
};

/// Deformable convolution: a bilinear-sampling im2col generic
/// (N, C, kh, kw, Ho, Wo), then a grouped contraction with the weight.
struct DeformConv2dLowering : OpRewritePattern<seg::DeformConv2dOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(seg::DeformConv2dOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType xType = tensorTypeOf(op.getInput());
    RankedTensorType wType = tensorTypeOf(op.getWeight());
    RankedTensorType oType = tensorTypeOf(op.getOffset());
    Type elt = xType.getElementType();
    ArrayRef<int64_t> xs = xType.getShape(), ws = wType.getShape(),
                      rs = op.getType().getShape();
    int64_t height = xs[2], width = xs[3], kh = ws[2], kw = ws[3];
    int64_t channelsPerOffsetGroup = xs[1] / op.getOffsetGroupsAttr().getInt();
    bool batchedOffsets = oType.getDimSize(0) != 1;
    Value input = op.getInput(), offset = op.getOffset();
    ArrayRef<int64_t> stride = op.getStride(), padding = op.getPadding(),
                      dilation = op.getDilation();

    auto colsType =
        RankedTensorType::get({xs[0], xs[1], kh, kw, rs[2], rs[3]}, elt);
    Value cols = elementwise(
        rewriter, loc, colsType, {}, {},
        [&](OpBuilder &nb, Location l, ValueRange) -> Value {
          auto idx = [&](int64_t d) {
            return linalg::IndexOp::create(nb, l, d);
          };
          auto ci = [&](int64_t v) {
            return arith::ConstantIndexOp::create(nb, l, v);
          };
          auto cf = [&](double v) { return floatConstant(nb, l, elt, v); };
          Value n = idx(0), c = idx(1), i = idx(2), j = idx(3), y = idx(4),
                x = idx(5);
          Value g =
              arith::DivUIOp::create(nb, l, c, ci(channelsPerOffsetGroup));
          // Offset channel 2·(g·kh·kw + i·kw + j) (+1 for x).
          Value tap = arith::AddIOp::create(
              nb, l,
              arith::MulIOp::create(
                  nb, l,
                  arith::AddIOp::create(
                      nb, l, arith::MulIOp::create(nb, l, g, ci(kh)), i),
                  ci(kw)),
              j);
          Value ch = arith::MulIOp::create(nb, l, tap, ci(2));
          Value on = batchedOffsets ? n : ci(0);
          Value dy = tensor::ExtractOp::create(nb, l, offset,
                                               ValueRange{on, ch, y, x});
          Value dx = tensor::ExtractOp::create(
              nb, l, offset,
              ValueRange{on, arith::AddIOp::create(nb, l, ch, ci(1)), y, x});
          auto toFloat = [&](Value v) {
            return arith::SIToFPOp::create(
                nb, l, elt,
                arith::IndexCastOp::create(nb, l, nb.getI64Type(), v));
          };
          auto base = [&](Value o, Value k, int64_t s, int64_t p, int64_t d) {
            Value v = arith::SubIOp::create(
                nb, l,
                arith::AddIOp::create(nb, l,
                                      arith::MulIOp::create(nb, l, o, ci(s)),
                                      arith::MulIOp::create(nb, l, k, ci(d))),
                ci(p));
            return toFloat(v);
          };
          Value py = arith::AddFOp::create(
              nb, l, base(y, i, stride[0], padding[0], dilation[0]), dy);
          Value px = arith::AddFOp::create(
              nb, l, base(x, j, stride[1], padding[1], dilation[1]), dx);
          // torchvision's sample: 0 outside (-1, H) x (-1, W) (±Inf
          // included), else the corners weighted, a corner outside the map
          // reading 0. A NaN coordinate is neither: its NaN weights make the
          // sample NaN, and the index clamps map it into the map (maxnumf:
          // NaN -> 0) so that no NaN reaches fptosi, whose result would be
          // poison.
          auto cmp = [&](arith::CmpFPredicate pred, Value a, double b) {
            return arith::CmpFOp::create(nb, l, pred, a, cf(b));
          };
          Value outside = arith::OrIOp::create(
              nb, l,
              arith::OrIOp::create(
                  nb, l, cmp(arith::CmpFPredicate::OLE, py, -1.0),
                  cmp(arith::CmpFPredicate::OGE, py, double(height))),
              arith::OrIOp::create(
                  nb, l, cmp(arith::CmpFPredicate::OLE, px, -1.0),
                  cmp(arith::CmpFPredicate::OGE, px, double(width))));
          Value y0 = math::FloorOp::create(nb, l, py);
          Value x0 = math::FloorOp::create(nb, l, px);
          Value ly = arith::SubFOp::create(nb, l, py, y0);
          Value lx = arith::SubFOp::create(nb, l, px, x0);
          Value acc = cf(0.0);
          for (int cy = 0; cy < 2; ++cy) {
            for (int cx = 0; cx < 2; ++cx) {
              Value yy = arith::AddFOp::create(nb, l, y0, cf(cy));
              Value xx = arith::AddFOp::create(nb, l, x0, cf(cx));
              Value wy = cy ? ly : arith::SubFOp::create(nb, l, cf(1.0), ly);
              Value wx = cx ? lx : arith::SubFOp::create(nb, l, cf(1.0), lx);
              auto inside = [&](Value v, int64_t size) {
                return arith::AndIOp::create(
                    nb, l, cmp(arith::CmpFPredicate::OGE, v, 0.0),
                    cmp(arith::CmpFPredicate::OLT, v, double(size)));
              };
              Value valid = arith::AndIOp::create(nb, l, inside(yy, height),
                                                  inside(xx, width));
              auto toIndex = [&](Value v, int64_t size) {
                Value clamped = arith::MinNumFOp::create(
                    nb, l, arith::MaxNumFOp::create(nb, l, v, cf(0.0)),
                    cf(size - 1));
                return arith::IndexCastOp::create(
                    nb, l, nb.getIndexType(),
                    arith::FPToSIOp::create(nb, l, nb.getI64Type(), clamped));
              };
              Value v = tensor::ExtractOp::create(
                  nb, l, input,
                  ValueRange{n, c, toIndex(yy, height), toIndex(xx, width)});
              // weight · (corner inside ? v : 0), as torchvision: a NaN or
              // Inf input under a zero weight still gives NaN.
              Value weight = arith::MulFOp::create(nb, l, wy, wx);
              Value term = arith::MulFOp::create(
                  nb, l, arith::SelectOp::create(nb, l, valid, v, cf(0.0)),
                  weight);
              acc = arith::AddFOp::create(nb, l, acc, term);
            }
          }
          return arith::SelectOp::create(nb, l, outside, cf(0.0), acc);
        });

    // out[n, o, y, x] = Σ_{ci, i, j} w[o, ci, i, j] · cols[n, c(o, ci), i, j,
    // y, x] with c(o, ci) = (o floordiv O/groups)·(C/groups) + ci.
    MLIRContext *ctx = rewriter.getContext();
    int64_t groups = op.getGroupsAttr().getInt();
    int64_t outPerGroup = ws[0] / groups, inPerGroup = ws[1];
    auto d = [&](unsigned k) { return getAffineDimExpr(k, ctx); };
    // dims: n, o, y, x, ci, i, j
    // One group: ci alone (an index that does not depend on o).
    AffineExpr channel =
        groups == 1 ? d(4) : d(1).floorDiv(outPerGroup) * inPerGroup + d(4);
    SmallVector<AffineMap> maps = {
        AffineMap::get(7, 0, {d(1), d(4), d(5), d(6)}, ctx),
        AffineMap::get(7, 0, {d(0), channel, d(5), d(6), d(2), d(3)}, ctx),
        AffineMap::get(7, 0, {d(0), d(1), d(2), d(3)}, ctx)};
    SmallVector<utils::IteratorType> iterators(4,
                                               utils::IteratorType::parallel);
    iterators.append(3, utils::IteratorType::reduction);
    Value init = filledTensor(rewriter, loc, op.getType(), 0.0);
    Value conv = multiplyAccumulate(rewriter, loc, op.getWeight(), cols, init,
                                    maps, iterators);
    rewriter.replaceOp(op, epilogue(rewriter, loc, conv, op.getBias(), Value(),
                                    seg::Activation::None));
    return success();
  }
};

} // namespace

void mlir::gpuopt::populateSegConvToLinalgPatterns(RewritePatternSet &patterns,
                                                   bool remapConvInputs) {
  patterns.add<Conv2dLowering, FusedConv2dLowering, ConvTranspose2dLowering,
               LinearLowering, ShiftOffsetsLowering, DeformConv2dLowering>(
      patterns.getContext());
  if (remapConvInputs)
    patterns.add<RemappedConv2dLowering, RemappedFusedConv2dLowering>(
        patterns.getContext());
}
