//===- SegOps.cpp - seg dialect operations --------------------------------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// Every op with an inferred result type computes its shape in one static
// function that takes an optional diagnostic emitter: `verify()` calls it with
// `emitOpError` so that each inconsistency gets a precise message, and
// `inferReturnTypes` calls it with the builder's location (or silently).
//
// The dialect's registration is in SegDialect.cpp, the folders in SegFolds.cpp.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Dialect/Seg/IR/SegOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallSet.h"
#include "llvm/Support/CheckedArithmetic.h"

#include <limits>

using namespace mlir;
using namespace mlir::gpuopt::seg;

//===----------------------------------------------------------------------===//
// Shape helpers
//===----------------------------------------------------------------------===//

namespace {
/// Emits a diagnostic when an emitter is available; always yields failure.
/// `emit` is null when inference runs without a location.
class ShapeError {
public:
  explicit ShapeError(function_ref<InFlightDiagnostic()> emit) : emit(emit) {}

  /// Reports `msg` (when possible) and returns failure.
  template <typename... Args>
  LogicalResult operator()(const Args &...args) const {
    if (!emit)
      return failure();
    InFlightDiagnostic diag = emit();
    (diag << ... << args);
    return diag;
  }

private:
  function_ref<InFlightDiagnostic()> emit;
};

/// Dims and attribute entries are arbitrary int64 values from the IR, so shape
/// arithmetic runs in 128 bits, where a sum or product of two int64 values
/// cannot overflow; narrowDim() then checks that a result fits a dim.
using Wide = __int128;

/// `v` as an int64 dim, or an error saying that `what` overflows.
FailureOr<int64_t> narrowDim(const ShapeError &err, Wide v, StringRef what) {
  if (v < std::numeric_limits<int64_t>::min() ||
      v > std::numeric_limits<int64_t>::max())
    return err(what, " overflows int64");
  return static_cast<int64_t>(v);
}

/// Formats an integer list as `[a, b, c]` for diagnostics.
std::string fmt(ArrayRef<int64_t> values) {
  std::string s = "[";
  llvm::interleave(
      values, [&](int64_t v) { s += std::to_string(v); }, [&] { s += ", "; });
  return s + "]";
}

/// Checks that an attribute array has `n` entries, each at least `min`.
LogicalResult checkArray(const ShapeError &err, StringRef name,
                         ArrayRef<int64_t> values, size_t n, int64_t min) {
  if (values.size() != n)
    return err("expected '", name, "' to have ", n, " entries, got ",
               values.size());
  for (int64_t v : values)
    if (v < min)
      return err("expected every entry of '", name, "' to be at least ", min,
                 ", got ", fmt(values));
  return success();
}

/// Checks a per-channel tensor (`bias`, BN statistics): rank 1, `channels`.
LogicalResult checkVector(const ShapeError &err, StringRef name, Type type,
                          int64_t channels) {
  auto t = cast<RankedTensorType>(type);
  if (t.getRank() != 1 || t.getDimSize(0) != channels)
    return err("expected '", name, "' of shape [", channels, "], got ",
               fmt(t.getShape()));
  return success();
}

/// Checks that every type in `types` has the element type of `ref`.
LogicalResult checkElementTypes(const ShapeError &err, Type ref,
                                ArrayRef<std::pair<StringRef, Type>> types) {
  Type elt = cast<ShapedType>(ref).getElementType();
  for (auto [name, type] : types)
    if (type && cast<ShapedType>(type).getElementType() != elt)
      return err("expected '", name, "' to have element type ", elt, ", got ",
                 cast<ShapedType>(type).getElementType());
  return success();
}

/// Wraps the shape computed by `infer` into the inferred result type.
template <typename EltFn, typename Fn>
LogicalResult inferInto(std::optional<Location> loc, EltFn &&eltSource,
                        SmallVectorImpl<Type> &inferred, Fn &&infer) {
  auto emit = [&]() { return emitError(*loc); };
  ShapeError err(loc ? function_ref<InFlightDiagnostic()>(emit) : nullptr);
  SmallVector<int64_t> shape;
  if (failed(infer(err, shape)))
    return failure();
  inferred.push_back(RankedTensorType::get(
      shape, cast<ShapedType>(eltSource()).getElementType()));
  return success();
}

/// Runs the shape computation with `op`'s diagnostics and compares the result
/// with the op's declared result type.
template <typename Fn> LogicalResult verifyInto(Operation *op, Fn &&infer) {
  auto emit = [&]() { return op->emitOpError(); };
  ShapeError err(emit);
  SmallVector<int64_t> shape;
  if (failed(infer(err, shape)))
    return failure();
  auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
  if (resultType.getShape() != ArrayRef<int64_t>(shape))
    return err("expected result shape ", fmt(shape), ", got ",
               fmt(resultType.getShape()));
  // Operand 0 is the input of every inferred op; the result keeps its type.
  Type elt = cast<ShapedType>(op->getOperand(0).getType()).getElementType();
  if (resultType.getElementType() != elt)
    return err("expected result element type ", elt, ", got ",
               resultType.getElementType());
  return success();
}

/// Output size of a convolution/pooling window along one dim.
Wide windowOutSize(Wide in, Wide kernel, Wide stride, Wide pad, Wide dilation,
                   bool ceilMode = false) {
  Wide span = in + 2 * pad - dilation * (kernel - 1) - 1;
  if (span < 0)
    return 0;
  Wide out = (ceilMode ? (span + stride - 1) / stride : span / stride) + 1;
  // PyTorch: the last window must start inside the input or left padding.
  if (ceilMode && (out - 1) * stride >= in + pad)
    --out;
  return out;
}

/// Common checks of conv2d and conv_transpose2d attributes.
LogicalResult checkConvAttrs(const ShapeError &err, ArrayRef<int64_t> stride,
                             ArrayRef<int64_t> padding,
                             ArrayRef<int64_t> dilation, int64_t groups) {
  if (failed(checkArray(err, "stride", stride, 2, 1)) ||
      failed(checkArray(err, "padding", padding, 2, 0)) ||
      failed(checkArray(err, "dilation", dilation, 2, 1)))
    return failure();
  if (groups < 1)
    return err("expected 'groups' to be at least 1, got ", groups);
  return success();
}

/// Checks rank-4 input and weight, element types and the optional bias.
LogicalResult checkConvOperands(const ShapeError &err, Type input, Type weight,
                                Type bias) {
  auto in = cast<RankedTensorType>(input);
  auto w = cast<RankedTensorType>(weight);
  if (in.getRank() != 4)
    return err("expected 'input' of rank 4 (NCHW), got rank ", in.getRank());
  if (w.getRank() != 4)
    return err("expected 'weight' of rank 4, got rank ", w.getRank());
  return checkElementTypes(err, input, {{"weight", weight}, {"bias", bias}});
}

//===----------------------------------------------------------------------===//
// Per-op shape functions
//===----------------------------------------------------------------------===//

LogicalResult conv2dShape(const ShapeError &err, Type input, Type weight,
                          Type bias, ArrayRef<int64_t> stride,
                          ArrayRef<int64_t> padding, ArrayRef<int64_t> dilation,
                          int64_t groups, SmallVectorImpl<int64_t> &shape) {
  if (failed(checkConvOperands(err, input, weight, bias)) ||
      failed(checkConvAttrs(err, stride, padding, dilation, groups)))
    return failure();
  ArrayRef<int64_t> in = cast<RankedTensorType>(input).getShape();
  ArrayRef<int64_t> w = cast<RankedTensorType>(weight).getShape();
  if (in[1] % groups != 0)
    return err("expected input channels (", in[1], ") divisible by groups (",
               groups, ")");
  if (w[0] % groups != 0)
    return err("expected output channels (", w[0], ") divisible by groups (",
               groups, ")");
  if (w[1] != in[1] / groups)
    return err("expected weight dim 1 to be input channels / groups (",
               in[1] / groups, "), got ", w[1]);
  if (bias && failed(checkVector(err, "bias", bias, w[0])))
    return failure();
  shape.assign({in[0], w[0]});
  for (int i = 0; i < 2; ++i) {
    Wide out =
        windowOutSize(in[2 + i], w[2 + i], stride[i], padding[i], dilation[i]);
    if (out < 1) {
      FailureOr<int64_t> kernel = narrowDim(
          err, Wide(dilation[i]) * (w[2 + i] - 1) + 1, "the dilated kernel");
      if (failed(kernel))
        return failure();
      return err("dilated kernel ", *kernel,
                 " is larger than the padded input ",
                 in[2 + i] + 2 * padding[i], " along spatial dim ", i);
    }
    FailureOr<int64_t> size = narrowDim(err, out, "the output size");
    if (failed(size))
      return failure();
    shape.push_back(*size);
  }
  return success();
}

LogicalResult convTranspose2dShape(const ShapeError &err, Type input,
                                   Type weight, Type bias,
                                   ArrayRef<int64_t> stride,
                                   ArrayRef<int64_t> padding,
                                   ArrayRef<int64_t> outputPadding,
                                   ArrayRef<int64_t> dilation, int64_t groups,
                                   SmallVectorImpl<int64_t> &shape) {
  if (failed(checkConvOperands(err, input, weight, bias)) ||
      failed(checkConvAttrs(err, stride, padding, dilation, groups)) ||
      failed(checkArray(err, "output_padding", outputPadding, 2, 0)))
    return failure();
  ArrayRef<int64_t> in = cast<RankedTensorType>(input).getShape();
  ArrayRef<int64_t> w = cast<RankedTensorType>(weight).getShape();
  if (in[1] % groups != 0)
    return err("expected input channels (", in[1], ") divisible by groups (",
               groups, ")");
  if (w[0] != in[1])
    return err("expected weight dim 0 to be input channels (", in[1], "), got ",
               w[0]);
  FailureOr<int64_t> outChannels =
      narrowDim(err, Wide(w[1]) * groups, "the output channel count");
  if (failed(outChannels) ||
      (bias && failed(checkVector(err, "bias", bias, *outChannels))))
    return failure();
  shape.assign({in[0], *outChannels});
  for (int i = 0; i < 2; ++i) {
    if (outputPadding[i] >= stride[i] && outputPadding[i] >= dilation[i])
      return err("expected output_padding (", outputPadding[i],
                 ") smaller than stride or dilation along spatial dim ", i);
    Wide out = Wide(in[2 + i] - 1) * stride[i] - 2 * Wide(padding[i]) +
               Wide(dilation[i]) * (w[2 + i] - 1) + outputPadding[i] + 1;
    if (out < 1)
      return err("padding ", padding[i], " leaves no output along spatial dim ",
                 i);
    FailureOr<int64_t> size = narrowDim(err, out, "the output size");
    if (failed(size))
      return failure();
    shape.push_back(*size);
  }
  return success();
}

LogicalResult batchNormShape(const ShapeError &err, Type input, Type mean,
                             Type var, Type weight, Type bias, double epsilon,
                             SmallVectorImpl<int64_t> &shape) {
  auto in = cast<RankedTensorType>(input);
  if (in.getRank() < 2)
    return err("expected 'input' of rank 2 or more, got rank ", in.getRank());
  if (!(epsilon > 0.0))
    return err("expected a positive 'epsilon', got ", epsilon);
  int64_t c = in.getDimSize(1);
  if (failed(checkVector(err, "mean", mean, c)) ||
      failed(checkVector(err, "var", var, c)) ||
      failed(checkVector(err, "weight", weight, c)) ||
      failed(checkVector(err, "bias", bias, c)) ||
      failed(checkElementTypes(
          err, input,
          {{"mean", mean}, {"var", var}, {"weight", weight}, {"bias", bias}})))
    return failure();
  llvm::append_range(shape, in.getShape());
  return success();
}

LogicalResult layerNormShape(const ShapeError &err, Type input, Type weight,
                             Type bias, std::optional<uint64_t> axis,
                             double epsilon, SmallVectorImpl<int64_t> &shape) {
  auto in = cast<RankedTensorType>(input);
  auto w = cast<RankedTensorType>(weight);
  if (!(epsilon > 0.0))
    return err("expected a positive 'epsilon', got ", epsilon);
  if (w.getShape() != cast<RankedTensorType>(bias).getShape())
    return err("expected 'weight' and 'bias' of the same shape, got ",
               fmt(w.getShape()), " and ",
               fmt(cast<RankedTensorType>(bias).getShape()));
  if (axis) {
    if (*axis >= static_cast<uint64_t>(in.getRank()))
      return err("expected 'axis' in [0, ", in.getRank(), "), got ",
                 static_cast<int64_t>(*axis));
    int64_t size = in.getDimSize(*axis);
    if (w.getShape() != ArrayRef<int64_t>{size})
      return err("expected 'weight' of shape [", size, "] (dim ", *axis,
                 " of the input), got ", fmt(w.getShape()));
  } else if (w.getRank() > in.getRank() ||
             in.getShape().take_back(w.getRank()) != w.getShape()) {
    return err("expected the normalized shape ", fmt(w.getShape()),
               " to equal the trailing dims of the input ", fmt(in.getShape()));
  }
  if (failed(
          checkElementTypes(err, input, {{"weight", weight}, {"bias", bias}})))
    return failure();
  llvm::append_range(shape, in.getShape());
  return success();
}

LogicalResult linearShape(const ShapeError &err, Type input, Type weight,
                          Type bias, SmallVectorImpl<int64_t> &shape) {
  auto in = cast<RankedTensorType>(input);
  auto w = cast<RankedTensorType>(weight);
  if (in.getRank() < 1)
    return err("expected 'input' of rank 1 or more");
  if (w.getRank() != 2)
    return err("expected 'weight' of rank 2 (out, in), got rank ", w.getRank());
  if (w.getDimSize(1) != in.getShape().back())
    return err("expected weight dim 1 (", w.getDimSize(1),
               ") to equal the input's last dim (", in.getShape().back(), ")");
  if ((bias && failed(checkVector(err, "bias", bias, w.getDimSize(0)))) ||
      failed(
          checkElementTypes(err, input, {{"weight", weight}, {"bias", bias}})))
    return failure();
  llvm::append_range(shape, in.getShape().drop_back());
  shape.push_back(w.getDimSize(0));
  return success();
}

LogicalResult broadcastShape(const ShapeError &err, Type lhs, Type rhs,
                             SmallVectorImpl<int64_t> &shape) {
  ArrayRef<int64_t> a = cast<RankedTensorType>(lhs).getShape();
  ArrayRef<int64_t> b = cast<RankedTensorType>(rhs).getShape();
  size_t rank = std::max(a.size(), b.size());
  shape.assign(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    int64_t x = i < a.size() ? a[a.size() - 1 - i] : 1;
    int64_t y = i < b.size() ? b[b.size() - 1 - i] : 1;
    if (x != y && x != 1 && y != 1)
      return err("operand shapes ", fmt(a), " and ", fmt(b),
                 " are not broadcast-compatible");
    shape[rank - 1 - i] = x == 1 ? y : x;
  }
  return success();
}

LogicalResult maxPool2dShape(const ShapeError &err, Type input,
                             ArrayRef<int64_t> kernel, ArrayRef<int64_t> stride,
                             ArrayRef<int64_t> padding,
                             ArrayRef<int64_t> dilation, bool ceilMode,
                             SmallVectorImpl<int64_t> &shape) {
  auto in = cast<RankedTensorType>(input);
  if (in.getRank() != 4)
    return err("expected 'input' of rank 4 (NCHW), got rank ", in.getRank());
  if (failed(checkArray(err, "kernel", kernel, 2, 1)) ||
      failed(checkArray(err, "stride", stride, 2, 1)) ||
      failed(checkArray(err, "padding", padding, 2, 0)) ||
      failed(checkArray(err, "dilation", dilation, 2, 1)))
    return failure();
  llvm::append_range(shape, in.getShape().take_front(2));
  for (int i = 0; i < 2; ++i) {
    if (2 * Wide(padding[i]) > kernel[i])
      return err("expected padding (", padding[i],
                 ") at most half the kernel size (", kernel[i], ")");
    Wide out = windowOutSize(in.getDimSize(2 + i), kernel[i], stride[i],
                             padding[i], dilation[i], ceilMode);
    if (out < 1)
      return err("pooling window is larger than the padded input along "
                 "spatial dim ",
                 i);
    FailureOr<int64_t> size = narrowDim(err, out, "the output size");
    if (failed(size))
      return failure();
    shape.push_back(*size);
  }
  return success();
}

LogicalResult upsampleShape(const ShapeError &err, Type input,
                            ArrayRef<int64_t> size,
                            SmallVectorImpl<int64_t> &shape) {
  auto in = cast<RankedTensorType>(input);
  if (in.getRank() != 4)
    return err("expected 'input' of rank 4 (NCHW), got rank ", in.getRank());
  if (failed(checkArray(err, "size", size, 2, 1)))
    return failure();
  // (PyTorch's rule too: no output pixel has a source pixel.)
  if (in.getDimSize(2) == 0 || in.getDimSize(3) == 0)
    return err("expected a non-empty input map to upsample, got ",
               in.getDimSize(2), " x ", in.getDimSize(3));
  llvm::append_range(shape, in.getShape().take_front(2));
  llvm::append_range(shape, size);
  return success();
}

LogicalResult concatShape(const ShapeError &err, TypeRange inputs, int64_t dim,
                          SmallVectorImpl<int64_t> &shape) {
  if (inputs.empty())
    return err("expected at least one operand");
  auto first = cast<RankedTensorType>(inputs.front());
  if (dim < 0 || dim >= first.getRank())
    return err("expected 'dim' in [0, ", first.getRank(), "), got ", dim);
  llvm::append_range(shape, first.getShape());
  for (auto [i, type] : llvm::enumerate(inputs.drop_front())) {
    auto t = cast<RankedTensorType>(type);
    if (t.getElementType() != first.getElementType())
      return err("expected operand ", i + 1, " to have element type ",
                 first.getElementType(), ", got ", t.getElementType());
    if (t.getRank() != first.getRank())
      return err("expected operand ", i + 1, " of rank ", first.getRank(),
                 ", got rank ", t.getRank());
    for (int64_t d = 0; d < t.getRank(); ++d) {
      if (d != dim && t.getDimSize(d) != first.getDimSize(d))
        return err("expected operand ", i + 1, " to match operand 0 in dim ", d,
                   " (", first.getDimSize(d), "), got ", t.getDimSize(d));
    }
    FailureOr<int64_t> sum = narrowDim(
        err, Wide(shape[dim]) + t.getDimSize(dim), "the concatenated dim");
    if (failed(sum))
      return failure();
    shape[dim] = *sum;
  }
  return success();
}

LogicalResult sliceShape(const ShapeError &err, Type input,
                         ArrayRef<int64_t> start, ArrayRef<int64_t> size,
                         ArrayRef<int64_t> step,
                         SmallVectorImpl<int64_t> &shape) {
  auto in = cast<RankedTensorType>(input);
  size_t rank = in.getRank();
  if (failed(checkArray(err, "start", start, rank, 0)) ||
      failed(checkArray(err, "size", size, rank, 1)) ||
      failed(checkArray(err, "step", step, rank, 1)))
    return failure();
  for (size_t d = 0; d < rank; ++d) {
    FailureOr<int64_t> last = narrowDim(
        err, start[d] + Wide(size[d] - 1) * step[d], "the last slice index");
    if (failed(last))
      return failure();
    if (*last >= in.getDimSize(d))
      return err("slice reads index ", *last, " of dim ", d, " of size ",
                 in.getDimSize(d));
  }
  llvm::append_range(shape, size);
  return success();
}

LogicalResult padShape(const ShapeError &err, Type input, ArrayRef<int64_t> low,
                       ArrayRef<int64_t> high,
                       SmallVectorImpl<int64_t> &shape) {
  auto in = cast<RankedTensorType>(input);
  if (failed(checkArray(err, "low", low, in.getRank(), 0)) ||
      failed(checkArray(err, "high", high, in.getRank(), 0)))
    return failure();
  for (int64_t d = 0; d < in.getRank(); ++d) {
    FailureOr<int64_t> size = narrowDim(
        err, Wide(in.getDimSize(d)) + low[d] + high[d], "the padded size");
    if (failed(size))
      return failure();
    shape.push_back(*size);
  }
  return success();
}

LogicalResult rollShape(const ShapeError &err, Type input,
                        ArrayRef<int64_t> shifts, ArrayRef<int64_t> dims,
                        SmallVectorImpl<int64_t> &shape) {
  auto in = cast<RankedTensorType>(input);
  if (dims.empty())
    return err("expected at least one dim to roll");
  if (shifts.size() != dims.size())
    return err("expected as many shifts as dims, got ", shifts.size(), " and ",
               dims.size());
  llvm::SmallSet<int64_t, 4> seen;
  for (int64_t d : dims) {
    if (d < 0 || d >= in.getRank())
      return err("expected roll dims in [0, ", in.getRank(), "), got ",
                 fmt(dims));
    if (!seen.insert(d).second)
      return err("expected distinct roll dims, got ", fmt(dims));
  }
  llvm::append_range(shape, in.getShape());
  return success();
}

LogicalResult permuteShape(const ShapeError &err, Type input,
                           ArrayRef<int64_t> dims,
                           SmallVectorImpl<int64_t> &shape) {
  auto in = cast<RankedTensorType>(input);
  if (dims.size() != static_cast<size_t>(in.getRank()))
    return err("expected 'dims' to have ", in.getRank(), " entries, got ",
               dims.size());
  SmallVector<bool> seen(in.getRank(), false);
  for (int64_t d : dims) {
    if (d < 0 || d >= in.getRank() || seen[d])
      return err("expected 'dims' to be a permutation of [0, ", in.getRank(),
                 "), got ", fmt(dims));
    seen[d] = true;
    shape.push_back(in.getDimSize(d));
  }
  return success();
}

LogicalResult channelShiftShape(const ShapeError &err, Type input,
                                ArrayRef<int64_t> offsetsH,
                                ArrayRef<int64_t> offsetsW,
                                SmallVectorImpl<int64_t> &shape) {
  auto in = cast<RankedTensorType>(input);
  if (in.getRank() != 4)
    return err("expected 'input' of rank 4 (NCHW), got rank ", in.getRank());
  int64_t channels = in.getDimSize(1);
  for (auto [name, offsets] :
       {std::pair<StringRef, ArrayRef<int64_t>>{"offsets_h", offsetsH},
        {"offsets_w", offsetsW}}) {
    if (!offsets.empty() && static_cast<int64_t>(offsets.size()) != channels)
      return err("expected '", name,
                 "' to be empty or have one entry per "
                 "channel (",
                 channels, "), got ", offsets.size());
  }
  // 'mode' is a ShiftModeAttr: its constraint already rejected any other value.
  llvm::append_range(shape, in.getShape());
  return success();
}

LogicalResult shiftShape(const ShapeError &err, Type input, int64_t groupDim,
                         ArrayRef<int64_t> dims, ArrayRef<int64_t> offsets,
                         SmallVectorImpl<int64_t> &shape) {
  auto in = cast<RankedTensorType>(input);
  int64_t rank = in.getRank();
  if (groupDim < 0 || groupDim >= rank)
    return err("expected 'group_dim' in [0, ", rank, "), got ", groupDim);
  if (dims.empty())
    return err("expected at least one dim to shift");
  llvm::SmallSet<int64_t, 4> seen;
  for (int64_t d : dims) {
    if (d < 0 || d >= rank)
      return err("expected shifted dims in [0, ", rank, "), got ", fmt(dims));
    if (d == groupDim)
      return err("expected shifted dims other than 'group_dim' (", groupDim,
                 "), got ", fmt(dims));
    if (!seen.insert(d).second)
      return err("expected distinct shifted dims, got ", fmt(dims));
  }
  Wide expected = Wide(dims.size()) * in.getDimSize(groupDim);
  if (Wide(offsets.size()) != expected)
    return err("expected 'offsets' to have one entry per index of 'group_dim' "
               "(",
               in.getDimSize(groupDim), ") for each of the ", dims.size(),
               " shifted dims, got ", offsets.size());
  llvm::append_range(shape, in.getShape());
  return success();
}

/// `frameShift` of a seg.fused_conv2d reading `input` (NCHW): positive
/// frames dividing the batch, one offset per channel, each in
/// (-frames, frames).
LogicalResult checkFrameShift(const ShapeError &err, RankedTensorType input,
                              FrameShiftAttr frameShift) {
  int64_t frames = frameShift.getFrames();
  ArrayRef<int64_t> offsets = frameShift.getOffsets();
  if (frames < 1)
    return err("expected 'frame_shift' frames to be positive, got ", frames);
  if (input.getDimSize(0) % frames != 0)
    return err("expected 'frame_shift' frames (", frames,
               ") to divide the batch (", input.getDimSize(0), ")");
  if (static_cast<int64_t>(offsets.size()) != input.getDimSize(1))
    return err("expected 'frame_shift' to have one offset per input channel (",
               input.getDimSize(1), "), got ", offsets.size());
  for (int64_t dt : offsets)
    if (dt <= -frames || dt >= frames)
      return err("expected 'frame_shift' offsets in (-", frames, ", ", frames,
                 "), got ", fmt(offsets));
  return success();
}

LogicalResult fusedConv2dShape(FusedConv2dOp::Adaptor op, const ShapeError &err,
                               SmallVectorImpl<int64_t> &shape) {
  Type input = op.getInput().getType();
  Type bias = op.getBias() ? op.getBias().getType() : Type();
  SmallVector<int64_t> shifted;
  if (failed(channelShiftShape(err, input, op.getOffsetsH(), op.getOffsetsW(),
                               shifted)) ||
      failed(conv2dShape(err, input, op.getWeight().getType(), bias,
                         op.getStride(), op.getPadding(), op.getDilation(),
                         op.getGroupsAttr().getInt(), shape)))
    return failure();
  if (Value residual = op.getResidual()) {
    auto type = cast<RankedTensorType>(residual.getType());
    if (type.getShape() != ArrayRef<int64_t>(shape) ||
        type.getElementType() != cast<RankedTensorType>(input).getElementType())
      return err("expected 'residual' of the result's type, got ", type);
  }
  if (FrameShiftAttr frameShift = op.getFrameShiftAttr())
    return checkFrameShift(err, cast<RankedTensorType>(input), frameShift);
  return success();
}

LogicalResult deformConv2dShape(DeformConv2dOp::Adaptor op,
                                const ShapeError &err,
                                SmallVectorImpl<int64_t> &shape) {
  Type bias = op.getBias() ? op.getBias().getType() : Type();
  if (failed(conv2dShape(err, op.getInput().getType(), op.getWeight().getType(),
                         bias, op.getStride(), op.getPadding(),
                         op.getDilation(), op.getGroupsAttr().getInt(), shape)))
    return failure();
  auto in = cast<RankedTensorType>(op.getInput().getType());
  auto w = cast<RankedTensorType>(op.getWeight().getType());
  auto off = cast<RankedTensorType>(op.getOffset().getType());
  int64_t groups = op.getOffsetGroupsAttr().getInt();
  if (groups < 1 || in.getDimSize(1) % groups != 0)
    return err("expected 'offset_groups' (", groups,
               ") to be positive and divide the input channels (",
               in.getDimSize(1), ")");
  FailureOr<int64_t> taps = narrowDim(
      err, Wide(w.getDimSize(2)) * w.getDimSize(3), "the kernel size");
  if (failed(taps))
    return failure();
  FailureOr<int64_t> offsetChannels =
      narrowDim(err, 2 * Wide(groups) * *taps, "the offset channel count");
  if (failed(offsetChannels))
    return failure();
  SmallVector<int64_t> expected = {in.getDimSize(0), *offsetChannels, shape[2],
                                   shape[3]};
  if (off.getRank() != 4 ||
      (off.getDimSize(0) != 1 && off.getDimSize(0) != expected[0]) ||
      off.getShape().drop_front() != ArrayRef<int64_t>(expected).drop_front())
    return err("expected 'offset' of shape ", fmt(expected),
               " (or a batch of 1), got ", fmt(off.getShape()));
  return checkElementTypes(err, op.getInput().getType(),
                           {{"offset", op.getOffset().getType()}});
}

/// Type of an optional operand, or null.
Type typeOrNull(Value v) { return v ? v.getType() : Type(); }
} // namespace

