//===- Interpreter.cpp - LibTorch reference backend ----------------------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// Each seg op maps to the ATen call it is defined by. This translation unit is
// the only one that includes ATen and the only one built with exceptions: ATen
// reports errors by throwing c10::Error, which is caught here and turned into
// a located diagnostic.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Reference/Interpreter.h"

#include "gpuopt/Dialect/Seg/IR/SegOps.h"
#include "gpuopt/Dialect/Seg/Transforms/LoadTime.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"

#include <ATen/ATen.h>
#include <c10/util/Exception.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <optional>

using namespace mlir;

namespace runtime = ::gpuopt::runtime;
using runtime::DType;
using runtime::HostTensor;

namespace {

/// Views an MLIR integer list as an ATen one.
c10::IntArrayRef aten(ArrayRef<int64_t> values) {
  return c10::IntArrayRef(values.data(), values.size());
}

std::vector<int64_t> toVector(ArrayRef<int64_t> values) {
  return std::vector<int64_t>(values.begin(), values.end());
}

/// ATen dtype of an MLIR float element type.
FailureOr<at::ScalarType> scalarTypeOf(Type type) {
  if (type.isF32())
    return at::kFloat;
  if (type.isF16())
    return at::kHalf;
  if (type.isBF16())
    return at::kBFloat16;
  if (type.isF64())
    return at::kDouble;
  return failure();
}

/// The weights-file dtype of an MLIR float element type.
std::optional<DType> dtypeOf(Type type) {
  if (type.isF32())
    return DType::F32;
  if (type.isF16())
    return DType::F16;
  if (type.isBF16())
    return DType::BF16;
  if (type.isF64())
    return DType::F64;
  return std::nullopt;
}

at::ScalarType scalarTypeOf(DType dtype) {
  switch (dtype) {
  case DType::F16:
    return at::kHalf;
  case DType::BF16:
    return at::kBFloat16;
  case DType::F32:
    return at::kFloat;
  case DType::F64:
    return at::kDouble;
  case DType::I8:
    return at::kChar;
  case DType::I16:
    return at::kShort;
  case DType::I32:
    return at::kInt;
  case DType::I64:
    return at::kLong;
  case DType::U8:
    return at::kByte;
  case DType::BOOL:
    return at::kBool;
  }
  return at::kFloat;
}

/// An ATen tensor over the bytes of `t`, which must outlive it. Not copying
/// keeps a mapped weights file at its size in memory; the evaluator only
/// reads its operands (no in-place ATen op), so the bytes are never written.
at::Tensor toAten(const HostTensor &t) {
  at::TensorOptions options = at::TensorOptions().dtype(scalarTypeOf(t.dtype));
  if (t.data.empty())
    return at::empty(t.shape, options);
  return at::from_blob(const_cast<uint8_t *>(t.data.data()), t.shape, options);
}

/// Copies an ATen tensor into a float32 host tensor.
HostTensor toHost(const at::Tensor &t) {
  at::Tensor c = t.to(at::kFloat).contiguous();
  HostTensor out;
  out.dtype = DType::F32;
  out.shape = c.sizes().vec();
  out.data.resize(c.numel() * sizeof(float));
  if (c.numel())
    std::memcpy(out.data.data(), c.data_ptr(), out.data.size());
  return out;
}

/// Shifts every index g of dim `groupDim` of `x` by `offsets[g]` along
/// `axis`: out[.., g, .., i, ..] = x[.., g, .., i - offsets[g], ..], wrapping
/// when `cyclic`, reading 0 outside the tensor otherwise. No offsets: `x`
/// itself.
at::Tensor shiftAxis(const at::Tensor &x, ArrayRef<int64_t> offsets,
                     int64_t axis, bool cyclic, int64_t groupDim = 1) {
  if (offsets.empty() || x.numel() == 0)
    return x;
  int64_t groups = x.size(groupDim), length = x.size(axis);
  at::Tensor index = at::empty({groups, length}, at::kLong);
  at::Tensor valid = at::empty({groups, length}, at::kBool);
  auto idx = index.accessor<int64_t, 2>();
  auto ok = valid.accessor<bool, 2>();
  for (int64_t g = 0; g < groups; ++g) {
    // In [-L, L] (or reduced mod L): i - offset cannot overflow.
    int64_t offset = cyclic ? offsets[g] % length
                            : std::clamp<int64_t>(offsets[g], -length, length);
    for (int64_t i = 0; i < length; ++i) {
      int64_t src = i - offset;
      if (cyclic)
        src = ((src % length) + length) % length;
      ok[g][i] = src >= 0 && src < length;
      idx[g][i] = std::clamp<int64_t>(src, 0, length - 1);
    }
  }
  if (groupDim > axis) {
    index = index.t().contiguous();
    valid = valid.t().contiguous();
  }
  std::vector<int64_t> view(x.dim(), 1);
  view[groupDim] = groups;
  view[axis] = length;
  at::Tensor gathered =
      x.gather(axis, index.view(view).expand(x.sizes()).contiguous());
  if (cyclic)
    return gathered;
  return at::where(valid.view(view).expand(x.sizes()), gathered,
                   at::zeros({}, x.options()));
}

/// The reference semantics of seg.shift: one gather per shifted dim (a
/// zero-filled shift reads 0 where any source index is outside).
at::Tensor groupShift(mlir::gpuopt::seg::ShiftOp op, at::Tensor x) {
  bool cyclic = op.getMode() == mlir::gpuopt::seg::ShiftMode::Cyclic;
  int64_t groupDim = op.getGroupDim();
  int64_t groups = x.size(groupDim);
  for (auto [k, dim] : llvm::enumerate(op.getDims()))
    x = shiftAxis(x, op.getOffsets().slice(k * groups, groups), dim, cyclic,
                  groupDim);
  return x;
}

/// The reference semantics of seg.channel_shift.
at::Tensor channelShift(const at::Tensor &x, ArrayRef<int64_t> offsetsH,
                        ArrayRef<int64_t> offsetsW,
                        mlir::gpuopt::seg::ShiftMode mode) {
  bool cyclic = mode == mlir::gpuopt::seg::ShiftMode::Cyclic;
  return shiftAxis(shiftAxis(x, offsetsH, 2, cyclic), offsetsW, 3, cyclic);
}

/// The reference semantics of seg.fused_conv2d's `frame_shift`: the
/// (N/T, T, C, H, W) view of `x` shifted along T, zero-filled, channel c by
/// offsets[c] (as seg.shift group_dim = 2 dims = [1]), read back as NCHW.
at::Tensor frameShift(const at::Tensor &x,
                      mlir::gpuopt::seg::FrameShiftAttr frameShift) {
  if (!frameShift || x.numel() == 0)
    return x;
  int64_t frames = frameShift.getFrames();
  at::Tensor view =
      x.reshape({x.size(0) / frames, frames, x.size(1), x.size(2), x.size(3)});
  return shiftAxis(view, frameShift.getOffsets(), /*axis=*/1,
                   /*cyclic=*/false, /*groupDim=*/2)
      .reshape(x.sizes());
}

/// `activation` (of seg.fused_conv2d, seg.relu, seg.gelu) applied to `y`.
at::Tensor activate(const at::Tensor &y,
                    mlir::gpuopt::seg::Activation activation) {
  using mlir::gpuopt::seg::Activation;
  switch (activation) {
  case Activation::None:
    return y;
  case Activation::Relu:
    return at::relu(y);
  case Activation::Gelu:
    return at::gelu(y, "none");
  case Activation::GeluTanh:
    return at::gelu(y, "tanh");
  }
  llvm_unreachable("unknown seg::Activation");
}

/// The reference semantics of seg.shift_offsets (see its description).
at::Tensor shiftOffsets(mlir::gpuopt::seg::ShiftOffsetsOp op) {
  SmallVector<float> values = op.computeOffsets();
  auto shape = cast<RankedTensorType>(op.getType()).getShape();
  return at::from_blob(values.data(), aten(shape), at::kFloat).clone();
}

/// Bilinear samples of `input` (N, C, H, W) at rows `y` and columns `x`
/// (N, L): (N, C, L). As torchvision: 0 outside (-1, H) x (-1, W), a corner
/// outside the map reads 0 (times its weight: so a NaN/Inf there cannot leak
/// in), and a NaN coordinate gives NaN weights, hence a NaN sample (its
/// index is clamped from 0: casting NaN to an integer is undefined).
at::Tensor bilinearSample(const at::Tensor &input, const at::Tensor &y,
                          const at::Tensor &x) {
  int64_t height = input.size(2), width = input.size(3);
  at::Tensor flat = input.reshape({input.size(0), input.size(1), -1});
  at::Tensor y0 = at::floor(y), x0 = at::floor(x);
  at::Tensor ly = y - y0, lx = x - x0;
  at::Tensor zero = at::zeros({}, input.options());
  at::Tensor result =
      at::zeros({input.size(0), input.size(1), y.size(1)}, input.options());
  for (int dy = 0; dy < 2; ++dy) {
    for (int dx = 0; dx < 2; ++dx) {
      at::Tensor yi = y0 + dy, xi = x0 + dx;
      at::Tensor weight = (dy ? ly : 1 - ly) * (dx ? lx : 1 - lx);
      at::Tensor valid = (yi >= 0) & (yi < height) & (xi >= 0) & (xi < width);
      auto clampIndex = [](const at::Tensor &v, int64_t size) {
        return at::nan_to_num(v, 0.0).clamp(0, size - 1);
      };
      at::Tensor index =
          (clampIndex(yi, height) * width + clampIndex(xi, width))
              .to(at::kLong)
              .unsqueeze(1)
              .expand({-1, input.size(1), -1});
      at::Tensor v = at::where(valid.unsqueeze(1), flat.gather(2, index), zero);
      result = result + v * weight.unsqueeze(1);
    }
  }
  at::Tensor outside = (y <= -1) | (y >= height) | (x <= -1) | (x >= width);
  return at::where(outside.unsqueeze(1), zero, result);
}

/// The reference semantics of seg.deform_conv2d (torchvision's
/// deform_conv2d without mask): bilinear im2col, then a grouped matmul.
at::Tensor deformConv2d(const at::Tensor &input, const at::Tensor &offset,
                        const at::Tensor &weight,
                        const std::optional<at::Tensor> &bias,
                        ArrayRef<int64_t> stride, ArrayRef<int64_t> padding,
                        ArrayRef<int64_t> dilation, int64_t groups,
                        int64_t offsetGroups) {
  int64_t n = input.size(0), channels = input.size(1);
  int64_t kh = weight.size(2), kw = weight.size(3);
  int64_t outH = offset.size(2), outW = offset.size(3), taps = kh * kw;
  at::Tensor off = offset.expand({n, -1, -1, -1}).reshape({n, -1, outH * outW});
  at::Tensor base = at::arange(outH * outW, input.options());
  at::Tensor baseY = at::floor(base / outW) * stride[0] - padding[0];
  at::Tensor baseX = at::remainder(base, outW) * stride[1] - padding[1];
  int64_t perGroup = channels / offsetGroups;
  // columns[n][c][tap][l]
  std::vector<at::Tensor> groupsCols;
  for (int64_t g = 0; g < offsetGroups; ++g) {
    at::Tensor part = input.narrow(1, g * perGroup, perGroup);
    std::vector<at::Tensor> tapCols;
    for (int64_t i = 0; i < kh; ++i) {
      for (int64_t j = 0; j < kw; ++j) {
        int64_t k = 2 * (g * taps + i * kw + j);
        at::Tensor y = baseY + i * dilation[0] + off.select(1, k);
        at::Tensor x = baseX + j * dilation[1] + off.select(1, k + 1);
        tapCols.push_back(bilinearSample(part, y, x));
      }
    }
    groupsCols.push_back(at::stack(tapCols, 2)); // (N, C/G, taps, L)
  }
  at::Tensor cols = at::cat(groupsCols, 1); // (N, C, taps, L)
  int64_t outC = weight.size(0);
  at::Tensor colsG =
      cols.reshape({n, groups, (channels / groups) * taps, outH * outW});
  at::Tensor w = weight.reshape({groups, outC / groups, -1});
  at::Tensor out =
      at::einsum("gok,ngkl->ngol", {w, colsG}).reshape({n, outC, outH, outW});
  if (bias)
    out = out + bias->view({1, -1, 1, 1});
  return out;
}

/// The op-by-op evaluator. Holds the value of every SSA value computed so far.
class Evaluator {
public:
  explicit Evaluator(const runtime::SafetensorsFile &weights)
      : weights(weights) {}

