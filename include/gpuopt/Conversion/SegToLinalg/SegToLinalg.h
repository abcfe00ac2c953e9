//===- SegToLinalg.h - seg to linalg patterns -------------------*- C++ -*-===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_CONVERSION_SEGTOLINALG_SEGTOLINALG_H
#define GPUOPT_CONVERSION_SEGTOLINALG_SEGTOLINALG_H

#include "mlir/IR/PatternMatch.h"
#include "mlir/Support/LLVM.h"

namespace mlir {
class ModuleOp;
namespace gpuopt {

/// Patterns lowering seg convolutions and linear layers (conv2d,
/// fused_conv2d, conv_transpose2d, deform_conv2d, shift_offsets, linear).
/// With `remapConvInputs`, conv2d and fused_conv2d read their input through
/// remapped, guarded indices (padding and shift in the load, no padded or
/// gathered copy) instead of tensor.pad + a gather + a named convolution.
void populateSegConvToLinalgPatterns(RewritePatternSet &patterns,
                                     bool remapConvInputs = false);

/// Patterns lowering elementwise ops and normalizations (relu, gelu,
/// sigmoid, add, mul, batch_norm, fold_batch_norm, layer_norm).
void populateSegElementwiseToLinalgPatterns(RewritePatternSet &patterns);

/// Patterns lowering data movement, pooling and resampling (slice, concat,
/// pad, roll, channel_shift, shift, reshape, permute, max_pool2d, upsampling).
void populateSegDataMovementToLinalgPatterns(RewritePatternSet &patterns);

/// Turns every seg.param of every function in `module` into a trailing
/// function argument carrying a `seg.param` name attribute.
LogicalResult convertSegParamsToArguments(ModuleOp module);

} // namespace gpuopt
} // namespace mlir

#endif // GPUOPT_CONVERSION_SEGTOLINALG_SEGTOLINALG_H
