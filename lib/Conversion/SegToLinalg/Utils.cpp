//===- Utils.cpp - helpers of the seg to linalg lowering ------------------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//

#include "Utils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"

using namespace mlir;
using namespace mlir::gpuopt::detail;

SmallVector<OpFoldResult>
mlir::gpuopt::detail::indexAttrs(OpBuilder &b, ArrayRef<int64_t> values) {
  SmallVector<OpFoldResult> result;
  for (int64_t v : values)
    result.push_back(b.getIndexAttr(v));
  return result;
}

Value mlir::gpuopt::detail::floatConstant(OpBuilder &b, Location loc, Type type,
                                          double value) {
  return arith::ConstantOp::create(b, loc, b.getFloatAttr(type, value));
}

Value mlir::gpuopt::detail::filledTensor(OpBuilder &b, Location loc,
                                         RankedTensorType type, double value) {
  Value empty =
      tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType());
  Value scalar = floatConstant(b, loc, type.getElementType(), value);
  return linalg::FillOp::create(b, loc, scalar, empty).getResult(0);
}

Value mlir::gpuopt::detail::padTensor(OpBuilder &b, Location loc, Value x,
                                      ArrayRef<int64_t> low,
                                      ArrayRef<int64_t> high, double value) {
  if (llvm::all_of(low, [](int64_t v) { return v == 0; }) &&
      llvm::all_of(high, [](int64_t v) { return v == 0; }))
    return x;
  RankedTensorType type = tensorTypeOf(x);
  SmallVector<int64_t> shape;
  for (auto [d, lo, hi] : llvm::zip_equal(type.getShape(), low, high))
    shape.push_back(d + lo + hi);
  auto padded = RankedTensorType::get(shape, type.getElementType());
  Value pad = floatConstant(b, loc, type.getElementType(), value);
  return tensor::PadOp::create(b, loc, padded, x, indexAttrs(b, low),
                               indexAttrs(b, high), pad, /*nofold=*/false);
}

AffineMap mlir::gpuopt::detail::broadcastMap(MLIRContext *ctx,
                                             ArrayRef<int64_t> shape,
                                             ArrayRef<int64_t> resultShape) {
  SmallVector<AffineExpr> exprs;
  size_t offset = resultShape.size() - shape.size();
  for (auto [i, d] : llvm::enumerate(shape)) {
    if (d == 1 && resultShape[offset + i] != 1)
      exprs.push_back(getAffineConstantExpr(0, ctx));
    else
      exprs.push_back(getAffineDimExpr(offset + i, ctx));
  }
  return AffineMap::get(resultShape.size(), 0, exprs, ctx);
}

Value mlir::gpuopt::detail::elementwise(
    OpBuilder &b, Location loc, RankedTensorType resultType, ValueRange inputs,
    ArrayRef<AffineMap> inputMaps,
    function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  Value init = tensor::EmptyOp::create(b, loc, resultType.getShape(),
                                       resultType.getElementType());
  SmallVector<AffineMap> maps(inputMaps);
  maps.push_back(b.getMultiDimIdentityMap(resultType.getRank()));
  SmallVector<utils::IteratorType> iterators(resultType.getRank(),
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, resultType, inputs, init, maps, iterators,
      [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
        Value result = body(nested, nestedLoc, args.drop_back());
        linalg::YieldOp::create(nested, nestedLoc, result);
      });
  return generic.getResult(0);
}

Value mlir::gpuopt::detail::applySigmoid(OpBuilder &b, Location loc, Value x) {
  Type type = x.getType();
  auto c = [&](double v) { return floatConstant(b, loc, type, v); };
  Value e = math::ExpOp::create(b, loc, arith::NegFOp::create(b, loc, x));
  return arith::DivFOp::create(b, loc, c(1.0),
                               arith::AddFOp::create(b, loc, c(1.0), e));
}

