//===- KernelCalls.cpp - seg ops as calls of CpuKernelAbi routines --------===//
//
// Part of the gpuopt project.
//
// The call builder of KernelCalls.h: convolutions, linear layers, bilinear
// upsampling and deformable convolutions as calls of the routines of
// runtime/include/gpuopt/Runtime/CpuKernelAbi.{def,h}, on the buffers of
// their tensors; every call built here is checked against that table.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Conversion/SegToCpuKernels/KernelCalls.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;
using namespace mlir::gpuopt;
namespace rt = ::gpuopt::runtime;
using rt::CpuKernel;

namespace {

/// The kernel code of a seg activation (CpuKernelAbi.h).
int64_t activationCode(seg::Activation act) {
  switch (act) {
  case seg::Activation::None:
    return rt::kActNone;
  case seg::Activation::Relu:
    return rt::kActRelu;
  case seg::Activation::Gelu:
    return rt::kActGelu;
  case seg::Activation::GeluTanh:
    return rt::kActGeluTanh;
  }
  llvm_unreachable("unknown seg::Activation");
}

/// Whether `v`'s type is what argument `arg` of a kernel takes: a strided
/// memref of its rank and element type, or an i64.
[[maybe_unused]] bool matchesKernelArg(Value v, const rt::CpuKernelArg &arg) {
  if (arg.rank == 0)
    return v.getType().isInteger(64);
  auto m = dyn_cast<MemRefType>(v.getType());
  return m && m.getRank() == arg.rank &&
         (arg.isF32 ? m.getElementType().isF32()
                    : m.getElementType().isInteger(64));
}

/// Static f32 tensor of the given rank (any when -1) with no empty
/// dimension (the kernels index planes and rows; empty tensors stay with the
/// linalg lowering).
bool isStaticF32(Value v, int64_t rank = -1) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t && t.hasStaticShape() && t.getElementType().isF32() &&
         (rank < 0 || t.getRank() == rank) && t.getNumElements() > 0;
}

/// memref<?x...xT, strided<[?, ...], offset: ?>>: what every kernel takes.
MemRefType anyStridedType(MLIRContext *ctx, int64_t rank, Type elt) {
  SmallVector<int64_t> dyn(rank, ShapedType::kDynamic);
  return MemRefType::get(
      dyn, elt, StridedLayoutAttr::get(ctx, ShapedType::kDynamic, dyn));
}

class KernelCallBuilder {
public:
  KernelCallBuilder(ModuleOp module, Operation *op)
      : module(module), b(op), loc(op->getLoc()), ctx(op->getContext()) {}

  /// The buffer of tensor `v` as a fully strided, dynamically sized memref;
  /// with `dense`, of a buffer of identity layout (bufferization copies a
  /// strided view into one).
  Value buffer(Value v, bool dense = false) {
    auto t = cast<RankedTensorType>(v.getType());
    SmallVector<int64_t> dyn(t.getRank(), ShapedType::kDynamic);
    auto staticType =
        dense ? MemRefType::get(t.getShape(), t.getElementType())
              : MemRefType::get(
                    t.getShape(), t.getElementType(),
                    StridedLayoutAttr::get(ctx, ShapedType::kDynamic, dyn));
    Value m = bufferization::ToBufferOp::create(b, loc, staticType, v,
                                                /*read_only=*/true);
    return memref::CastOp::create(
        b, loc, anyStridedType(ctx, t.getRank(), t.getElementType()), m);
  }

