//===- CostModel.cpp - static cost of a seg graph -------------------------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// Per-op MACs, FLOPs, bytes and kernels (see CostModel.h), and their
// predicted time on a device. The kernel rules are those of PyTorch 2.x on
// CUDA for eager mode and of gpuopt's planned lowering for compiled mode;
// docs/CostModel.md lists them.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Analysis/CostModel.h"
#include "gpuopt/Dialect/Seg/IR/SegOps.h"
#include "gpuopt/Dialect/Seg/Transforms/LoadTime.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <numeric>

using namespace mlir;
using namespace mlir::gpuopt;
using namespace mlir::gpuopt::seg;

//===----------------------------------------------------------------------===//
// Shapes and PyTorch strides
//===----------------------------------------------------------------------===//

namespace {

using Strides = SmallVector<int64_t, 4>;

ArrayRef<int64_t> shapeOf(Value v) {
  auto type = dyn_cast<ShapedType>(v.getType());
  if (!type || !type.hasStaticShape())
    return {};
  return type.getShape();
}

int64_t numel(Value v) {
  auto type = dyn_cast<ShapedType>(v.getType());
  if (!type || !type.hasStaticShape())
    return 0;
  return type.getNumElements();
}

int64_t elementBytes(Value v) {
  auto type = dyn_cast<ShapedType>(v.getType());
  if (!type || !type.getElementType().isIntOrFloat())
    return 0;
  return std::max<int64_t>(1, type.getElementTypeBitWidth() / 8);
}

double bytesOf(Value v) {
  return v ? static_cast<double>(numel(v) * elementBytes(v)) : 0.0;
}

Strides contiguousStrides(ArrayRef<int64_t> shape) {
  Strides strides(shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * std::max<int64_t>(shape[d + 1], 1);
  return strides;
}

/// PyTorch's is_contiguous(): strides of size-1 dims do not matter.
bool isContiguous(ArrayRef<int64_t> shape, ArrayRef<int64_t> strides) {
  int64_t expected = 1;
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    if (shape[d] == 1)
      continue;
    if (strides[d] != expected)
      return false;
    expected *= shape[d];
  }
  return true;
}

/// Non-overlapping and dense: a permutation of a contiguous layout. PyTorch's
/// elementwise kernels then give their result the same strides.
bool isDense(ArrayRef<int64_t> shape, ArrayRef<int64_t> strides) {
  SmallVector<size_t> dims;
  for (size_t d = 0; d < shape.size(); ++d)
    if (shape[d] != 1)
      dims.push_back(d);
  llvm::sort(dims, [&](size_t a, size_t b) { return strides[a] < strides[b]; });
  int64_t expected = 1;
  for (size_t d : dims) {
    if (strides[d] != expected)
      return false;
    expected *= shape[d];
  }
  return true;
}

/// PyTorch's computeStride(): the strides of `newShape` as a view of a
/// tensor of `oldShape`/`oldStrides`, or nothing when reshape must copy.
std::optional<Strides> viewStrides(ArrayRef<int64_t> oldShape,
                                   ArrayRef<int64_t> oldStrides,
                                   ArrayRef<int64_t> newShape) {
  if (oldShape.empty())
    return contiguousStrides(newShape);
  Strides newStrides(newShape.size(), 1);
  int64_t viewD = static_cast<int64_t>(newShape.size()) - 1;
  int64_t chunkBaseStride = oldStrides.back();
  int64_t tensorNumel = 1;
  int64_t viewNumel = 1;
  for (int64_t tensorD = static_cast<int64_t>(oldShape.size()) - 1;
       tensorD >= 0; --tensorD) {
    tensorNumel *= oldShape[tensorD];
    bool chunkEnd = tensorD == 0 ||
                    (oldShape[tensorD - 1] != 1 &&
                     oldStrides[tensorD - 1] != tensorNumel * chunkBaseStride);
    if (!chunkEnd)
      continue;
    while (viewD >= 0 && (viewNumel < tensorNumel || newShape[viewD] == 1)) {
      newStrides[viewD] = viewNumel * chunkBaseStride;
      viewNumel *= newShape[viewD];
      --viewD;
    }
    if (viewNumel != tensorNumel)
      return std::nullopt;
    if (tensorD > 0) {
      chunkBaseStride = oldStrides[tensorD - 1];
      tensorNumel = 1;
      viewNumel = 1;
    }
  }
  if (viewD != -1)
    return std::nullopt;
  return newStrides;
}

std::string precisionOf(Type type) {
  auto shaped = dyn_cast<ShapedType>(type);
  Type element = shaped ? shaped.getElementType() : type;
  if (element.isF16())
    return "fp16";
  if (element.isBF16())
    return "bf16";
  if (element.isF64())
    return "fp64";
  return "fp32";
}

KernelCost kernel(double flops, double bytes,
                  std::optional<GemmShape> gemm = std::nullopt) {
  return KernelCost{flops, bytes, gemm};
}

/// Elementwise ops that linalg's elementwise fusion merges in compiled code.
bool isElementwise(Operation *op) {
  return isa<ReluOp, GeluOp, SigmoidOp, AddOp, MulOp, BatchNormOp>(op);
}

//===----------------------------------------------------------------------===//
// The walk
//===----------------------------------------------------------------------===//

/// Computes the OpCost of every op in program order, tracking the PyTorch
/// strides of the values that are views. Which ops are load-time is decided
/// by LoadTime.h (the split --seg-split-load-time and every backend make).
class CostBuilder {
public:
  OpCost build(Operation *op);

private:
  /// The load-time classification of the block holding `v` or `op`.
  const seg::LoadTimeSet &loadTimeSetOf(Block *block) {
    std::unique_ptr<seg::LoadTimeSet> &set = loadTimeSets[block];
    if (!set)
      set = std::make_unique<seg::LoadTimeSet>(*block);
    return *set;
  }
  bool isLoadTime(Value v) {
    Block *block = v.getParentBlock();
    return block && loadTimeSetOf(block).isLoadTime(v);
  }
  bool isLoadTime(Operation *op) {
    Block *block = op->getBlock();
    return block && loadTimeSetOf(block).isLoadTime(op);
  }