Value mlir::gpuopt::detail::applyActivation(OpBuilder &b, Location loc, Value x,
                                            seg::Activation activation) {
  Type type = x.getType();
  auto c = [&](double v) { return floatConstant(b, loc, type, v); };
  switch (activation) {
  case seg::Activation::None:
    return x;
  case seg::Activation::Relu:
    return arith::MaximumFOp::create(b, loc, x, c(0.0));
  case seg::Activation::Gelu: {
    // x/2 * (1 + erf(x / sqrt(2)))
    Value e = math::ErfOp::create(
        b, loc, arith::MulFOp::create(b, loc, x, c(0.7071067811865476)));
    Value half = arith::MulFOp::create(b, loc, x, c(0.5));
    return arith::MulFOp::create(b, loc, half,
                                 arith::AddFOp::create(b, loc, c(1.0), e));
  }
  case seg::Activation::GeluTanh: {
    // x/2 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3)))
    Value x3 =
        arith::MulFOp::create(b, loc, x, arith::MulFOp::create(b, loc, x, x));
    Value inner = arith::AddFOp::create(
        b, loc, x, arith::MulFOp::create(b, loc, x3, c(0.044715)));
    Value t = math::TanhOp::create(
        b, loc, arith::MulFOp::create(b, loc, inner, c(0.7978845608028654)));
    Value half = arith::MulFOp::create(b, loc, x, c(0.5));
    return arith::MulFOp::create(b, loc, half,
                                 arith::AddFOp::create(b, loc, c(1.0), t));
  }
  }
  llvm_unreachable("unknown seg::Activation");
}

Value mlir::gpuopt::detail::reshapeTensor(OpBuilder &b, Location loc, Value x,
                                          RankedTensorType type) {
  RankedTensorType from = tensorTypeOf(x);
  if (from == type)
    return x;
  auto all = [](int64_t rank) {
    ReassociationIndices r;
    for (int64_t i = 0; i < rank; ++i)
      r.push_back(i);
    return SmallVector<ReassociationIndices>{r};
  };
  Value flat = x;
  if (from.getRank() != 1)
    flat = tensor::CollapseShapeOp::create(b, loc, x, all(from.getRank()));
  if (type.getRank() == 1)
    return flat;
  return tensor::ExpandShapeOp::create(b, loc, type, flat, all(type.getRank()));
}

Value mlir::gpuopt::detail::channelShift(OpBuilder &b, Location loc, Value x,
                                         ArrayRef<int64_t> offsetsH,
                                         ArrayRef<int64_t> offsetsW,
                                         bool cyclic) {
  if (offsetsH.empty() && offsetsW.empty())
    return x;
  RankedTensorType type = tensorTypeOf(x);
  int64_t channels = type.getDimSize(1);
  // The per-channel offsets as a constant i64 tensor [2, C].
  SmallVector<int64_t> table;
  for (int64_t c = 0; c < channels; ++c)
    table.push_back(offsetsH.empty() ? 0 : offsetsH[c]);
  for (int64_t c = 0; c < channels; ++c)
    table.push_back(offsetsW.empty() ? 0 : offsetsW[c]);
  auto tableType = RankedTensorType::get({2, channels}, b.getI64Type());
  Value offsets = arith::ConstantOp::create(
      b, loc, DenseIntElementsAttr::get(tableType, ArrayRef<int64_t>(table)));
  Value zero = floatConstant(b, loc, type.getElementType(), 0.0);
  return elementwise(
      b, loc, type, {}, {},
      [&](OpBuilder &nb, Location l, ValueRange) -> Value {
        auto idx = [&](int64_t d) { return linalg::IndexOp::create(nb, l, d); };
        auto cst = [&](int64_t v) {
          return arith::ConstantIndexOp::create(nb, l, v);
        };
        Value n = idx(0), c = idx(1), h = idx(2), w = idx(3);
        auto source = [&](Value i, int64_t row, int64_t size) {
          Value off = tensor::ExtractOp::create(nb, l, offsets,
                                                ValueRange{cst(row), c});
          Value s = arith::SubIOp::create(
              nb, l, i,
              arith::IndexCastOp::create(nb, l, nb.getIndexType(), off));
          if (cyclic) // ((s mod L) + L) mod L
            s = arith::RemSIOp::create(
                nb, l,
                arith::AddIOp::create(
                    nb, l, arith::RemSIOp::create(nb, l, s, cst(size)),
                    cst(size)),
                cst(size));
          return s;
        };
        Value sh = source(h, 0, type.getDimSize(2));
        Value sw = source(w, 1, type.getDimSize(3));
        if (cyclic)
          return tensor::ExtractOp::create(nb, l, x, ValueRange{n, c, sh, sw});
        auto inRange = [&](Value s, int64_t size) {
          Value ge = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::sge, s,
                                           cst(0));
          Value lt = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::slt, s,
                                           cst(size));
          return arith::AndIOp::create(nb, l, ge, lt);
        };
        Value valid =
            arith::AndIOp::create(nb, l, inRange(sh, type.getDimSize(2)),
                                  inRange(sw, type.getDimSize(3)));
        auto clamp = [&](Value s, int64_t size) {
          return arith::MinSIOp::create(
              nb, l, arith::MaxSIOp::create(nb, l, s, cst(0)), cst(size - 1));
        };
        Value v = tensor::ExtractOp::create(
            nb, l, x,
            ValueRange{n, c, clamp(sh, type.getDimSize(2)),
                       clamp(sw, type.getDimSize(3))});
        return arith::SelectOp::create(nb, l, valid, v, zero);
      });
}