//===----------------------------------------------------------------------===//
// Op hooks. For each inferred op: verify() and inferReturnTypes() share the
// shape function above.
//===----------------------------------------------------------------------===//

#define SEG_SHAPE_HOOKS(OP, FIRST, CALL)                                       \
  LogicalResult OP::verify() {                                                 \
    auto &op = *this;                                                          \
    (void)op;                                                                  \
    return verifyInto(getOperation(),                                          \
                      [&](const ShapeError &err,                               \
                          SmallVectorImpl<int64_t> &shape) { return CALL; });  \
  }                                                                            \
  LogicalResult OP::inferReturnTypes(MLIRContext *,                            \
                                     std::optional<Location> loc, Adaptor op,  \
                                     SmallVectorImpl<Type> &inferred) {        \
    return inferInto(                                                          \
        loc, [&]() -> Type { return FIRST; }, inferred,                        \
        [&](const ShapeError &err, SmallVectorImpl<int64_t> &shape) {          \
          return CALL;                                                         \
        });                                                                    \
  }

SEG_SHAPE_HOOKS(Conv2dOp, op.getInput().getType(),
                conv2dShape(err, op.getInput().getType(),
                            op.getWeight().getType(), typeOrNull(op.getBias()),
                            op.getStride(), op.getPadding(), op.getDilation(),
                            op.getGroupsAttr().getInt(), shape))

