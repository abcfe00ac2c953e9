//===- ElementwiseOps.cpp - seg elementwise ops and norms to linalg -------===//
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
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"

using namespace mlir;
using namespace mlir::gpuopt::detail;
namespace seg = mlir::gpuopt::seg;

namespace {

/// relu / gelu / sigmoid: one elementwise generic each.
template <typename OpTy> struct UnaryLowering : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    RankedTensorType type = tensorTypeOf(op.getResult());
    rewriter.replaceOp(
        op, elementwise(rewriter, op.getLoc(), type, op.getInput(),
                        rewriter.getMultiDimIdentityMap(type.getRank()),
                        [&](OpBuilder &b, Location l, ValueRange args) {
                          if constexpr (std::is_same_v<OpTy, seg::SigmoidOp>)
                            return applySigmoid(b, l, args[0]);
                          seg::Activation activation = seg::Activation::Relu;
                          if constexpr (std::is_same_v<OpTy, seg::GeluOp>)
                            activation =
                                seg::geluActivation(op.getApproximate());
                          return applyActivation(b, l, args[0], activation);
                        }));
    return success();
  }
};

/// add / mul with NumPy broadcasting.
template <typename OpTy, typename ArithOp>
struct BinaryLowering : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    RankedTensorType type = tensorTypeOf(op.getResult());
    MLIRContext *ctx = rewriter.getContext();
    SmallVector<AffineMap> maps = {
        broadcastMap(ctx, tensorTypeOf(op.getLhs()).getShape(),
                     type.getShape()),
        broadcastMap(ctx, tensorTypeOf(op.getRhs()).getShape(),
                     type.getShape())};
    rewriter.replaceOp(
        op, elementwise(rewriter, op.getLoc(), type,
                        ValueRange{op.getLhs(), op.getRhs()}, maps,
                        [](OpBuilder &b, Location l, ValueRange args) -> Value {
                          return ArithOp::create(b, l, args[0], args[1]);
                        }));
    return success();
  }
};

/// (x − mean) · gamma / sqrt(var + eps) + beta, per channel (dim 1).
struct BatchNormLowering : OpRewritePattern<seg::BatchNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(seg::BatchNormOp op,
                                PatternRewriter &rewriter) const override {
    RankedTensorType type = tensorTypeOf(op.getResult());
    MLIRContext *ctx = rewriter.getContext();
    unsigned rank = type.getRank();
    AffineMap channel =
        AffineMap::get(rank, 0, {getAffineDimExpr(1, ctx)}, ctx);
    double eps = op.getEpsilon().convertToDouble();
    Type elt = type.getElementType();
    rewriter.replaceOp(
        op, elementwise(
                rewriter, op.getLoc(), type,
                ValueRange{op.getInput(), op.getMean(), op.getVar(),
                           op.getWeight(), op.getBias()},
                {rewriter.getMultiDimIdentityMap(rank), channel, channel,
                 channel, channel},
                [&](OpBuilder &b, Location l, ValueRange a) -> Value {
                  Value denom = math::SqrtOp::create(
                      b, l,
                      arith::AddFOp::create(b, l, a[2],
                                            floatConstant(b, l, elt, eps)));
                  Value scale = arith::DivFOp::create(b, l, a[3], denom);
                  Value centered = arith::SubFOp::create(b, l, a[0], a[1]);
                  return arith::AddFOp::create(
                      b, l, arith::MulFOp::create(b, l, centered, scale), a[4]);
                }));
    return success();
  }
};

/// new_weight = w · scale, new_bias = (b − mean) · scale + beta with
/// scale = gamma / sqrt(var + eps).
struct FoldBatchNormLowering : OpRewritePattern<seg::FoldBatchNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(seg::FoldBatchNormOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    RankedTensorType wType = tensorTypeOf(op.getWeight());
    RankedTensorType vType = tensorTypeOf(op.getMean());
    Type elt = wType.getElementType();
    double eps = op.getEpsilon().convertToDouble();
    auto scaleOf = [&](OpBuilder &b, Location l, Value var, Value gamma) {
      Value denom = math::SqrtOp::create(
          b, l,
          arith::AddFOp::create(b, l, var, floatConstant(b, l, elt, eps)));
      return arith::DivFOp::create(b, l, gamma, denom);
    };
    unsigned rank = wType.getRank();
    AffineMap channel =
        AffineMap::get(rank, 0, {getAffineDimExpr(0, ctx)}, ctx);
    Value weight = elementwise(
        rewriter, loc, wType,
        ValueRange{op.getWeight(), op.getVar(), op.getGamma()},
        {rewriter.getMultiDimIdentityMap(rank), channel, channel},
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          return arith::MulFOp::create(b, l, a[0], scaleOf(b, l, a[1], a[2]));
        });
    Value bias =
        op.getBias() ? op.getBias() : filledTensor(rewriter, loc, vType, 0.0);
    AffineMap id = rewriter.getMultiDimIdentityMap(1);
    Value newBias = elementwise(
        rewriter, loc, vType,
        ValueRange{bias, op.getMean(), op.getVar(), op.getGamma(),
                   op.getBeta()},
        {id, id, id, id, id},
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value centered = arith::SubFOp::create(b, l, a[0], a[1]);
          return arith::AddFOp::create(
              b, l,
              arith::MulFOp::create(b, l, centered, scaleOf(b, l, a[2], a[3])),
              a[4]);
        });
    rewriter.replaceOp(op, ValueRange{weight, newBias});
    return success();
  }
};

