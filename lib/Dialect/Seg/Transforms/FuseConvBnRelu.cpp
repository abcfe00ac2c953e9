//===- FuseConvBnRelu.cpp - conv epilogue fusion --------------------------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// Folds inference BatchNorm into the preceding convolution (through a
// load-time seg.fold_batch_norm of the parameters) or, where no convolution
// precedes it, forward into the following linear or padding-free
// convolution, and fuses the activation and a residual add into
// seg.fused_conv2d's epilogue.
//
//===----------------------------------------------------------------------===//

#include "TokenLayout.h"
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
  FrameShiftAttr frameShift; // null: none

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
                       conv.getGroupsAttr(),
                       FrameShiftAttr()};
    if (auto conv = v.getDefiningOp<FusedConv2dOp>())
      return ConvParts{conv.getInput(),          conv.getWeight(),
                       conv.getBias(),           conv.getResidual(),
                       conv.getOffsetsHAttr(),   conv.getOffsetsWAttr(),
                       conv.getStrideAttr(),     conv.getPaddingAttr(),
                       conv.getDilationAttr(),   conv.getModeAttr(),
                       conv.getActivationAttr(), conv.getGroupsAttr(),
                       conv.getFrameShiftAttr()};
    return std::nullopt;
  }

  /// A plain convolution result: no activation or residual applied yet.
  bool hasEpilogue() const {
    return residual || activation.getValue() != Activation::None;
  }

  Value build(PatternRewriter &rewriter, Location loc) const {
    return FusedConv2dOp::create(rewriter, loc, input, weight, bias, residual,
                                 offsetsH, offsetsW, mode, stride, padding,
                                 dilation, groups, activation, frameShift);
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
      : OpRewritePattern(ctx, /*benefit=*/2), counter(counter) {}

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

/// A consumer that is linear in its input channels, reached from a BatchNorm
/// through one-use layout ops and concats, and the first of its input
/// channels the BatchNorm's channels feed.
struct ForwardTarget {
  Operation *consumer;
  int64_t offset;
};

/// Whether `pad` is all zeros: a zero-padded border would see 0, not the
/// BatchNorm's shift, so only padding-free convolutions are linear in their
/// input channels.
bool noPadding(ArrayRef<int64_t> pad) {
  return llvm::all_of(pad, [](int64_t p) { return p == 0; });
}

/// Follows the result of `bn` through one-use reshapes and permutes that keep
/// its channel axis identifiable and concats along that axis, to a seg.linear
/// over that axis or a padding-free, ungrouped convolution over it.
FailureOr<ForwardTarget> findForwardTarget(BatchNormOp bn,
                                           PatternRewriter &rewriter) {
  Value value = bn.getResult();
  if (llvm::is_contained(bn.getType().getShape(), 0))
    return rewriter.notifyMatchFailure(bn, "empty tensor");
  int64_t axis = 1, offset = 0;
  while (true) {
    if (!value.hasOneUse())
      return rewriter.notifyMatchFailure(
          bn, "a value between the batch_norm and its consumer has other uses");
    Operation *user = *value.getUsers().begin();
    ArrayRef<int64_t> shape =
        cast<RankedTensorType>(value.getType()).getShape();
    int64_t rank = static_cast<int64_t>(shape.size());
    if (auto reshape = dyn_cast<ReshapeOp>(user)) {
      std::optional<int64_t> next =
          reshapedAxis(shape, reshape.getType().getShape(), axis);
      if (!next)
        return rewriter.notifyMatchFailure(
            bn, "a reshape does not keep the channel axis");
      axis = *next;
    } else if (auto permute = dyn_cast<PermuteOp>(user)) {
      axis = llvm::find(permute.getDims(), axis) - permute.getDims().begin();
    } else if (auto concat = dyn_cast<ConcatOp>(user)) {
      if (static_cast<int64_t>(concat.getDim()) != axis)
        return rewriter.notifyMatchFailure(
            bn, "a concat along another axis than the channels");
      for (Value input : concat.getInputs()) {
        if (input == value)
          break;
        offset += cast<RankedTensorType>(input.getType()).getDimSize(axis);
      }
    } else if (auto linear = dyn_cast<LinearOp>(user)) {
      if (linear.getInput() != value || axis != rank - 1)
        return rewriter.notifyMatchFailure(
            bn, "the linear does not contract the channel axis");
      return ForwardTarget{linear, offset};
    } else if (auto conv = dyn_cast<Conv2dOp>(user)) {
      if (conv.getInput() != value || axis != 1 || conv.getGroups() != 1 ||
          !noPadding(conv.getPadding()))
        return rewriter.notifyMatchFailure(
            bn, "the conv2d is not an ungrouped, padding-free conv of the "
                "channels");
      return ForwardTarget{conv, offset};
    } else if (auto conv = dyn_cast<FusedConv2dOp>(user)) {
      // A cyclic shift moves whole channels' values; a zero-filled one
      // (also along the frames) brings in zeros, which would need the shift
      // too.
      if (conv.getInput() != value || axis != 1 || conv.getGroups() != 1 ||
          !noPadding(conv.getPadding()) ||
          (conv.hasShift() && conv.getMode() != ShiftMode::Cyclic) ||
          conv.hasFrameShift())
        return rewriter.notifyMatchFailure(
            bn, "the fused_conv2d is not an ungrouped, padding-free conv of "
                "the channels reading them without zero fill");
      return ForwardTarget{conv, offset};
    } else {
      return rewriter.notifyMatchFailure(
          bn, "the batch_norm does not reach a linear or convolution");
    }
    value = user->getResult(0);
  }
}

/// consumer(L(batch_norm(x))) -> consumer'(L(x)) for a consumer linear in
/// its input channels (a linear, a padding-free ungrouped convolution) and
/// layout ops and concats L: with the BatchNorm as y = x · s + t per channel,
/// W' = W · diag(s) on the channels it feeds and b' = b + W · t, computed
/// from the parameters by seg ops (load-time work).
struct FoldBatchNormForward : OpRewritePattern<BatchNormOp> {
  FoldBatchNormForward(MLIRContext *ctx, int64_t &counter)
      : OpRewritePattern(ctx, /*benefit=*/1), counter(counter) {}

  LogicalResult matchAndRewrite(BatchNormOp op,
                                PatternRewriter &rewriter) const override {
    FailureOr<ForwardTarget> target = findForwardTarget(op, rewriter);
    if (failed(target))
      return failure();
    Operation *consumer = target->consumer;
    Location loc = consumer->getLoc();
    rewriter.setInsertionPoint(consumer);
    Value weight = consumer->getOperand(1);
    auto weightType = cast<RankedTensorType>(weight.getType());
    Type elt = weightType.getElementType();
    ArrayRef<int64_t> wShape = weightType.getShape();
    int64_t rank = weightType.getRank();
    int64_t channels = cast<RankedTensorType>(op.getType()).getDimSize(1);
    int64_t offset = target->offset, inChannels = wShape[1];

    // The columns of W the BatchNorm's channels feed, and those around them.
    auto columns = [&](int64_t start, int64_t size) -> Value {
      if (start == 0 && size == inChannels)
        return weight;
      SmallVector<int64_t> starts(rank, 0), sizes(wShape), steps(rank, 1);
      starts[1] = start;
      sizes[1] = size;
      return SliceOp::create(rewriter, loc, weight, starts, sizes, steps);
    };
    Value part = columns(offset, channels);

    // fold_batch_norm scales dim 0: W' = (fold(Wᵀ))ᵀ, and with no bias its
    // new bias is the BatchNorm's shift t = beta − mean · s.
    SmallVector<int64_t> swap = llvm::to_vector(llvm::seq<int64_t>(0, rank));
    std::swap(swap[0], swap[1]);
    Value transposed = PermuteOp::create(rewriter, loc, part, swap);
    auto fold = FoldBatchNormOp::create(
        rewriter, loc, transposed, Value(), op.getMean(), op.getVar(),
        op.getWeight(), op.getBias(), op.getEpsilonAttr());
    Value scaled = PermuteOp::create(rewriter, loc, fold.getNewWeight(), swap);
    SmallVector<Value> pieces;
    if (offset > 0)
      pieces.push_back(columns(0, offset));
    pieces.push_back(scaled);
    if (offset + channels < inChannels)
      pieces.push_back(
          columns(offset + channels, inChannels - offset - channels));
    Value newWeight =
        pieces.size() == 1
            ? pieces.front()
            : ConcatOp::create(rewriter, loc, pieces, 1).getResult();

    // b' = b + W · t: the consumer applied to a map holding t[c] everywhere.
    int64_t outChannels = wShape[0];
    Value bias;
    if (auto linear = dyn_cast<LinearOp>(consumer))
      bias = linear.getBias();
    else if (auto conv = dyn_cast<Conv2dOp>(consumer))
      bias = conv.getBias();
    else
      bias = cast<FusedConv2dOp>(consumer).getBias();
    Value shift = fold.getNewBias();
    Value biasMap;
    if (rank == 2) {
      Value row = ReshapeOp::create(
          rewriter, loc, RankedTensorType::get({1, channels}, elt), shift);
      biasMap = LinearOp::create(rewriter, loc, row, part, bias);
    } else {
      Value map = ReshapeOp::create(
          rewriter, loc, RankedTensorType::get({1, channels, 1, 1}, elt),
          shift);
      for (int64_t dim : {3, 2})
        if (wShape[dim] > 1)
          map = ConcatOp::create(rewriter, loc,
                                 SmallVector<Value>(wShape[dim], map), dim);
      biasMap = Conv2dOp::create(
          rewriter, loc, map, part, bias, ArrayRef<int64_t>{1, 1},
          ArrayRef<int64_t>{0, 0}, ArrayRef<int64_t>{1, 1}, 1);
    }
    Value newBias = ReshapeOp::create(
        rewriter, loc, RankedTensorType::get({outChannels}, elt), biasMap);

    Value input = consumer->getOperand(0);
    Value replacement;
    if (auto linear = dyn_cast<LinearOp>(consumer)) {
      replacement = LinearOp::create(rewriter, loc, input, newWeight, newBias);
    } else if (auto conv = dyn_cast<Conv2dOp>(consumer)) {
      replacement = Conv2dOp::create(
          rewriter, loc, input, newWeight, newBias, conv.getStrideAttr(),
          conv.getPaddingAttr(), conv.getDilationAttr(), conv.getGroupsAttr());
    } else {
      std::optional<ConvParts> parts =
          ConvParts::of(consumer->getResult(0), rewriter);
      parts->weight = newWeight;
      parts->bias = newBias;
      replacement = parts->build(rewriter, loc);
    }
    rewriter.replaceOp(consumer, replacement);
    rewriter.replaceOp(op, op.getInput());
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
    int64_t folded = 0, foldedForward = 0, activations = 0, residuals = 0;
    MLIRContext *ctx = &getContext();
    RewritePatternSet patterns(ctx);
    patterns.add<FoldBatchNormIntoConv>(ctx, folded);
    patterns.add<FoldBatchNormForward>(ctx, foldedForward);
    patterns.add<ActivationIntoConv<ReluOp>, ActivationIntoConv<GeluOp>>(
        ctx, activations);
    patterns.add<ResidualIntoConv>(ctx, residuals);
    patterns.add<ReluBelowMaxPool>(ctx);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    numBatchNormsFolded += folded;
    numBatchNormsFoldedForward += foldedForward;
    numActivationsFused += activations;
    numResidualsFused += residuals;
    if (report)
      emitRemark(getOperation().getLoc())
          << "fuse-conv-bn-relu: " << folded << " batch_norm folded, "
          << activations << " activations fused, " << residuals
          << " residual adds fused, " << foldedForward
          << " batch_norm folded forward";
  }
};
} // namespace