SEG_SHAPE_HOOKS(ConvTranspose2dOp, op.getInput().getType(),
                convTranspose2dShape(err, op.getInput().getType(),
                                     op.getWeight().getType(),
                                     typeOrNull(op.getBias()), op.getStride(),
                                     op.getPadding(), op.getOutputPadding(),
                                     op.getDilation(),
                                     op.getGroupsAttr().getInt(), shape))

SEG_SHAPE_HOOKS(BatchNormOp, op.getInput().getType(),
                batchNormShape(err, op.getInput().getType(),
                               op.getMean().getType(), op.getVar().getType(),
                               op.getWeight().getType(), op.getBias().getType(),
                               op.getEpsilon().convertToDouble(), shape))

SEG_SHAPE_HOOKS(LayerNormOp, op.getInput().getType(),
                layerNormShape(err, op.getInput().getType(),
                               op.getWeight().getType(), op.getBias().getType(),
                               op.getAxis(), op.getEpsilon().convertToDouble(),
                               shape))

SEG_SHAPE_HOOKS(LinearOp, op.getInput().getType(),
                linearShape(err, op.getInput().getType(),
                            op.getWeight().getType(), typeOrNull(op.getBias()),
                            shape))

SEG_SHAPE_HOOKS(AddOp, op.getLhs().getType(),
                broadcastShape(err, op.getLhs().getType(),
                               op.getRhs().getType(), shape))