  /// The PyTorch strides of `v` (contiguous unless `v` is a strided view).
  Strides stridesOf(Value v) const {
    auto it = strides.find(v);
    return it != strides.end() ? it->second : contiguousStrides(shapeOf(v));
  }
  bool isContiguousValue(Value v) const {
    return isContiguous(shapeOf(v), stridesOf(v));
  }
  void setStrides(Value v, Strides s) {
    if (!isContiguous(shapeOf(v), s))
      strides[v] = std::move(s);
  }

  /// Eager PyTorch library kernels (cuDNN, pooling, normalization, roll,
  /// pad) read contiguous memory: a strided input costs a copy first. A
  /// strided channel slice is the slice of a map that the model made
  /// contiguous once before splitting it (the exporter drops `.contiguous()`
  /// calls): that map is copied once, at its first such consumer.
  void addContiguousCopy(Value input, OpCost &cost);

  /// One cuDNN/native convolution in eager mode: the convolution kernel and,
  /// unless it is depthwise (PyTorch's own kernel adds the bias), cuDNN's
  /// separate bias add.
  void addEagerConv(OpCost &cost, double convFlops, double convBytes,
                    std::optional<GemmShape> gemm, Value bias, Value result,
                    bool depthwise);

  DenseMap<Block *, std::unique_ptr<seg::LoadTimeSet>> loadTimeSets;
  DenseMap<Value, Strides> strides;
  DenseSet<Value> copiedMaps;
};

void CostBuilder::addContiguousCopy(Value input, OpCost &cost) {
  if (isContiguousValue(input))
    return;
  Value root = input;
  while (auto slice = root.getDefiningOp<SliceOp>())
    root = slice.getInput();
  if (root != input && !isContiguousValue(root)) {
    if (copiedMaps.insert(root).second)
      cost.eager.push_back(kernel(0, 2 * bytesOf(root)));
    return;
  }
  cost.eager.push_back(kernel(0, 2 * bytesOf(input)));
}

void CostBuilder::addEagerConv(OpCost &cost, double convFlops, double convBytes,
                               std::optional<GemmShape> gemm, Value bias,
                               Value result, bool depthwise) {
  double outElems = static_cast<double>(numel(result));
  if (bias && depthwise) {
    cost.eager.push_back(
        kernel(convFlops + outElems, convBytes + bytesOf(bias), gemm));
    return;
  }
  cost.eager.push_back(kernel(convFlops, convBytes, gemm));
  if (bias)
    cost.eager.push_back(kernel(outElems, 2 * bytesOf(result) + bytesOf(bias)));
}

/// The implicit GEMM of a convolution over `input` with `weight` (O, C/g,
/// kH, kW) into `result`; none for grouped convolutions with one channel per
/// group (depthwise: a direct, bandwidth-bound kernel).
std::optional<GemmShape> convGemm(Value input, Value weight, Value result,
                                  int64_t groups) {
  ArrayRef<int64_t> in = shapeOf(input), w = shapeOf(weight),
                    out = shapeOf(result);
  if (in.size() != 4 || w.size() != 4 || out.size() != 4 || groups < 1)
    return std::nullopt;
  int64_t cPerGroup = in[1] / groups, oPerGroup = out[1] / groups;
  if (groups > 1 && (cPerGroup == 1 || oPerGroup == 1))
    return std::nullopt;
  return GemmShape{groups, out[0] * out[2] * out[3], oPerGroup,
                   cPerGroup * w[2] * w[3]};
}

/// MACs of a convolution: every output element sums C/g · kH · kW products.
int64_t convMacs(Value input, Value weight, Value result, int64_t groups) {
  ArrayRef<int64_t> in = shapeOf(input), w = shapeOf(weight);
  if (in.size() != 4 || w.size() != 4 || groups < 1)
    return 0;
  return numel(result) * (in[1] / groups) * w[2] * w[3];
}

double activationFlops(Activation activation) {
  switch (activation) {
  case Activation::None:
    return 0;
  case Activation::Relu:
    return 1;
  case Activation::Gelu:
  case Activation::GeluTanh:
    return 8;
  }
  llvm_unreachable("unknown Activation");
}

OpCost CostBuilder::build(Operation *op) {
  OpCost cost;
  cost.op = op;
  if (op->getNumResults() > 0)
    cost.precision = precisionOf(op->getResult(0).getType());
  else
    cost.precision = "fp32";
  for (Value operand : op->getOperands())
    if (isLoadTime(operand))
      cost.params += numel(operand);

  // Computed from parameters only: once per checkpoint.
  if (isLoadTime(op)) {
    cost.loadTime = true;
    cost.params = 0;
    return cost;
  }

  auto oneKernel = [&](double flops, double bytes,
                       std::optional<GemmShape> gemm = std::nullopt) {
    cost.compiled.push_back(kernel(flops, bytes, gemm));
  };
  auto inOutBytes = [&]() {
    double bytes = 0;
    for (Value v : op->getOperands())
      bytes += bytesOf(v);
    for (Value v : op->getResults())
      bytes += bytesOf(v);
    return bytes;
  };

  TypeSwitch<Operation *>(op)
      .Case<Conv2dOp>([&](Conv2dOp conv) {
        int64_t groups = conv.getGroups();
        cost.macs = convMacs(conv.getInput(), conv.getWeight(),
                             conv.getResult(), groups);
        cost.thopMacs = cost.macs;
        double outElems = static_cast<double>(numel(conv.getResult()));
        cost.flops = 2.0 * cost.macs + (conv.getBias() ? outElems : 0);
        auto gemm = convGemm(conv.getInput(), conv.getWeight(),
                             conv.getResult(), groups);
        bool depthwise = groups > 1 && groups == shapeOf(conv.getInput())[1];
        addContiguousCopy(conv.getInput(), cost);
        addEagerConv(cost, 2.0 * cost.macs,
                     bytesOf(conv.getInput()) + bytesOf(conv.getWeight()) +
                         bytesOf(conv.getResult()),
                     gemm, conv.getBias(), conv.getResult(), depthwise);
        oneKernel(cost.flops, inOutBytes(), gemm);
      })
      .Case<FusedConv2dOp>([&](FusedConv2dOp conv) {
        int64_t groups = conv.getGroups();
        Value result = conv.getResult();
        double outElems = static_cast<double>(numel(result));
        cost.macs = convMacs(conv.getInput(), conv.getWeight(), result, groups);
        cost.thopMacs = cost.macs;
        double epilogue = activationFlops(conv.getActivation()) * outElems +
                          (conv.getResidual() ? outElems : 0);
        cost.flops =
            2.0 * cost.macs + (conv.getBias() ? outElems : 0) + epilogue;
        auto gemm = convGemm(conv.getInput(), conv.getWeight(), result, groups);
        bool depthwise = groups > 1 && groups == shapeOf(conv.getInput())[1];
        // Eager: each part is its own PyTorch kernel.
        addContiguousCopy(conv.getInput(), cost);
        if (conv.hasShift())
          cost.eager.push_back(kernel(0, 2 * bytesOf(conv.getInput())));
        // (TSM's shift along the frames: one more eager gather; compiled,
        // the frame offsets are addressing, no extra bytes.)
        if (conv.hasFrameShift())
          cost.eager.push_back(kernel(0, 2 * bytesOf(conv.getInput())));
        addEagerConv(cost, 2.0 * cost.macs,
                     bytesOf(conv.getInput()) + bytesOf(conv.getWeight()) +
                         bytesOf(result),
                     gemm, conv.getBias(), result, depthwise);
        if (conv.getActivation() != Activation::None)
          cost.eager.push_back(
              kernel(activationFlops(conv.getActivation()) * outElems,
                     2 * bytesOf(result)));
        if (conv.getResidual())
          cost.eager.push_back(kernel(outElems, 3 * bytesOf(result)));
        oneKernel(cost.flops, inOutBytes(), gemm);
      })
      .Case<ConvTranspose2dOp>([&](ConvTranspose2dOp conv) {
        ArrayRef<int64_t> in = shapeOf(conv.getInput()),
                          w = shapeOf(conv.getWeight());
        int64_t groups = conv.getGroups();
        Value result = conv.getResult();
        if (in.size() == 4 && w.size() == 4) {
          // Every input element meets O/g · kH · kW weights.
          cost.macs = numel(conv.getInput()) * w[1] * w[2] * w[3];
          // thop applies its convolution rule to the output.
          cost.thopMacs = numel(result) * (in[1] / groups) * w[2] * w[3];
        }
        double outElems = static_cast<double>(numel(result));
        cost.flops = 2.0 * cost.macs + (conv.getBias() ? outElems : 0);
        std::optional<GemmShape> gemm;
        // The GEMM of every input pixel with every tap, then col2im (as
        // SegToLinalg lowers it): the generated kernel tiles taps (Og·kH·kW)
        // x input pixels.
        if (in.size() == 4 && w.size() == 4)
          gemm = GemmShape{groups, in[0] * in[2] * in[3], w[1] * w[2] * w[3],
                           in[1] / groups};
        addContiguousCopy(conv.getInput(), cost);
        addEagerConv(cost, 2.0 * cost.macs,
                     bytesOf(conv.getInput()) + bytesOf(conv.getWeight()) +
                         bytesOf(result),
                     gemm, conv.getBias(), result, /*depthwise=*/false);
        oneKernel(cost.flops, inOutBytes(), gemm);
      })
      .Case<DeformConv2dOp>([&](DeformConv2dOp conv) {
        ArrayRef<int64_t> in = shapeOf(conv.getInput()),
                          w = shapeOf(conv.getWeight()),
                          out = shapeOf(conv.getResult());
        int64_t groups = conv.getGroups();
        Value result = conv.getResult();
        double outElems = static_cast<double>(numel(result));
        cost.macs = convMacs(conv.getInput(), conv.getWeight(), result, groups);
        cost.thopMacs = cost.macs;
        // One bilinear sample (4 reads, ~8 FLOPs) per input channel, tap and
        // output position: the im2col matrix.
        double columns = 0;
        std::optional<GemmShape> gemm;
        if (in.size() == 4 && w.size() == 4 && out.size() == 4) {
          columns = static_cast<double>(in[0]) * in[1] * w[2] * w[3] * out[2] *
                    out[3];
          gemm = GemmShape{groups, out[0] * out[2] * out[3], out[1] / groups,
                           in[1] / groups * w[2] * w[3]};
        }
        double sampleFlops = 8 * columns;
        cost.flops =
            2.0 * cost.macs + sampleFlops + (conv.getBias() ? outElems : 0);
        // Eager (torchvision): deformable im2col, a GEMM, the bias add.
        double columnBytes = columns * elementBytes(conv.getInput());
        addContiguousCopy(conv.getInput(), cost);
        cost.eager.push_back(kernel(sampleFlops, bytesOf(conv.getInput()) +
                                                     bytesOf(conv.getOffset()) +
                                                     columnBytes));
        cost.eager.push_back(kernel(
            2.0 * cost.macs,
            columnBytes + bytesOf(conv.getWeight()) + bytesOf(result), gemm));
        if (conv.getBias())
          cost.eager.push_back(
              kernel(outElems, 2 * bytesOf(result) + bytesOf(conv.getBias())));
        oneKernel(cost.flops, inOutBytes(), gemm);
      })
      .Case<LinearOp>([&](LinearOp linear) {
        ArrayRef<int64_t> w = shapeOf(linear.getWeight());
        Value result = linear.getResult();
        double outElems = static_cast<double>(numel(result));
        int64_t k = w.size() == 2 ? w[1] : 0;
        cost.macs = numel(result) * k;
        cost.thopMacs = cost.macs;
        cost.flops = 2.0 * cost.macs + (linear.getBias() ? outElems : 0);
        std::optional<GemmShape> gemm;
        if (w.size() == 2 && w[0] > 0)
          // Tiled as rows x output features (the input does not index
          // the output's innermost dimension).
          gemm = GemmShape{1,
                           numel(result) / w[0],
                           w[0],
                           k,
                           /*tileRows=*/numel(result) / w[0],
                           /*tileCols=*/w[0]};
        // ATen's linear fuses the bias (addmm) for 2-D or contiguous input;
        // otherwise it runs matmul and then adds the bias.
        bool strided = shapeOf(linear.getInput()).size() >= 3 &&
                       !isContiguousValue(linear.getInput());
        double gemmBytes = bytesOf(linear.getInput()) +
                           bytesOf(linear.getWeight()) + bytesOf(result);
        if (linear.getBias() && strided) {
          cost.eager.push_back(kernel(2.0 * cost.macs, gemmBytes, gemm));
          cost.eager.push_back(kernel(outElems, 2 * bytesOf(result) +
                                                    bytesOf(linear.getBias())));
        } else {
          cost.eager.push_back(kernel(cost.flops, inOutBytes(), gemm));
        }
        oneKernel(cost.flops, inOutBytes(), gemm);
      })
      .Case<BatchNormOp, LayerNormOp>([&](auto norm) {
        double elems = static_cast<double>(numel(norm.getResult()));
        cost.thopMacs = 4 * numel(norm.getResult());
        // BatchNorm (inference): (x − mean) · invstd · γ + β. LayerNorm:
        // mean, variance, normalization and the affine map.
        cost.flops = (isa<BatchNormOp>(op) ? 4 : 8) * elems;
        addContiguousCopy(norm.getInput(), cost);
        // PyTorch normalizes trailing dims only: a LayerNorm over another
        // axis is a permute to channels-last and its contiguous copy first.
        if (auto layerNorm = dyn_cast<LayerNormOp>(op))
          if (std::optional<uint64_t> axis = layerNorm.getAxis();
              axis && *axis + 1 != static_cast<uint64_t>(
                                       shapeOf(layerNorm.getInput()).size()))
            cost.eager.push_back(kernel(0, 2 * bytesOf(layerNorm.getInput())));
        cost.eager.push_back(kernel(cost.flops, inOutBytes()));
        oneKernel(cost.flops, inOutBytes());
      })
      .Case<ReluOp, GeluOp, SigmoidOp>([&](Operation *unary) {
        Value input = unary->getOperand(0);
        double elems = static_cast<double>(numel(input));
        double perElement = isa<ReluOp>(unary) ? 1 : isa<GeluOp>(unary) ? 8 : 4;
        cost.flops = perElement * elems;
        cost.eager.push_back(kernel(cost.flops, inOutBytes()));
        oneKernel(cost.flops, inOutBytes());
        Strides s = stridesOf(input);
        if (isDense(shapeOf(input), s))
          setStrides(unary->getResult(0), s);
      })
      .Case<AddOp, MulOp>([&](Operation *binary) {
        Value result = binary->getResult(0);
        cost.flops = static_cast<double>(numel(result));
        cost.eager.push_back(kernel(cost.flops, inOutBytes()));
        oneKernel(cost.flops, inOutBytes());
        // TensorIterator lays the result out like the first full-size operand.
        for (Value operand : binary->getOperands()) {
          if (shapeOf(operand) != shapeOf(result))
            continue;
          Strides s = stridesOf(operand);
          if (isDense(shapeOf(operand), s))
            setStrides(result, s);
          break;
        }
      })
      .Case<MaxPool2dOp>([&](MaxPool2dOp pool) {
        ArrayRef<int64_t> k = pool.getKernel();
        int64_t window = k.size() == 2 ? k[0] * k[1] : 1;
        cost.flops =
            static_cast<double>(numel(pool.getResult())) * (window - 1);
        addContiguousCopy(pool.getInput(), cost);
        cost.eager.push_back(kernel(cost.flops, inOutBytes()));
        oneKernel(cost.flops, inOutBytes());
      })
      .Case<UpsampleBilinearOp, UpsampleNearestOp>([&](auto up) {
        // Bilinear: four reads and three lerps per output element.
        cost.flops =
            isa<UpsampleBilinearOp>(op) ? 8.0 * numel(up.getResult()) : 0.0;
        addContiguousCopy(up.getInput(), cost);
        cost.eager.push_back(kernel(cost.flops, inOutBytes()));
        oneKernel(cost.flops, inOutBytes());
      })
      .Case<ConcatOp>([&](ConcatOp) {
        cost.eager.push_back(kernel(0, inOutBytes()));
        oneKernel(0, inOutBytes());
      })
      .Case<PadOp>([&](PadOp pad) {
        // ATen's constant_pad_nd: fill the output, then copy the input in.
        addContiguousCopy(pad.getInput(), cost);
        cost.eager.push_back(kernel(0, bytesOf(pad.getResult())));
        cost.eager.push_back(kernel(0, 2 * bytesOf(pad.getInput())));
        oneKernel(0, inOutBytes());
      })
      .Case<RollOp>([&](RollOp roll) {
        // ATen rolls one dimension per kernel.
        addContiguousCopy(roll.getInput(), cost);
        for (size_t i = 0, e = std::max<size_t>(roll.getDims().size(), 1);
             i < e; ++i)
          cost.eager.push_back(kernel(0, inOutBytes()));
        oneKernel(0, inOutBytes());
      })
      .Case<ChannelShiftOp, ShiftOp>([&](auto shift) {
        // One gather kernel in eager mode too.
        addContiguousCopy(shift.getInput(), cost);
        cost.eager.push_back(kernel(0, inOutBytes()));
        oneKernel(0, inOutBytes());
      })
      .Case<SliceOp>([&](SliceOp slice) {
        Strides s = stridesOf(slice.getInput());
        for (auto [stride, step] : llvm::zip(s, slice.getStep()))
          stride *= step;
        setStrides(slice.getResult(), s);
      })
      .Case<PermuteOp>([&](PermuteOp permute) {
        Strides in = stridesOf(permute.getInput());
        Strides s;
        for (int64_t d : permute.getDims())
          s.push_back(in[d]);
        setStrides(permute.getResult(), s);
      })
      .Case<ReshapeOp>([&](ReshapeOp reshape) {
        std::optional<Strides> view = viewStrides(shapeOf(reshape.getInput()),
                                                  stridesOf(reshape.getInput()),
                                                  shapeOf(reshape.getResult()));
        if (view)
          setStrides(reshape.getResult(), *view);
        else
          cost.eager.push_back(kernel(0, inOutBytes()));
      })
      .Case<FoldBatchNormOp>([&](FoldBatchNormOp fold) {
        // Per inference only when it reads a runtime value (otherwise it is
        // load-time, above). Eager: PyTorch's fuse_conv_bn_weights, one
        // kernel per step over the C channels: var + eps, rsqrt, gamma · r,
        // bias − mean (or −mean), · scale, + beta, and weight · scale.
        // Compiled: one kernel.
        double c = static_cast<double>(numel(fold.getMean()));
        double vec = bytesOf(fold.getMean());
        double w = static_cast<double>(numel(fold.getWeight()));
        cost.flops = w + 6 * c;
        for (double bytes : {2 * vec, 2 * vec, 3 * vec,
                             (fold.getBias() ? 3 : 2) * vec, 3 * vec, 3 * vec})
          cost.eager.push_back(kernel(c, bytes));
        cost.eager.push_back(kernel(w, 2 * bytesOf(fold.getWeight()) + vec));
        oneKernel(cost.flops, inOutBytes());
      })
      .Default([&](Operation *) {
        cost.modeled = false;
        cost.eager.push_back(kernel(0, inOutBytes()));
        oneKernel(0, inOutBytes());
      });
  return cost;
}

/// A BatchNorm's running mean and variance are buffers, not learned
/// parameters (PyTorch's parameters() leaves them out).
bool isStatisticOperand(OpOperand &use) {
  Operation *user = use.getOwner();
  if (auto bn = dyn_cast<BatchNormOp>(user))
    return use.get() == bn.getMean() || use.get() == bn.getVar();
  if (auto fold = dyn_cast<FoldBatchNormOp>(user))
    return use.get() == fold.getMean() || use.get() == fold.getVar();
  return false;
}

/// Compiled mode: an elementwise op absorbs the kernel of an elementwise
/// producer, or of a shift (a gather: the consumer's loop reads the shifted
/// element), that has no other use and the same shape; the intermediate is
/// neither written nor read (the linalg lowering's elementwise fusion).
void fuseElementwise(std::vector<OpCost> &ops,
                     const DenseMap<Operation *, size_t> &index) {
  for (size_t i = 0; i < ops.size(); ++i) {
    OpCost &consumer = ops[i];
    if (!isElementwise(consumer.op) || consumer.compiled.size() != 1)
      continue;
    for (Value operand : consumer.op->getOperands()) {
      Operation *producerOp = operand.getDefiningOp();
      if (!producerOp ||
          !(isElementwise(producerOp) ||
            isa<ChannelShiftOp, ShiftOp>(producerOp)) ||
          !operand.hasOneUse() ||
          operand.getType() != consumer.op->getResult(0).getType())
        continue;
      auto it = index.find(producerOp);
      if (it == index.end())
        continue;
      OpCost &producer = ops[it->second];
      if (producer.compiled.size() != 1)
        continue;
      KernelCost &k = consumer.compiled.front();
      k.flops += producer.compiled.front().flops;
      k.bytes += producer.compiled.front().bytes - 2 * bytesOf(operand);
      producer.compiled.clear();
      producer.fusedInto = i;
    }
  }
}

} // namespace