  /// Evaluates `op`, recording its results. Returns failure after reporting a
  /// diagnostic at `op`.
  LogicalResult run(Operation *op);

  void bind(Value v, at::Tensor t) { values[v] = std::move(t); }
  const at::Tensor &get(Value v) { return values.find(v)->second; }

private:
  /// Computes the result of a single-result seg op.
  FailureOr<at::Tensor> compute(Operation *op);
  FailureOr<at::Tensor> param(mlir::gpuopt::seg::ParamOp op);
  LogicalResult foldBatchNorm(mlir::gpuopt::seg::FoldBatchNormOp op);

  std::optional<at::Tensor> optional(Value v) {
    if (!v)
      return std::nullopt;
    return get(v);
  }

  const runtime::SafetensorsFile &weights;
  llvm::DenseMap<Value, at::Tensor> values;
};

FailureOr<at::Tensor> Evaluator::param(mlir::gpuopt::seg::ParamOp op) {
  auto it = weights.tensors.find(op.getName().str());
  if (it == weights.tensors.end())
    return op.emitError("parameter '")
           << op.getName() << "' is not in the weights file";
  auto type = cast<RankedTensorType>(op.getType());
  // Like the CPU backends, the reference backend binds a weight only of the
  // graph's element type: converting F16/BF16/F64 here would make a run that
  // every other backend refuses.
  std::optional<runtime::DType> expected = dtypeOf(type.getElementType());
  if (!expected || it->second.dtype != *expected)
    return op.emitError("parameter '")
           << op.getName() << "' is " << runtime::dtypeName(it->second.dtype)
           << " in the weights file, but the graph expects " << type
           << "; gpuopt does not convert weights";
  if (it->second.shape != toVector(type.getShape()))
    return op.emitError("parameter '")
           << op.getName() << "' has shape "
           << runtime::formatShape(it->second.shape)
           << " in the weights file, but the graph expects " << type;
  at::Tensor t = toAten(it->second);
  return t.to(*scalarTypeOf(type.getElementType()));
}

LogicalResult Evaluator::foldBatchNorm(mlir::gpuopt::seg::FoldBatchNormOp op) {
  try {
    at::Tensor scale =
        get(op.getGamma()) /
        at::sqrt(get(op.getVar()) + op.getEpsilon().convertToDouble());
    const at::Tensor &weight = get(op.getWeight());
    std::vector<int64_t> view(weight.dim(), 1);
    view[0] = -1;
    at::Tensor bias =
        op.getBias() ? get(op.getBias()) : at::zeros_like(get(op.getMean()));
    bind(op.getNewWeight(), weight * scale.view(view));
    bind(op.getNewBias(),
         (bias - get(op.getMean())) * scale + get(op.getBeta()));
  } catch (const std::exception &e) {
    return op.emitError("reference backend: ") << e.what();
  }
  return success();
}

FailureOr<at::Tensor> Evaluator::compute(Operation *op) {
  using namespace mlir::gpuopt::seg;
  return llvm::TypeSwitch<Operation *, FailureOr<at::Tensor>>(op)
      .Case([&](ParamOp o) { return param(o); })
      .Case([&](Conv2dOp o) -> FailureOr<at::Tensor> {
        return at::conv2d(get(o.getInput()), get(o.getWeight()),
                          optional(o.getBias()), aten(o.getStride()),
                          aten(o.getPadding()), aten(o.getDilation()),
                          o.getGroupsAttr().getInt());
      })
      .Case([&](ChannelShiftOp o) -> FailureOr<at::Tensor> {
        return channelShift(get(o.getInput()), o.getOffsetsH(), o.getOffsetsW(),
                            o.getMode());
      })
      .Case([&](ShiftOp o) -> FailureOr<at::Tensor> {
        return groupShift(o, get(o.getInput()));
      })
      .Case([&](FusedConv2dOp o) -> FailureOr<at::Tensor> {
        at::Tensor shifted =
            channelShift(frameShift(get(o.getInput()), o.getFrameShiftAttr()),
                         o.getOffsetsH(), o.getOffsetsW(), o.getMode());
        at::Tensor y =
            at::conv2d(shifted, get(o.getWeight()), optional(o.getBias()),
                       aten(o.getStride()), aten(o.getPadding()),
                       aten(o.getDilation()), o.getGroupsAttr().getInt());
        y = activate(y, o.getActivation());
        if (o.getResidual())
          y = y + get(o.getResidual());
        return y;
      })
      .Case([&](ShiftOffsetsOp o) -> FailureOr<at::Tensor> {
        return shiftOffsets(o);
      })
      .Case([&](DeformConv2dOp o) -> FailureOr<at::Tensor> {
        return deformConv2d(get(o.getInput()), get(o.getOffset()),
                            get(o.getWeight()), optional(o.getBias()),
                            o.getStride(), o.getPadding(), o.getDilation(),
                            o.getGroupsAttr().getInt(),
                            o.getOffsetGroupsAttr().getInt());
      })
      .Case([&](ConvTranspose2dOp o) -> FailureOr<at::Tensor> {
        return at::conv_transpose2d(
            get(o.getInput()), get(o.getWeight()), optional(o.getBias()),
            aten(o.getStride()), aten(o.getPadding()),
            aten(o.getOutputPadding()), o.getGroupsAttr().getInt(),
            aten(o.getDilation()));
      })
      .Case([&](BatchNormOp o) -> FailureOr<at::Tensor> {
        return at::batch_norm(
            get(o.getInput()), get(o.getWeight()), get(o.getBias()),
            get(o.getMean()), get(o.getVar()), /*training=*/false,
            /*momentum=*/0.0, o.getEpsilon().convertToDouble(),
            /*cudnn_enabled=*/false);
      })
      .Case([&](LayerNormOp o) -> FailureOr<at::Tensor> {
        const at::Tensor &w = get(o.getWeight());
        double eps = o.getEpsilon().convertToDouble();
        if (std::optional<uint64_t> axis = o.getAxis()) {
          // The definition: the axis moved last, normalized, moved back.
          auto dim = static_cast<int64_t>(*axis);
          at::Tensor last = get(o.getInput()).movedim(dim, -1);
          return at::layer_norm(last, w.sizes(), w, get(o.getBias()), eps)
              .movedim(-1, dim)
              .contiguous();
        }
        return at::layer_norm(get(o.getInput()), w.sizes(), w, get(o.getBias()),
                              eps);
      })
      .Case([&](LinearOp o) -> FailureOr<at::Tensor> {
        return at::linear(get(o.getInput()), get(o.getWeight()),
                          optional(o.getBias()));
      })
      .Case([&](ReluOp o) -> FailureOr<at::Tensor> {
        return at::relu(get(o.getInput()));
      })
      .Case([&](SigmoidOp o) -> FailureOr<at::Tensor> {
        return at::sigmoid(get(o.getInput()));
      })
      .Case([&](GeluOp o) -> FailureOr<at::Tensor> {
        return activate(get(o.getInput()), geluActivation(o.getApproximate()));
      })
      .Case([&](AddOp o) -> FailureOr<at::Tensor> {
        return at::add(get(o.getLhs()), get(o.getRhs()));
      })
      .Case([&](MulOp o) -> FailureOr<at::Tensor> {
        return at::mul(get(o.getLhs()), get(o.getRhs()));
      })
      .Case([&](MaxPool2dOp o) -> FailureOr<at::Tensor> {
        return at::max_pool2d(get(o.getInput()), aten(o.getKernel()),
                              aten(o.getStride()), aten(o.getPadding()),
                              aten(o.getDilation()), o.getCeilMode());
      })
      .Case([&](UpsampleBilinearOp o) -> FailureOr<at::Tensor> {
        return at::upsample_bilinear2d(get(o.getInput()), aten(o.getSize()),
                                       o.getAlignCorners());
      })
      .Case([&](UpsampleNearestOp o) -> FailureOr<at::Tensor> {
        return at::upsample_nearest2d(get(o.getInput()), aten(o.getSize()));
      })
      .Case([&](ConcatOp o) -> FailureOr<at::Tensor> {
        std::vector<at::Tensor> parts;
        for (Value v : o.getInputs())
          parts.push_back(get(v));
        return at::cat(parts, o.getDimAttr().getInt());
      })
      .Case([&](SliceOp o) -> FailureOr<at::Tensor> {
        at::Tensor t = get(o.getInput());
        for (auto [d, start, size, step] :
             llvm::enumerate(o.getStart(), o.getSize(), o.getStep()))
          t = t.slice(d, start, start + (size - 1) * step + 1, step);
        return t.contiguous();
      })
      .Case([&](PadOp o) -> FailureOr<at::Tensor> {
        // constant_pad_nd takes (low, high) pairs from the last dim backwards.
        std::vector<int64_t> pads;
        for (int64_t d = static_cast<int64_t>(o.getLow().size()) - 1; d >= 0;
             --d) {
          pads.push_back(o.getLow()[d]);
          pads.push_back(o.getHigh()[d]);
        }
        return at::constant_pad_nd(get(o.getInput()), pads,
                                   o.getValue().convertToDouble());
      })
      .Case([&](RollOp o) -> FailureOr<at::Tensor> {
        return at::roll(get(o.getInput()), aten(o.getShifts()),
                        aten(o.getDims()));
      })
      .Case([&](ReshapeOp o) -> FailureOr<at::Tensor> {
        return get(o.getInput())
            .reshape(aten(cast<RankedTensorType>(o.getType()).getShape()));
      })
      .Case([&](PermuteOp o) -> FailureOr<at::Tensor> {
        return get(o.getInput()).permute(aten(o.getDims())).contiguous();
      })
      .Default([&](Operation *other) -> FailureOr<at::Tensor> {
        return other->emitError("the reference backend cannot execute '")
               << other->getName() << "'";
      });
}

LogicalResult Evaluator::run(Operation *op) {
  if (auto fold = dyn_cast<mlir::gpuopt::seg::FoldBatchNormOp>(op))
    return foldBatchNorm(fold);
  if (op->getNumResults() != 1)
    return op->emitError("the reference backend cannot execute '")
           << op->getName() << "'";
  FailureOr<at::Tensor> result = failure();
  try {
    result = compute(op);
  } catch (const c10::Error &e) {
    return op->emitError("reference backend: ATen failed: ")
           << e.what_without_backtrace();
  } catch (const std::exception &e) {
    return op->emitError("reference backend: ") << e.what();
  }
  if (failed(result))
    return failure();
  // The verifier computed the result type from the same PyTorch semantics; a
  // disagreement is a bug in gpuopt, reported rather than propagated.
  auto type = cast<RankedTensorType>(op->getResult(0).getType());
  if (result->sizes().vec() != toVector(type.getShape()))
    return op->emitError("internal error: the reference result has shape ")
           << runtime::formatShape(result->sizes().vec())
           << " but the op declares " << type;
  bind(op->getResult(0), *result);
  return success();
}

} // namespace