SEG_SHAPE_HOOKS(MulOp, op.getLhs().getType(),
                broadcastShape(err, op.getLhs().getType(),
                               op.getRhs().getType(), shape))

SEG_SHAPE_HOOKS(MaxPool2dOp, op.getInput().getType(),
                maxPool2dShape(err, op.getInput().getType(), op.getKernel(),
                               op.getStride(), op.getPadding(),
                               op.getDilation(), op.getCeilMode(), shape))

SEG_SHAPE_HOOKS(UpsampleBilinearOp, op.getInput().getType(),
                upsampleShape(err, op.getInput().getType(), op.getSize(),
                              shape))

SEG_SHAPE_HOOKS(UpsampleNearestOp, op.getInput().getType(),
                upsampleShape(err, op.getInput().getType(), op.getSize(),
                              shape))

SEG_SHAPE_HOOKS(ConcatOp, op.getInputs().front().getType(),
                concatShape(err, op.getInputs().getTypes(),
                            op.getDimAttr().getInt(), shape))

SEG_SHAPE_HOOKS(SliceOp, op.getInput().getType(),
                sliceShape(err, op.getInput().getType(), op.getStart(),
                           op.getSize(), op.getStep(), shape))

SEG_SHAPE_HOOKS(PadOp, op.getInput().getType(),
                padShape(err, op.getInput().getType(), op.getLow(),
                         op.getHigh(), shape))

