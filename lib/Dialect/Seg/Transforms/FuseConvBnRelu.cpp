//===- FuseConvBnRelu.cpp - conv epilogue fusion --------------------------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// Folds inference BatchNorm into the preceding convolution (through a
// load-time seg.fold_batch_norm of the parameters) and fuses the activation
// and a residual add into seg.fused_conv2d's epilogue.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Dialect/Seg/Transforms/Passes.h"
#include "gpuopt/Dialect/Seg/Transforms/Transforms.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir {
namespace gpuopt {
namespace seg {
#define GEN_PASS_DEF_FUSECONVBNRELUPASS
#include "gpuopt/Dialect/Seg/Transforms/Passes.h.inc"
} // namespace seg
} // namespace gpuopt
} // namespace mlir

using namespace mlir;
using namespace mlir::gpuopt::seg;

namespace {

/// Everything a seg.fused_conv2d is built from, read off a seg.conv2d or a
/// seg.fused_conv2d.
struct ConvParts {
  Value input, weight, bias, residual;
  DenseI64ArrayAttr offsetsH, offsetsW, stride, padding, dilation;
  ShiftModeAttr mode;
  ActivationAttr activation;
  IntegerAttr groups;

  static std::optional<ConvParts> of(Value v, Builder &b) {
    if (auto conv = v.getDefiningOp<Conv2dOp>())
      return ConvParts{conv.getInput(),
                       conv.getWeight(),
                       conv.getBias(),
                       Value(),
                       b.getDenseI64ArrayAttr({}),
                       b.getDenseI64ArrayAttr({}),
                       conv.getStrideAttr(),
                       conv.getPaddingAttr(),
                       conv.getDilationAttr(),
                       ShiftModeAttr::get(b.getContext(), ShiftMode::Cyclic),
                       ActivationAttr::get(b.getContext(), Activation::None),
                       conv.getGroupsAttr()};
    if (auto conv = v.getDefiningOp<FusedConv2dOp>())
      return ConvParts{conv.getInput(),          conv.getWeight(),
                       conv.getBias(),           conv.getResidual(),
                       conv.getOffsetsHAttr(),   conv.getOffsetsWAttr(),
                       conv.getStrideAttr(),     conv.getPaddingAttr(),
                       conv.getDilationAttr(),   conv.getModeAttr(),
                       conv.getActivationAttr(), conv.getGroupsAttr()};
    return std::nullopt;
  }

  /// A plain convolution result: no activation or residual applied yet.
  bool hasEpilogue() const {
    return residual || activation.getValue() != Activation::None;
  }

  Value build(PatternRewriter &rewriter, Location loc) const {
    return FusedConv2dOp::create(rewriter, loc, input, weight, bias, residual,
                                 offsetsH, offsetsW, mode, stride, padding,
                                 dilation, groups, activation);
  }
};

/// The convolution producing `v`, if `v` is its only use's operand and no
/// epilogue is applied yet.
std::optional<ConvParts> plainConv(Value v, PatternRewriter &rewriter) {
  if (!v.hasOneUse())
    return std::nullopt;
  std::optional<ConvParts> parts = ConvParts::of(v, rewriter);
  if (!parts || parts->hasEpilogue())
    return std::nullopt;
  return parts;
}

/// batch_norm(conv(x, w, b)) -> conv(x, fold_batch_norm(w, b, ...)).
struct FoldBatchNormIntoConv : OpRewritePattern<BatchNormOp> {
  FoldBatchNormIntoConv(MLIRContext *ctx, int64_t &counter)
      : OpRewritePattern(ctx), counter(counter) {}

  LogicalResult matchAndRewrite(BatchNormOp op,
                                PatternRewriter &rewriter) const override {
    std::optional<ConvParts> conv = plainConv(op.getInput(), rewriter);
    if (!conv)
      return rewriter.notifyMatchFailure(op, "input is not a one-use conv");
    auto fold = FoldBatchNormOp::create(
        rewriter, op.getLoc(), conv->weight, conv->bias, op.getMean(),
        op.getVar(), op.getWeight(), op.getBias(), op.getEpsilonAttr());
    conv->weight = fold.getNewWeight();
    conv->bias = fold.getNewBias();
    rewriter.replaceOp(op, conv->build(rewriter, op.getLoc()));
    ++counter;
    return success();
  }