//===----------------------------------------------------------------------===//
// SegCostAnalysis
//===----------------------------------------------------------------------===//

StringRef mlir::gpuopt::stringifyExecMode(ExecMode mode) {
  return mode == ExecMode::Eager ? "eager" : "compiled";
}

std::optional<ConvRoute> mlir::gpuopt::parseConvRoute(StringRef name) {
  return llvm::StringSwitch<std::optional<ConvRoute>>(name)
      .Cases({"", "model"}, ConvRoute::Model)
      .Case("generated", ConvRoute::Generated)
      .Case("library", ConvRoute::Library)
      .Case("auto", ConvRoute::Auto)
      .Default(std::nullopt);
}

StringRef mlir::gpuopt::stringifyConvRoute(ConvRoute route) {
  switch (route) {
  case ConvRoute::Model:
    return "model";
  case ConvRoute::Generated:
    return "generated";
  case ConvRoute::Library:
    return "library";
  case ConvRoute::Auto:
    return "auto";
  }
  llvm_unreachable("unknown route");
}

bool mlir::gpuopt::isCudaLibraryEligible(Operation *op) {
  if (auto fused = dyn_cast<FusedConv2dOp>(op)) {
    auto isZero = [](ArrayRef<int64_t> a) {
      return llvm::all_of(a, [](int64_t v) { return v == 0; });
    };
    if (!isZero(fused.getOffsetsH()) || !isZero(fused.getOffsetsW()) ||
        fused.getFrameShiftAttr())
      return false;
    Activation act = fused.getActivation();
    return act == Activation::None ||
           (act == Activation::Relu && !fused.getResidual());
  }
  return isa<Conv2dOp, ConvTranspose2dOp, LinearOp>(op);
}