  /// A constant 1-D tensor's buffer (possibly empty).
  Value i64Buffer(ArrayRef<int64_t> values) {
    auto t = RankedTensorType::get({int64_t(values.size())}, b.getI64Type());
    Value c =
        arith::ConstantOp::create(b, loc, DenseElementsAttr::get(t, values));
    return buffer(c);
  }
  Value emptyF32Buffer() {
    auto t = RankedTensorType::get({0}, b.getF32Type());
    Value c = arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(t, ArrayRef<float>{}));
    return buffer(c);
  }
  Value i64(int64_t v) {
    return arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(v));
  }

  /// A fresh output buffer for a tensor of type `t`; returns it and its
  /// strided view.
  std::pair<Value, Value> output(RankedTensorType t) {
    auto type = MemRefType::get(t.getShape(), t.getElementType());
    Value alloc = memref::AllocOp::create(b, loc, type, ValueRange{},
                                          b.getI64IntegerAttr(64));
    Value view = memref::CastOp::create(
        b, loc, anyStridedType(ctx, t.getRank(), t.getElementType()), alloc);
    return {alloc, view};
  }

  Value result(Value alloc, RankedTensorType t) {
    return bufferization::ToTensorOp::create(b, loc, t, alloc,
                                             /*restrict=*/true,
                                             /*writable=*/true);
  }

  void call(CpuKernel kernel, ValueRange args) {
    const rt::CpuKernelSignature &sig = rt::getCpuKernelSignature(kernel);
    assert(int(args.size()) == sig.numArgs &&
           llvm::all_of(
               llvm::seq(sig.numArgs),
               [&](int i) { return matchesKernelArg(args[i], sig.args[i]); }) &&
           "call does not match CpuKernelAbi.def");
    StringRef name = sig.name;
    auto fn = module.lookupSymbol<func::FuncOp>(name);
    auto type = FunctionType::get(ctx, TypeRange(args), {});
    if (!fn) {
      OpBuilder mb = OpBuilder::atBlockEnd(module.getBody());
      fn = func::FuncOp::create(mb, module.getLoc(), name, type);
      fn.setPrivate();
      fn->setAttr("llvm.emit_c_interface", UnitAttr::get(ctx));
      fn->setAttr(kCpuKernelAttrName, UnitAttr::get(ctx));
    }
    func::CallOp::create(b, loc, fn, args);
  }

  OpBuilder &builder() { return b; }
  Location location() { return loc; }

private:
  ModuleOp module;
  OpBuilder b;
  Location loc;
  MLIRContext *ctx;
};

/// Whether the scratch buffers a convolution kernel allocates fit the
/// per-tensor limit: the padded input planes (conv2d: c planes of the input
/// grown to cover the output grid; see makePadded in runtime/
/// CpuKernels.cpp) and the im2col columns (strided conv2d, deform_conv2d:
/// c * kh * kw rows of oh * ow columns plus a micro-tile). The kernels size
/// them in int64 from the operand shapes and attributes, which may be huge
/// where the operands are not (a padding of 2^40 with a stride of 2^41):
/// such convolutions stay with the linalg lowering. In 128 bits, where
/// products of three int64 values below 2^42 cannot overflow.
bool convScratchFits(RankedTensorType in, RankedTensorType w,
                     RankedTensorType out, ArrayRef<int64_t> stride,
                     ArrayRef<int64_t> padding, ArrayRef<int64_t> dilation,
                     bool padded, bool im2col) {
  using Wide = __int128;
  // The kernels' column slack: a micro-tile (kNR = 32) and 16 more floats.
  constexpr Wide kSlack = 32 + 16;
  constexpr Wide kMaxFloats = seg::kMaxTensorBytes / 4;
  auto fits = [&](Wide v) { return v >= 0 && v <= kMaxFloats; };
  Wide c = in.getDimSize(1);
  Wide cols = 1, padPlane = 1;
  for (int i = 0; i < 2; ++i) {
    Wide inDim = in.getDimSize(2 + i), k = w.getDimSize(2 + i),
         o = out.getDimSize(2 + i);
    Wide s = stride[i], p = padding[i], d = dilation[i];
    if (!fits(s) || !fits(p) || !fits(d))
      return false;
    Wide dim = std::max(inDim + p, (o - 1) * s + (k - 1) * d + 1);
    if (!fits(dim))
      return false;
    padPlane *= dim;
    cols *= o;
  }
  Wide taps = c * w.getDimSize(2) * w.getDimSize(3);
  Wide planeSlack = (w.getDimSize(3) - 1) * Wide(dilation[1]) + kSlack;
  if (padded && !fits(c * padPlane + planeSlack))
    return false;
  return !im2col || (fits(taps) && fits(taps * (cols + kSlack)));
}

