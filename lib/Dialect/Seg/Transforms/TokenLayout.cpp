//===- TokenLayout.cpp - NCHW <-> token views -----------------------------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//

#include "TokenLayout.h"

using namespace mlir;
using namespace mlir::gpuopt::seg;

namespace {
RankedTensorType withShape(Type like, ArrayRef<int64_t> shape) {
  return RankedTensorType::get(shape,
                               cast<RankedTensorType>(like).getElementType());
}
} // namespace

FailureOr<TokenView> mlir::gpuopt::seg::matchTokenView(Value tokens) {
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

Conv2dOp
mlir::gpuopt::seg::rewriteTokenLinearAsConv(LinearOp op, const TokenView &view,
                                            PatternRewriter &rewriter) {
  Location loc = op.getLoc();
  auto weightType = cast<RankedTensorType>(op.getWeight().getType());
  int64_t outChannels = weightType.getDimSize(0);
  Value weight = ReshapeOp::create(
      rewriter, loc,
      withShape(weightType, {outChannels, weightType.getDimSize(1), 1, 1}),
      op.getWeight());
  auto conv = Conv2dOp::create(rewriter, loc, view.nchw, weight, op.getBias(),
                               rewriter.getDenseI64ArrayAttr({1, 1}),
                               rewriter.getDenseI64ArrayAttr({0, 0}),
                               rewriter.getDenseI64ArrayAttr({1, 1}),
                               rewriter.getI64IntegerAttr(1));

  ArrayRef<int64_t> nchw = conv.getType().getShape();
  Value tokens;
  if (view.layout == TokenLayout::FlattenTranspose) {
    Value flat = ReshapeOp::create(
        rewriter, loc,
        withShape(conv.getType(), {nchw[0], nchw[1], nchw[2] * nchw[3]}), conv);
    tokens = PermuteOp::create(rewriter, loc, flat, ArrayRef<int64_t>{0, 2, 1});
  } else {
    Value nhwc =
        PermuteOp::create(rewriter, loc, conv, ArrayRef<int64_t>{0, 2, 3, 1});
    tokens =
        nhwc.getType() == op.getType()
            ? nhwc
            : ReshapeOp::create(rewriter, loc, op.getType(), nhwc).getResult();
  }
  rewriter.replaceOp(op, tokens);
  return conv;
}

std::optional<int64_t> mlir::gpuopt::seg::reshapedAxis(ArrayRef<int64_t> from,
                                                       ArrayRef<int64_t> to,
                                                       int64_t axis) {
  if (llvm::is_contained(from, 0))
    return std::nullopt;
  int64_t before = 1;
  for (int64_t d : from.take_front(axis))
    before *= d;
  int64_t prefix = 1;
  for (auto [i, d] : llvm::enumerate(to)) {
    if (prefix == before && d == from[axis])
      return static_cast<int64_t>(i);
    prefix *= d;
    if (prefix > before)
      break;
  }
  return std::nullopt;
}