SegCostAnalysis::SegCostAnalysis(Operation *funcOp) {
  CostBuilder builder;
  DenseMap<Operation *, size_t> index;
  funcOp->walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (op == funcOp || op->hasTrait<OpTrait::IsTerminator>())
      return;
    index[op] = ops.size();
    ops.push_back(builder.build(op));
  });
  fuseElementwise(ops, index);

  if (auto func = dyn_cast<FunctionOpInterface>(funcOp))
    if (func.getNumArguments() > 0) {
      ArrayRef<int64_t> shape = shapeOf(func.getArgument(0));
      if (!shape.empty())
        batch = shape.front();
    }

  llvm::StringSet<> seen;
  funcOp->walk([&](ParamOp param) {
    if (!seen.insert(param.getName()).second)
      return;
    bool statistic =
        !param->use_empty() && llvm::all_of(param->getUses(), [](OpOperand &u) {
          return isStatisticOperand(u);
        });
    (statistic ? buffers : params) += numel(param.getResult());
  });
}

/// The sum of `field` over `ops`.
template <typename T> static T sumOf(ArrayRef<OpCost> ops, T OpCost::*field) {
  T total = 0;
  for (const OpCost &op : ops)
    total += op.*field;
  return total;
}

int64_t SegCostAnalysis::getMacs() const { return sumOf(ops, &OpCost::macs); }