/// Lowers a (fused) convolution. Returns failure (op untouched) when the
/// kernel does not cover it.
template <typename ConvOp>
LogicalResult lowerConv(ModuleOp module, ConvOp op, Value residual,
                        ArrayRef<int64_t> offH, ArrayRef<int64_t> offW,
                        seg::ShiftMode mode, seg::Activation activation,
                        seg::FrameShiftAttr frameShift,
                        const KernelCallOptions &options) {
  if (!isStaticF32(op.getInput(), 4) || !isStaticF32(op.getWeight(), 4) ||
      !isStaticF32(op.getResult(), 4) ||
      (op.getBias() && !isStaticF32(op.getBias(), 1)) ||
      (residual && !isStaticF32(residual, 4)))
    return failure();
  int64_t act = activationCode(activation);
  ArrayRef<int64_t> stride = op.getStride(), padding = op.getPadding(),
                    dilation = op.getDilation();
  if (!convScratchFits(cast<RankedTensorType>(op.getInput().getType()),
                       cast<RankedTensorType>(op.getWeight().getType()),
                       cast<RankedTensorType>(op.getResult().getType()), stride,
                       padding, dilation, /*padded=*/true,
                       /*im2col=*/stride[0] != 1 || stride[1] != 1))
    return failure();
  auto isZero = [](ArrayRef<int64_t> a) {
    return llvm::all_of(a, [](int64_t v) { return v == 0; });
  };
  if (options.dropZeroShifts && isZero(offH) && isZero(offW)) {
    offH = {};
    offW = {};
  }
  KernelCallBuilder kb(module, op);
  auto resultType = cast<RankedTensorType>(op.getResult().getType());
  auto [alloc, out] = kb.output(resultType);
  Value in = kb.buffer(op.getInput());
  int64_t flags = (op.getBias() ? rt::kConvHasBias : 0) |
                  (residual ? rt::kConvHasResidual : 0) |
                  (mode == seg::ShiftMode::Zero ? rt::kConvZeroMode : 0);
  SmallVector<Value> args = {
      out,
      in,
      kb.buffer(op.getWeight(), options.contiguousWeights),
      op.getBias() ? kb.buffer(op.getBias()) : kb.emptyF32Buffer(),
      residual ? kb.buffer(residual) : in,
      kb.i64Buffer(offH),
      kb.i64Buffer(offW),
      kb.i64Buffer(frameShift ? frameShift.getOffsets() : ArrayRef<int64_t>{})};
  int64_t frames = frameShift ? frameShift.getFrames() : 0;
  for (int64_t v : {stride[0], stride[1], padding[0], padding[1], dilation[0],
                    dilation[1], int64_t(op.getGroups()), frames, flags, act})
    args.push_back(kb.i64(v));
  kb.call(CpuKernel::conv2d, args);
  op.getResult().replaceAllUsesWith(kb.result(alloc, resultType));
  op.erase();
  return success();
}