LogicalResult mlir::gpuopt::reference::runReference(
    func::FuncOp func, const runtime::SafetensorsFile &weights,
    ArrayRef<HostTensor> inputs, SmallVectorImpl<HostTensor> &outputs,
    const RunOptions &options) {
  if (!func.getBody().hasOneBlock())
    return func.emitError("the reference backend needs a function with a "
                          "single block");
  FunctionType fnType = func.getFunctionType();
  if (inputs.size() != fnType.getNumInputs())
    return func.emitError("@")
           << func.getSymName() << " takes " << fnType.getNumInputs()
           << " input(s), " << inputs.size() << " given";
  for (auto [i, arg] : llvm::enumerate(func.getArguments())) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type || !type.hasStaticShape() ||
        failed(scalarTypeOf(type.getElementType())))
      return func.emitError("argument ")
             << i << " has type " << arg.getType()
             << "; the reference backend takes statically shaped float "
                "tensors";
    if (inputs[i].shape != toVector(type.getShape()))
      return func.emitError("input ")
             << i << " has shape " << runtime::formatShape(inputs[i].shape)
             << ", but @" << func.getSymName() << " expects " << type;
  }

  // Load-time ops (LoadTime.h, the classification --seg-split-load-time
  // uses): they run once, before any inference.
  Block &body = func.getBody().front();
  seg::LoadTimeSet loadTimeSet(body);
  ArrayRef<Operation *> loadTime = loadTimeSet.getOps();
  SmallVector<Operation *> perRun;
  for (Operation &op : body)
    if (!loadTimeSet.isLoadTime(&op))
      perRun.push_back(&op);

  Evaluator eval(weights);
  auto clock = [] { return std::chrono::steady_clock::now(); };
  auto ms = [](auto d) {
    return std::chrono::duration<double, std::milli>(d).count();
  };
  auto start = clock();
  for (Operation *op : loadTime)
    if (failed(eval.run(op)))
      return failure();
  if (options.loadMs)
    *options.loadMs = ms(clock() - start);

  for (unsigned run = 0; run < std::max(1u, options.runs); ++run) {
    outputs.clear();
    auto runStart = clock();
    for (auto [i, arg] : llvm::enumerate(func.getArguments())) {
      auto type = cast<RankedTensorType>(arg.getType());
      try {
        eval.bind(arg,
                  toAten(inputs[i]).to(*scalarTypeOf(type.getElementType())));
      } catch (const std::exception &e) {
        return func.emitError("reference backend: ") << e.what();
      }
    }
    for (Operation *op : perRun) {
      if (auto ret = dyn_cast<func::ReturnOp>(op)) {
        for (Value v : ret.getOperands()) {
          try {
            outputs.push_back(toHost(eval.get(v)));
          } catch (const std::exception &e) {
            return ret.emitError("reference backend: ") << e.what();
          }
        }
        break;
      }
      if (failed(eval.run(op)))
        return failure();
    }
    if (options.runMs)
      options.runMs->push_back(ms(clock() - runStart));
  }
  return success();
}

SmallVector<std::string> mlir::gpuopt::reference::unusedWeights(
    func::FuncOp func, const runtime::SafetensorsFile &weights) {
  llvm::StringSet<> used;
  func.walk([&](mlir::gpuopt::seg::ParamOp p) { used.insert(p.getName()); });
  SmallVector<std::string> unused;
  for (const auto &[name, tensor] : weights.tensors)
    if (!used.contains(name) && !runtime::isTrainingCounter(name))
      unused.push_back(name);
  return unused;
}