int64_t SegCostAnalysis::getThopMacs() const {
  return sumOf(ops, &OpCost::thopMacs);
}

double SegCostAnalysis::getFlops() const { return sumOf(ops, &OpCost::flops); }

int64_t SegCostAnalysis::getNumUnmodeled() const {
  return llvm::count_if(ops, [](const OpCost &op) { return !op.modeled; });
}

//===----------------------------------------------------------------------===//
// LatencyModel
//===----------------------------------------------------------------------===//

StringRef mlir::gpuopt::stringifyBound(Bound bound) {
  switch (bound) {
  case Bound::Compute:
    return "compute";
  case Bound::Memory:
    return "memory";
  case Bound::Launch:
    return "launch";
  }
  llvm_unreachable("unknown bound");
}

Bound TimeSplit::getBound() const {
  if (launchSeconds >= computeSeconds && launchSeconds >= memorySeconds)
    return Bound::Launch;
  return computeSeconds >= memorySeconds ? Bound::Compute : Bound::Memory;
}

TimeSplit &TimeSplit::operator+=(const TimeSplit &other) {
  kernels += other.kernels;
  flops += other.flops;
  bytes += other.bytes;
  computeSeconds += other.computeSeconds;
  memorySeconds += other.memorySeconds;
  launchSeconds += other.launchSeconds;
  return *this;
}