  int64_t &counter;
};

/// relu/gelu(conv) -> conv with that activation.
template <typename OpTy> struct ActivationIntoConv : OpRewritePattern<OpTy> {
  ActivationIntoConv(MLIRContext *ctx, int64_t &counter)
      : OpRewritePattern<OpTy>(ctx), counter(counter) {}

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    std::optional<ConvParts> conv = plainConv(op.getInput(), rewriter);
    if (!conv)
      return rewriter.notifyMatchFailure(op, "input is not a one-use conv");
    Activation activation = Activation::Relu;
    if constexpr (std::is_same_v<OpTy, GeluOp>)
      activation = geluActivation(op.getApproximate());
    conv->activation = ActivationAttr::get(rewriter.getContext(), activation);
    rewriter.replaceOp(op, conv->build(rewriter, op.getLoc()));
    ++counter;
    return success();
  }

  int64_t &counter;
};

/// relu(max_pool2d(conv)) -> max_pool2d(relu(conv)): ReLU and max commute,
/// and the ReLU can then join the convolution.
struct ReluBelowMaxPool : OpRewritePattern<ReluOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ReluOp op,
                                PatternRewriter &rewriter) const override {
    auto pool = op.getInput().getDefiningOp<MaxPool2dOp>();
    if (!pool || !pool->hasOneUse())
      return rewriter.notifyMatchFailure(op, "input is not a one-use max_pool");
    if (!plainConv(pool.getInput(), rewriter))
      return rewriter.notifyMatchFailure(op,
                                         "pool input is not a one-use conv");
    Value relu = ReluOp::create(rewriter, op.getLoc(), pool.getInput());
    auto newPool =
        MaxPool2dOp::create(rewriter, pool.getLoc(), relu, pool.getKernelAttr(),
                            pool.getStrideAttr(), pool.getPaddingAttr(),
                            pool.getDilationAttr(), pool.getCeilModeAttr());
    rewriter.replaceOp(op, newPool.getResult());
    return success();
  }
};

/// add(conv, r) -> conv with residual r (no broadcasting).
struct ResidualIntoConv : OpRewritePattern<AddOp> {
  ResidualIntoConv(MLIRContext *ctx, int64_t &counter)
      : OpRewritePattern(ctx), counter(counter) {}

  LogicalResult matchAndRewrite(AddOp op,
                                PatternRewriter &rewriter) const override {
    for (auto [convSide, other] : {std::pair{op.getLhs(), op.getRhs()},
                                   std::pair{op.getRhs(), op.getLhs()}}) {
      if (convSide == other || other.getType() != op.getType() ||
          !convSide.hasOneUse())
        continue;
      std::optional<ConvParts> conv = ConvParts::of(convSide, rewriter);
      if (!conv || conv->residual)
        continue;
      conv->residual = other;
      rewriter.replaceOp(op, conv->build(rewriter, op.getLoc()));
      ++counter;
      return success();
    }
    return rewriter.notifyMatchFailure(op, "no one-use conv operand");
  }

  int64_t &counter;
};

struct FuseConvBnReluPass
    : mlir::gpuopt::seg::impl::FuseConvBnReluPassBase<FuseConvBnReluPass> {
  using FuseConvBnReluPassBase::FuseConvBnReluPassBase;

  void runOnOperation() override {
    int64_t folded = 0, activations = 0, residuals = 0;
    MLIRContext *ctx = &getContext();
    RewritePatternSet patterns(ctx);
    patterns.add<FoldBatchNormIntoConv>(ctx, folded);
    patterns.add<ActivationIntoConv<ReluOp>, ActivationIntoConv<GeluOp>>(
        ctx, activations);
    patterns.add<ResidualIntoConv>(ctx, residuals);
    patterns.add<ReluBelowMaxPool>(ctx);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    numBatchNormsFolded += folded;
    numActivationsFused += activations;
    numResidualsFused += residuals;
    if (report)
      emitRemark(getOperation().getLoc())
          << "fuse-conv-bn-relu: " << folded << " batch_norm folded, "
          << activations << " activations fused, " << residuals
          << " residual adds fused";
  }
};
} // namespace
