//===- TokenLayout.h - NCHW <-> token views ---------------------*- C++ -*-===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// Shared by --fuse-roll, --simplify-token-layout and --fuse-conv-bn-relu:
// recognizing the NCHW -> tokens (N, H·W, C) layout change PyTorch code
// writes in several ways, rewriting a linear over such tokens as a 1×1
// convolution, and following one axis through a reshape.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_LIB_DIALECT_SEG_TRANSFORMS_TOKENLAYOUT_H
#define GPUOPT_LIB_DIALECT_SEG_TRANSFORMS_TOKENLAYOUT_H

#include "gpuopt/Dialect/Seg/IR/SegOps.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace gpuopt {
namespace seg {

/// How tokens were made from an NCHW map.
enum class TokenLayout {
  /// reshape (N, C, H·W) then permute [0, 2, 1]: tokens (N, H·W, C).
  FlattenTranspose,
  /// permute [0, 2, 3, 1], then optionally reshape (N, H·W, C).
  ChannelsLast,
};

/// An NCHW value and the layout change that turned it into tokens.
struct TokenView {
  Value nchw;
  TokenLayout layout;
};

/// Matches `tokens` as a channels-last view of an NCHW value.
FailureOr<TokenView> matchTokenView(Value tokens);

/// Rewrites `linear(tokens)`, where `view` describes `tokens`, as the same
/// layout change applied to a 1×1 `seg.conv2d` of the NCHW map (the weight
/// reshaped to (O, C, 1, 1)). Returns the new convolution.
Conv2dOp rewriteTokenLinearAsConv(LinearOp linear, const TokenView &view,
                                  PatternRewriter &rewriter);

/// The dim of `to` that holds dim `axis` of `from` unchanged across a
/// reshape `from -> to` (the dims before it hold as many elements on both
/// sides, so index `i` along it stays `i`), or nullopt if it is split or
/// merged.
std::optional<int64_t> reshapedAxis(ArrayRef<int64_t> from,
                                    ArrayRef<int64_t> to, int64_t axis);

} // namespace seg
} // namespace gpuopt
} // namespace mlir

#endif // GPUOPT_LIB_DIALECT_SEG_TRANSFORMS_TOKENLAYOUT_H