StringRef LatencyModel::getPrecision(const OpCost &op) const {
  return precision.empty() ? StringRef(op.precision) : StringRef(precision);
}

double LatencyModel::getLaunchSeconds(ExecMode mode) const {
  return mode == ExecMode::Eager ? device.eagerLaunchSeconds
                                 : device.launchSeconds;
}

double LatencyModel::getGemmEfficiency(const GemmShape &gemm) const {
  if (device.units <= 0 || device.tileM <= 0 || device.tileN <= 0 ||
      gemm.m <= 0 || gemm.n <= 0)
    return 1.0;
  auto ceilDiv = [](int64_t a, int64_t b) { return (a + b - 1) / b; };
  // Libraries also have narrower tiles (down to 16) for a narrow dimension.
  auto tileFor = [](int64_t dim, int64_t tile) {
    return std::min<int64_t>(tile,
                             std::max<int64_t>(16, llvm::PowerOf2Ceil(dim)));
  };
  int64_t tileM = tileFor(gemm.m, device.tileM);
  int64_t tileN = tileFor(gemm.n, device.tileN);
  int64_t tiles = gemm.batch * ceilDiv(gemm.m, tileM) * ceilDiv(gemm.n, tileN);
  int64_t waves = ceilDiv(tiles, device.units);
  double slots = static_cast<double>(waves) * device.units * tileM * tileN;
  return static_cast<double>(gemm.batch) * gemm.m * gemm.n / slots;
}