SEG_SHAPE_HOOKS(RollOp, op.getInput().getType(),
                rollShape(err, op.getInput().getType(), op.getShifts(),
                          op.getDims(), shape))

SEG_SHAPE_HOOKS(PermuteOp, op.getInput().getType(),
                permuteShape(err, op.getInput().getType(), op.getDims(), shape))

SEG_SHAPE_HOOKS(ChannelShiftOp, op.getInput().getType(),
                channelShiftShape(err, op.getInput().getType(),
                                  op.getOffsetsH(), op.getOffsetsW(), shape))

SEG_SHAPE_HOOKS(ShiftOp, op.getInput().getType(),
                shiftShape(err, op.getInput().getType(),
                           op.getGroupDimAttr().getInt(), op.getDims(),
                           op.getOffsets(), shape))

SEG_SHAPE_HOOKS(FusedConv2dOp, op.getInput().getType(),
                fusedConv2dShape(FusedConv2dOp::Adaptor(op), err, shape))

SEG_SHAPE_HOOKS(DeformConv2dOp, op.getInput().getType(),
                deformConv2dShape(DeformConv2dOp::Adaptor(op), err, shape))

#undef SEG_SHAPE_HOOKS

//===----------------------------------------------------------------------===//
// FoldBatchNormOp
//===----------------------------------------------------------------------===//

