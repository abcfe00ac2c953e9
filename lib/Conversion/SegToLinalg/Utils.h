//===- Utils.h - helpers of the seg to linalg lowering ----------*- C++ -*-===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_LIB_CONVERSION_SEGTOLINALG_UTILS_H
#define GPUOPT_LIB_CONVERSION_SEGTOLINALG_UTILS_H

#include "gpuopt/Dialect/Seg/IR/SegOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"

namespace mlir {
namespace gpuopt {
namespace detail {

/// The ranked tensor type of `v`.
inline RankedTensorType tensorTypeOf(Value v) {
  return cast<RankedTensorType>(v.getType());
}

/// Static index attributes for slice offsets/sizes/strides.
SmallVector<OpFoldResult> indexAttrs(OpBuilder &b, ArrayRef<int64_t> values);

/// A float constant of type `type`.
Value floatConstant(OpBuilder &b, Location loc, Type type, double value);

/// A tensor of `type` filled with `value`.
Value filledTensor(OpBuilder &b, Location loc, RankedTensorType type,
                   double value);

/// `x` padded by `low`/`high` per dim with `value` (returns `x` when all
/// paddings are zero).
Value padTensor(OpBuilder &b, Location loc, Value x, ArrayRef<int64_t> low,
                ArrayRef<int64_t> high, double value);

/// The NumPy-broadcasting indexing map of an operand of shape `shape` into
/// an iteration space of shape `resultShape`.
AffineMap broadcastMap(MLIRContext *ctx, ArrayRef<int64_t> shape,
                       ArrayRef<int64_t> resultShape);

/// A parallel linalg.generic producing `resultType` from `inputs` read with
/// `inputMaps`; `body` receives the scalar inputs and returns the result.
Value elementwise(OpBuilder &b, Location loc, RankedTensorType resultType,
                  ValueRange inputs, ArrayRef<AffineMap> inputMaps,
                  function_ref<Value(OpBuilder &, Location, ValueRange)> body);

/// Applies `activation` (of seg.fused_conv2d; also seg.relu / seg.gelu) to
/// the scalar `x`.
Value applyActivation(OpBuilder &b, Location loc, Value x,
                      seg::Activation activation);

/// The logistic sigmoid 1 / (1 + exp(-x)) of the scalar `x`.
Value applySigmoid(OpBuilder &b, Location loc, Value x);

/// `x` reshaped to `type` (same element count) through a rank-1 collapse and
/// an expand.
Value reshapeTensor(OpBuilder &b, Location loc, Value x, RankedTensorType type);

/// The gather that reads `x` (NCHW) through a per-channel shift (see
/// seg.channel_shift); returns `x` when both offset lists are empty.
Value channelShift(OpBuilder &b, Location loc, Value x,
                   ArrayRef<int64_t> offsetsH, ArrayRef<int64_t> offsetsW,
                   bool cyclic);

/// The gather that reads `x` through a per-group shift (see seg.shift):
/// `offsets` are normalized (seg::ShiftOp::getNormalizedOffsets), row `k`
/// along `dims[k]`, one per index of `groupDim`.
Value groupShift(OpBuilder &b, Location loc, Value x, int64_t groupDim,
                 ArrayRef<int64_t> dims, ArrayRef<int64_t> offsets,
                 bool cyclic);

} // namespace detail
} // namespace gpuopt
} // namespace mlir

#endif // GPUOPT_LIB_CONVERSION_SEGTOLINALG_UTILS_H