namespace {
/// The compute and memory seconds of a kernel.
std::pair<double, double> kernelTimes(const DeviceModel &device,
                                      double peakFlops, double efficiency,
                                      const KernelCost &k) {
  double rate = peakFlops * efficiency;
  double compute = k.flops > 0 && rate > 0 ? k.flops / rate : 0.0;
  double memory = k.bytes / (device.bandwidth * device.memoryEfficiency);
  return {compute, memory};
}
} // namespace

double LatencyModel::getKernelSeconds(const OpCost &op, const KernelCost &k,
                                      double efficiency) const {
  auto [compute, memory] =
      kernelTimes(device, device.getPeakFlops(getPrecision(op)), efficiency, k);
  return std::max(compute, memory);
}

void LatencyModel::addKernel(const OpCost &op, const KernelCost &k,
                             double efficiency, TimeSplit &split) const {
  auto [compute, memory] =
      kernelTimes(device, device.getPeakFlops(getPrecision(op)), efficiency, k);
  if (compute >= memory && compute > 0)
    split.computeSeconds += compute;
  else
    split.memorySeconds += memory;
  split.kernels += 1;
  split.flops += k.flops;
  split.bytes += k.bytes;
}

std::optional<WorkgroupTiling>
LatencyModel::getGeneratedTiling(const OpCost &op, const KernelCost &k) const {
  // The kernel pass tiles f32 products of at least 16 rows and 8 steps.
  if (!k.gemm || op.precision != "fp32" || k.gemm->batch != 1 ||
      k.gemm->getTileRows() < 16 || k.gemm->k < 8 || k.gemm->getTileCols() <= 0)
    return std::nullopt;
  return chooseWorkgroupTiling(k.gemm->getTileRows(), k.gemm->getTileCols(),
                               k.gemm->k, tilingLimits);
}