namespace {
LogicalResult checkFoldBatchNorm(const ShapeError &err, Type weight, Type bias,
                                 TypeRange stats, double epsilon) {
  auto w = cast<RankedTensorType>(weight);
  if (w.getRank() < 1)
    return err("expected 'weight' of rank 1 or more");
  if (!(epsilon > 0.0))
    return err("expected a positive 'epsilon', got ", epsilon);
  int64_t channels = w.getDimSize(0);
  if (bias && failed(checkVector(err, "bias", bias, channels)))
    return failure();
  const char *names[] = {"mean", "var", "gamma", "beta"};
  for (auto [name, type] : llvm::zip_equal(names, stats))
    if (failed(checkVector(err, name, type, channels)))
      return failure();
  return checkElementTypes(err, weight,
                           {{"bias", bias},
                            {"mean", stats[0]},
                            {"var", stats[1]},
                            {"gamma", stats[2]},
                            {"beta", stats[3]}});
}
} // namespace

LogicalResult FoldBatchNormOp::verify() {
  auto emit = [&]() { return emitOpError(); };
  Type bias = getBias() ? getBias().getType() : Type();
  if (failed(checkFoldBatchNorm(
          ShapeError(emit), getWeight().getType(), bias,
          TypeRange{getMean().getType(), getVar().getType(),
                    getGamma().getType(), getBeta().getType()},
          getEpsilon().convertToDouble())))
    return failure();
  if (getNewWeight().getType() != getWeight().getType() ||
      getNewBias().getType() != getMean().getType())
    return emitOpError("expected results of the weight's and the mean's types");
  return success();
}

