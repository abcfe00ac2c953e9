//===- Transforms.h - seg rewrite pattern sets ------------------*- C++ -*-===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_DIALECT_SEG_TRANSFORMS_TRANSFORMS_H
#define GPUOPT_DIALECT_SEG_TRANSFORMS_TRANSFORMS_H

#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace gpuopt {
namespace seg {

/// Patterns that turn rolls, groups of rolled channel slices and
/// pad/roll/crop sequences into `seg.channel_shift` (--collapse-rolls).
void populateCollapseRollsPatterns(RewritePatternSet &patterns);

/// Patterns that fold `seg.channel_shift` into consuming convolutions and
/// token linears (the folding half of --fuse-roll).
void populateFuseShiftPatterns(RewritePatternSet &patterns);

/// The pattern that moves a roll along the channels of an ungrouped
/// convolution's input (or of one piece of a channel concat) onto the
/// weight's input channels (part of --fuse-roll and --roll-to-deform-conv).
void populateChannelRollIntoWeightPatterns(RewritePatternSet &patterns);

/// Patterns that move elementwise ops below NCHW/token layout changes so
/// that round trips meet and fold (--simplify-token-layout, without the
/// linear-to-convolution rewrite).
void populateSimplifyTokenLayoutPatterns(RewritePatternSet &patterns);

/// Patterns that rewrite a linear over the tokens of a shifted NCHW map as a
/// 1×1 convolution of the shifted map (so that a shift+conv pattern applies).
void populateShiftedTokenLinearToConvPatterns(RewritePatternSet &patterns);

/// Patterns that rewrite conv2d(channel_shift(X)) as a deformable
/// convolution of X with constant offsets (--roll-to-deform-conv).
void populateShiftToDeformConvPatterns(RewritePatternSet &patterns);

/// Number of ops of the given kinds under `root` (pass statistics).
template <typename... Ops> int64_t countOps(Operation *root) {
  int64_t n = 0;
  root->walk([&](Operation *op) { n += isa<Ops...>(op); });
  return n;
}

/// Bytes read and written by the pure data-movement ops under `root` (roll,
/// slice, concat, pad, channel_shift, shift; a slice reads only what it
/// copies): what --fuse-roll saves.
int64_t countDataMovementBytes(Operation *root);

} // namespace seg
} // namespace gpuopt
} // namespace mlir

#endif // GPUOPT_DIALECT_SEG_TRANSFORMS_TRANSFORMS_H