/// Sum over the middle dim of a (M, K, I) tensor of f(x[m, k, i],
/// extra[m, i]): a (M, I) tensor.
Value middleSum(OpBuilder &b, Location loc, Value x, Value extra,
                function_ref<Value(OpBuilder &, Location, Value, Value)> term) {
  RankedTensorType type = tensorTypeOf(x);
  MLIRContext *ctx = b.getContext();
  auto sumType = RankedTensorType::get({type.getDimSize(0), type.getDimSize(2)},
                                       type.getElementType());
  Value init = filledTensor(b, loc, sumType, 0.0);
  AffineExpr m = getAffineDimExpr(0, ctx), k = getAffineDimExpr(1, ctx),
             i = getAffineDimExpr(2, ctx);
  AffineMap outer = AffineMap::get(3, 0, {m, i}, ctx);
  SmallVector<Value> inputs = {x};
  SmallVector<AffineMap> maps = {AffineMap::get(3, 0, {m, k, i}, ctx)};
  if (extra) {
    inputs.push_back(extra);
    maps.push_back(outer);
  }
  maps.push_back(outer);
  return linalg::GenericOp::create(
             b, loc, sumType, inputs, init, maps,
             {utils::IteratorType::parallel, utils::IteratorType::reduction,
              utils::IteratorType::parallel},
             [&](OpBuilder &nb, Location l, ValueRange args) {
               Value t = term(nb, l, args[0], extra ? args[1] : Value());
               linalg::YieldOp::create(
                   nb, l,
                   arith::AddFOp::create(nb, l, args.back(), t).getResult());
             })
      .getResult(0);
}

/// Mean and biased variance over the trailing dims (or the one `axis`),
/// then the affine map: on the input viewed as (M, K, I), where K is the
/// normalized extent and I = 1 without `axis`.
struct LayerNormLowering : OpRewritePattern<seg::LayerNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(seg::LayerNormOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    RankedTensorType type = tensorTypeOf(op.getResult());
    Type elt = type.getElementType();
    RankedTensorType weightType = tensorTypeOf(op.getWeight());
    int64_t k = weightType.getNumElements();
    // Dims before the normalized ones, and after them (with `axis`).
    int64_t first = type.getRank() - weightType.getRank(),
            last = type.getRank();
    if (std::optional<uint64_t> axis = op.getAxis()) {
      first = *axis;
      last = *axis + 1;
    }
    int64_t m = 1, inner = 1;
    for (int64_t d : type.getShape().take_front(first))
      m *= d;
    for (int64_t d : type.getShape().drop_front(last))
      inner *= d;
    auto viewType = RankedTensorType::get({m, k, inner}, elt);
    auto vecType = RankedTensorType::get({k}, elt);
    Value x = reshapeTensor(rewriter, loc, op.getInput(), viewType);
    Value gamma = reshapeTensor(rewriter, loc, op.getWeight(), vecType);
    Value beta = reshapeTensor(rewriter, loc, op.getBias(), vecType);
    double inv = 1.0 / static_cast<double>(k);
    Value sum =
        middleSum(rewriter, loc, x, Value(),
                  [](OpBuilder &b, Location l, Value v, Value) { return v; });
    Value sq =
        middleSum(rewriter, loc, x, sum,
                  [&](OpBuilder &b, Location l, Value v, Value s) -> Value {
                    Value mean = arith::MulFOp::create(
                        b, l, s, floatConstant(b, l, elt, inv));
                    Value d = arith::SubFOp::create(b, l, v, mean);
                    return arith::MulFOp::create(b, l, d, d);
                  });
    AffineExpr dm = getAffineDimExpr(0, ctx), dk = getAffineDimExpr(1, ctx),
               di = getAffineDimExpr(2, ctx);
    AffineMap outer = AffineMap::get(3, 0, {dm, di}, ctx);
    AffineMap norm = AffineMap::get(3, 0, {dk}, ctx);
    double eps = op.getEpsilon().convertToDouble();
    Value y = elementwise(
        rewriter, loc, viewType, ValueRange{x, sum, sq, gamma, beta},
        {rewriter.getMultiDimIdentityMap(3), outer, outer, norm, norm},
        [&](OpBuilder &b, Location l, ValueRange a) -> Value {
          Value scale = floatConstant(b, l, elt, inv);
          Value mean = arith::MulFOp::create(b, l, a[1], scale);
          Value var = arith::MulFOp::create(b, l, a[2], scale);
          Value denom = math::SqrtOp::create(
              b, l,
              arith::AddFOp::create(b, l, var, floatConstant(b, l, elt, eps)));
          Value normalized = arith::DivFOp::create(
              b, l, arith::SubFOp::create(b, l, a[0], mean), denom);
          return arith::AddFOp::create(
              b, l, arith::MulFOp::create(b, l, normalized, a[3]), a[4]);
        });
    rewriter.replaceOp(op, reshapeTensor(rewriter, loc, y, type));
    return success();
  }
};

} // namespace

void mlir::gpuopt::populateSegElementwiseToLinalgPatterns(
    RewritePatternSet &patterns) {
  patterns.add<UnaryLowering<seg::ReluOp>, UnaryLowering<seg::GeluOp>,
               UnaryLowering<seg::SigmoidOp>,
               BinaryLowering<seg::AddOp, arith::AddFOp>,
               BinaryLowering<seg::MulOp, arith::MulFOp>, BatchNormLowering,
               FoldBatchNormLowering, LayerNormLowering>(patterns.getContext());
}