LogicalResult lowerConvTranspose(ModuleOp module, seg::ConvTranspose2dOp op,
                                 const KernelCallOptions &options) {
  if (!isStaticF32(op.getInput(), 4) || !isStaticF32(op.getWeight(), 4) ||
      !isStaticF32(op.getResult(), 4) ||
      (op.getBias() && !isStaticF32(op.getBias(), 1)))
    return failure();
  auto wType = cast<RankedTensorType>(op.getWeight().getType());
  ArrayRef<int64_t> stride = op.getStride();
  auto isZero = [](ArrayRef<int64_t> a) {
    return llvm::all_of(a, [](int64_t v) { return v == 0; });
  };
  if (op.getGroups() != 1 || stride[0] != wType.getDimSize(2) ||
      stride[1] != wType.getDimSize(3) || !isZero(op.getPadding()) ||
      !isZero(op.getOutputPadding()) ||
      !llvm::all_of(op.getDilation(), [](int64_t v) { return v == 1; }))
    return failure();
  KernelCallBuilder kb(module, op);
  auto resultType = cast<RankedTensorType>(op.getResult().getType());
  auto [alloc, out] = kb.output(resultType);
  SmallVector<Value> args = {
      out, kb.buffer(op.getInput()),
      kb.buffer(op.getWeight(), options.contiguousWeights),
      op.getBias() ? kb.buffer(op.getBias()) : kb.emptyF32Buffer(),
      kb.i64(op.getBias() ? 1 : 0)};
  kb.call(CpuKernel::conv_transpose2d, args);
  op.getResult().replaceAllUsesWith(kb.result(alloc, resultType));
  op.erase();
  return success();
}

LogicalResult lowerLinear(ModuleOp module, seg::LinearOp op,
                          const KernelCallOptions &options) {
  auto inType = dyn_cast<RankedTensorType>(op.getInput().getType());
  if (!inType || inType.getRank() < 2 || !isStaticF32(op.getInput()) ||
      !isStaticF32(op.getWeight(), 2) || !isStaticF32(op.getResult()) ||
      (op.getBias() && !isStaticF32(op.getBias(), 1)))
    return failure();
  KernelCallBuilder kb(module, op);
  OpBuilder &b = kb.builder();
  Location loc = kb.location();
  auto resultType = cast<RankedTensorType>(op.getResult().getType());
  int64_t rank = inType.getRank();
  // [d0, ..., dk, K] -> [d0 * ... * dk, K].
  SmallVector<ReassociationIndices> reassoc(2);
  for (int64_t d = 0; d + 1 < rank; ++d)
    reassoc[0].push_back(d);
  reassoc[1].push_back(rank - 1);
  Value in2d = op.getInput();
  RankedTensorType out2dType = resultType;
  if (rank != 2) {
    in2d = tensor::CollapseShapeOp::create(b, loc, op.getInput(), reassoc);
    int64_t rows = 1;
    for (int64_t d = 0; d + 1 < rank; ++d)
      rows *= inType.getDimSize(d);
    out2dType = RankedTensorType::get({rows, resultType.getDimSize(rank - 1)},
                                      resultType.getElementType());
  }
  auto [alloc, out] = kb.output(out2dType);
  SmallVector<Value> args = {
      out, kb.buffer(in2d),
      kb.buffer(op.getWeight(), options.contiguousWeights),
      op.getBias() ? kb.buffer(op.getBias()) : kb.emptyF32Buffer(),
      kb.i64(op.getBias() ? 1 : 0)};
  kb.call(CpuKernel::linear, args);
  Value result = kb.result(alloc, out2dType);
  if (rank != 2)
    result = tensor::ExpandShapeOp::create(b, loc, resultType, result, reassoc);
  op.getResult().replaceAllUsesWith(result);
  op.erase();
  return success();
}

LogicalResult lowerUpsample(ModuleOp module, seg::UpsampleBilinearOp op) {
  if (!isStaticF32(op.getInput(), 4) || !isStaticF32(op.getResult(), 4))
    return failure();
  KernelCallBuilder kb(module, op);
  auto resultType = cast<RankedTensorType>(op.getResult().getType());
  auto [alloc, out] = kb.output(resultType);
  kb.call(CpuKernel::upsample_bilinear,
          {out, kb.buffer(op.getInput()), kb.i64(op.getAlignCorners())});
  op.getResult().replaceAllUsesWith(kb.result(alloc, resultType));
  op.erase();
  return success();
}