Value mlir::gpuopt::detail::groupShift(OpBuilder &b, Location loc, Value x,
                                       int64_t groupDim, ArrayRef<int64_t> dims,
                                       ArrayRef<int64_t> offsets, bool cyclic) {
  RankedTensorType type = tensorTypeOf(x);
  int64_t groups = type.getDimSize(groupDim);
  int64_t rows = static_cast<int64_t>(dims.size());
  // The offsets as a constant i64 tensor [K, G].
  auto tableType = RankedTensorType::get({rows, groups}, b.getI64Type());
  Value table = arith::ConstantOp::create(
      b, loc, DenseIntElementsAttr::get(tableType, offsets));
  Value zero = floatConstant(b, loc, type.getElementType(), 0.0);
  return elementwise(
      b, loc, type, {}, {},
      [&](OpBuilder &nb, Location l, ValueRange) -> Value {
        auto cst = [&](int64_t v) {
          return arith::ConstantIndexOp::create(nb, l, v);
        };
        SmallVector<Value> indices;
        for (int64_t d = 0; d < type.getRank(); ++d)
          indices.push_back(linalg::IndexOp::create(nb, l, d));
        Value group = indices[groupDim];
        Value valid;
        for (auto [k, dim] : llvm::enumerate(dims)) {
          int64_t size = type.getDimSize(dim);
          Value off = tensor::ExtractOp::create(
              nb, l, table, ValueRange{cst(static_cast<int64_t>(k)), group});
          // Normalized offsets: the source is in (-L, L) when cyclic and in
          // [-L, 2L) when zero-filled.
          // One op per statement: the IR does not depend on the order in
          // which the compiler evaluates arguments.
          Value index =
              arith::IndexCastOp::create(nb, l, nb.getIndexType(), off);
          Value s = arith::SubIOp::create(nb, l, indices[dim], index);
          if (cyclic) {
            Value wrapped = arith::AddIOp::create(nb, l, s, cst(size));
            indices[dim] = arith::RemSIOp::create(nb, l, wrapped, cst(size));
            continue;
          }
          Value ge = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::sge, s,
                                           cst(0));
          Value lt = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::slt, s,
                                           cst(size));
          Value inRange = arith::AndIOp::create(nb, l, ge, lt);
          valid =
              valid ? arith::AndIOp::create(nb, l, valid, inRange) : inRange;
          Value low = arith::MaxSIOp::create(nb, l, s, cst(0));
          indices[dim] = arith::MinSIOp::create(nb, l, low, cst(size - 1));
        }
        Value v = tensor::ExtractOp::create(nb, l, x, indices);
        if (!valid)
          return v;
        return arith::SelectOp::create(nb, l, valid, v, zero);
      });
}