ConvPrediction LatencyModel::predictGenerated(const OpCost &op,
                                              const KernelCost &k) const {
  ConvPrediction p;
  p.tiling = getGeneratedTiling(op, k);
  double utilization = 1;
  KernelCost tiles = k;
  if (p.tiling) {
    int64_t rows = k.gemm->getTileRows(), cols = k.gemm->getTileCols();
    utilization =
        getWorkgroupTilingUtilization(rows, cols, *p.tiling, device.units);
    if (p.tiling->splits > 1) {
      // The parts' sums (f32) instead of the output; the second kernel
      // reads them, adds them (and runs the epilogue) and writes the output.
      double outputs = double(rows) * cols;
      double parts = 4.0 * outputs * p.tiling->splits;
      tiles.bytes = std::max(0.0, k.bytes - 4.0 * outputs) + parts;
      KernelCost reduce{outputs * p.tiling->splits, parts + 4.0 * outputs,
                        std::nullopt};
      addKernel(op, reduce, device.computeEfficiency, p.split);
    }
  }
  addKernel(op, tiles,
            device.getGeneratedComputeEfficiency(getPrecision(op)) *
                utilization,
            p.split);
  p.split.launchSeconds = p.split.kernels * device.launchSeconds;
  return p;
}

ConvPrediction LatencyModel::predictLibraryCall(const OpCost &op,
                                                const KernelCost &k) const {
  ConvPrediction p;
  p.library = true;
  double tiles = 1;
  if (k.gemm) {
    std::optional<WorkgroupTiling> generated = getGeneratedTiling(op, k);
    tiles =
        std::max(getGemmEfficiency(*k.gemm),
                 generated ? getWorkgroupTilingUtilization(
                                 k.gemm->getTileRows(), k.gemm->getTileCols(),
                                 *generated, device.units)
                           : 1.0);
  }
  addKernel(op, k, device.computeEfficiency * tiles, p.split);
  p.split.launchSeconds = device.launchSeconds + device.libraryCallSeconds;
  return p;
}

std::optional<ConvPrediction>
LatencyModel::predictConv(const OpCost &op) const {
  if (convRoute == ConvRoute::Model || op.loadTime || op.macs <= 0 ||
      op.compiled.size() != 1)
    return std::nullopt;
  const KernelCost &k = op.compiled.front();
  if (convRoute == ConvRoute::Generated || !isCudaLibraryEligible(op.op))
    return predictGenerated(op, k);
  ConvPrediction library = predictLibraryCall(op, k);
  if (convRoute == ConvRoute::Library)
    return library;
  ConvPrediction generated = predictGenerated(op, k);
  return library.split.getSeconds() < generated.split.getSeconds() ? library
                                                                   : generated;
}

TimeSplit LatencyModel::predict(const OpCost &op, ExecMode mode) const {
  if (mode == ExecMode::Compiled)
    if (std::optional<ConvPrediction> conv = predictConv(op))
      return conv->split;
  TimeSplit split;
  for (const KernelCost &k : op.getKernels(mode))
    addKernel(op, k,
              device.computeEfficiency *
                  (k.gemm ? getGemmEfficiency(*k.gemm) : 1.0),
              split);
  split.launchSeconds = split.kernels * getLaunchSeconds(mode);
  return split;
}

TimeSplit LatencyModel::predict(const SegCostAnalysis &analysis,
                                ExecMode mode) const {
  TimeSplit total;
  for (const OpCost &op : analysis.getOps())
    total += predict(op, mode);
  return total;
}