LogicalResult FoldBatchNormOp::inferReturnTypes(
    MLIRContext *, std::optional<Location>, ValueRange operands, DictionaryAttr,
    OpaqueProperties, RegionRange, SmallVectorImpl<Type> &inferred) {
  // Operands: weight, [bias], mean, var, gamma, beta.
  if (operands.size() < 5)
    return failure();
  inferred.push_back(operands.front().getType());
  inferred.push_back(operands[operands.size() - 4].getType());
  return success();
}

//===----------------------------------------------------------------------===//
// ShiftOffsetsOp
//===----------------------------------------------------------------------===//

LogicalResult ShiftOffsetsOp::verify() {
  auto emit = [&]() { return emitOpError(); };
  ShapeError err(emit);
  if (failed(checkArray(err, "input_size", getInputSize(), 2, 1)) ||
      failed(checkArray(err, "kernel", getKernel(), 2, 1)) ||
      failed(checkArray(err, "stride", getStride(), 2, 1)) ||
      failed(checkArray(err, "padding", getPadding(), 2, 0)) ||
      failed(checkArray(err, "dilation", getDilation(), 2, 1)))
    return failure();
  size_t channels = std::max(getOffsetsH().size(), getOffsetsW().size());
  if (channels == 0)
    return emitOpError("expected per-channel offsets along H or W");
  for (ArrayRef<int64_t> offsets : {getOffsetsH(), getOffsetsW()})
    if (!offsets.empty() && offsets.size() != channels)
      return emitOpError("expected 'offsets_h' and 'offsets_w' of the same "
                         "length when both are given");
  FailureOr<int64_t> taps =
      narrowDim(err, Wide(getKernel()[0]) * getKernel()[1], "the kernel size");
  if (failed(taps))
    return failure();
  FailureOr<int64_t> offsetChannels =
      narrowDim(err, 2 * Wide(channels) * *taps, "the offset channel count");
  if (failed(offsetChannels))
    return failure();
  SmallVector<int64_t> shape = {1, *offsetChannels};
  for (int i = 0; i < 2; ++i) {
    Wide out = windowOutSize(getInputSize()[i], getKernel()[i], getStride()[i],
                             getPadding()[i], getDilation()[i]);
    if (out < 1)
      return emitOpError("the kernel does not fit the padded input");
    FailureOr<int64_t> size = narrowDim(err, out, "the output size");
    if (failed(size))
      return failure();
    shape.push_back(*size);
  }
  if (getType().getShape() != ArrayRef<int64_t>(shape))
    return emitOpError("expected result shape ")
           << fmt(shape) << ", got " << fmt(getType().getShape());
  return success();
}