LogicalResult lowerDeformConv(ModuleOp module, seg::DeformConv2dOp op) {
  if (!isStaticF32(op.getInput(), 4) || !isStaticF32(op.getOffset(), 4) ||
      !isStaticF32(op.getWeight(), 4) || !isStaticF32(op.getResult(), 4) ||
      (op.getBias() && !isStaticF32(op.getBias(), 1)))
    return failure();
  if (!convScratchFits(cast<RankedTensorType>(op.getInput().getType()),
                       cast<RankedTensorType>(op.getWeight().getType()),
                       cast<RankedTensorType>(op.getResult().getType()),
                       op.getStride(), op.getPadding(), op.getDilation(),
                       /*padded=*/false, /*im2col=*/true))
    return failure();
  KernelCallBuilder kb(module, op);
  auto resultType = cast<RankedTensorType>(op.getResult().getType());
  auto [alloc, out] = kb.output(resultType);
  SmallVector<Value> args = {
      out, kb.buffer(op.getInput()), kb.buffer(op.getOffset()),
      kb.buffer(op.getWeight()),
      op.getBias() ? kb.buffer(op.getBias()) : kb.emptyF32Buffer()};
  ArrayRef<int64_t> stride = op.getStride(), padding = op.getPadding(),
                    dilation = op.getDilation();
  for (int64_t v :
       {stride[0], stride[1], padding[0], padding[1], dilation[0], dilation[1],
        int64_t(op.getGroups()), int64_t(op.getOffsetGroups()),
        int64_t(op.getBias() ? 1 : 0)})
    args.push_back(kb.i64(v));
  kb.call(CpuKernel::deform_conv2d, args);
  op.getResult().replaceAllUsesWith(kb.result(alloc, resultType));
  op.erase();
  return success();
}

} // namespace

LogicalResult mlir::gpuopt::checkReservedKernelSymbols(ModuleOp module) {
  for (const rt::CpuKernelSignature &sig : rt::kCpuKernelSignatures)
    if (Operation *sym = module.lookupSymbol(sig.name);
        sym && !sym->hasAttr(kCpuKernelAttrName))
      return sym->emitError("symbol '")
             << sig.name << "' is reserved for gpuopt's CPU kernels";
  return success();
}

LogicalResult
mlir::gpuopt::lowerToKernelCall(ModuleOp module, seg::Conv2dOp op,
                                const KernelCallOptions &options) {
  return lowerConv(module, op, Value(), {}, {}, seg::ShiftMode::Cyclic,
                   seg::Activation::None, seg::FrameShiftAttr(), options);
}

LogicalResult
mlir::gpuopt::lowerToKernelCall(ModuleOp module, seg::FusedConv2dOp op,
                                const KernelCallOptions &options) {
  return lowerConv(module, op, op.getResidual(), op.getOffsetsH(),
                   op.getOffsetsW(), op.getMode(), op.getActivation(),
                   op.getFrameShiftAttr(), options);
}

LogicalResult
mlir::gpuopt::lowerToKernelCall(ModuleOp module, seg::ConvTranspose2dOp op,
                                const KernelCallOptions &options) {
  return lowerConvTranspose(module, op, options);
}

LogicalResult
mlir::gpuopt::lowerToKernelCall(ModuleOp module, seg::LinearOp op,
                                const KernelCallOptions &options) {
  return lowerLinear(module, op, options);
}

LogicalResult mlir::gpuopt::lowerToKernelCall(ModuleOp module,
                                              seg::UpsampleBilinearOp op,
                                              const KernelCallOptions &) {
  return lowerUpsample(module, op);
}

LogicalResult mlir::gpuopt::lowerToKernelCall(ModuleOp module,
                                              seg::DeformConv2dOp op,
                                              const KernelCallOptions &) {
  return lowerDeformConv(module, op);
}