SmallVector<float> ShiftOffsetsOp::computeOffsets() {
  ArrayRef<int64_t> dh = getOffsetsH(), dw = getOffsetsW();
  int64_t channels = std::max(dh.size(), dw.size());
  int64_t height = getInputSize()[0], width = getInputSize()[1];
  int64_t kh = getKernel()[0], kw = getKernel()[1];
  ArrayRef<int64_t> shape = getType().getShape();
  int64_t outH = shape[2], outW = shape[3];
  bool cyclic = getMode() == ShiftMode::Cyclic;
  SmallVector<float> result(getType().getNumElements());
  auto at = [&](int64_t ch, int64_t y, int64_t x) -> float & {
    return result[(ch * outH + y) * outW + x];
  };
  for (int64_t c = 0; c < channels; ++c) {
    int64_t sh = dh.empty() ? 0 : dh[c], sw = dw.empty() ? 0 : dw[c];
    for (int64_t i = 0; i < kh; ++i) {
      for (int64_t j = 0; j < kw; ++j) {
        int64_t tap = 2 * ((c * kh + i) * kw + j);
        for (int64_t y = 0; y < outH; ++y) {
          for (int64_t x = 0; x < outW; ++x) {
            int64_t py =
                y * getStride()[0] - getPadding()[0] + i * getDilation()[0];
            int64_t px =
                x * getStride()[1] - getPadding()[1] + j * getDilation()[1];
            int64_t sy = py - sh, sx = px - sw;
            if (cyclic) {
              sy = ((sy % height) + height) % height;
              sx = ((sx % width) + width) % width;
            }
            bool inside = py >= 0 && py < height && px >= 0 && px < width &&
                          sy >= 0 && sy < height && sx >= 0 && sx < width;
            // Outside: sample at (-2, -2), where bilinear sampling reads 0.
            at(tap, y, x) = static_cast<float>((inside ? sy : -2) - py);
            at(tap + 1, y, x) = static_cast<float>((inside ? sx : -2) - px);
          }
        }
      }
    }
  }
  return result;
}

//===----------------------------------------------------------------------===//
// ParamOp
//===----------------------------------------------------------------------===//

LogicalResult ParamOp::verify() {
  if (getName().empty())
    return emitOpError("expected a non-empty parameter name");
  return success();
}

//===----------------------------------------------------------------------===//
// ReshapeOp
//===----------------------------------------------------------------------===//

/// The element count of `shape`, or nullopt when it overflows int64 (where
/// ShapedType::getNumElements would wrap).
static std::optional<int64_t> elementCount(ArrayRef<int64_t> shape) {
  if (llvm::is_contained(shape, 0))
    return 0;
  std::optional<int64_t> count = 1;
  for (int64_t dim : shape)
    if (!(count = llvm::checkedMul(*count, dim)))
      return std::nullopt;
  return count;
}

LogicalResult ReshapeOp::verify() {
  auto in = cast<RankedTensorType>(getInput().getType());
  auto out = cast<RankedTensorType>(getType());
  std::optional<int64_t> inCount = elementCount(in.getShape());
  std::optional<int64_t> outCount = elementCount(out.getShape());
  if (!inCount || !outCount)
    return emitOpError("the element count overflows int64");
  if (*inCount != *outCount)
    return emitOpError("expected the same number of elements, got ")
           << *inCount << " and " << *outCount;
  return success();
}

#define GET_OP_CLASSES
#include "gpuopt/Dialect/Seg/IR/SegOps.cpp.inc"
