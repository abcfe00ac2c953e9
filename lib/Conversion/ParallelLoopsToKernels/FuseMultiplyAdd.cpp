//===- FuseMultiplyAdd.cpp - multiply-adds of kernels as math.fma ---------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// Implements --fuse-multiply-add: in GPU kernels, arith.addf of an
// arith.mulf that has no other use becomes math.fma, explicitly, so that the
// PTX and the emulator's host build compute the same fused operation.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace gpuopt {
#define GEN_PASS_DEF_FUSEMULTIPLYADDPASS
#include "gpuopt/Conversion/Passes.h.inc"
} // namespace gpuopt
} // namespace mlir

using namespace mlir;

namespace {

/// The product `v` is, when nothing else uses it.
arith::MulFOp soleProduct(Value v) {
  auto mul = v.getDefiningOp<arith::MulFOp>();
  if (!mul || !mul->hasOneUse())
    return nullptr;
  return mul;
}

struct FuseMultiplyAddPass
    : public gpuopt::impl::FuseMultiplyAddPassBase<FuseMultiplyAddPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    uint64_t count = 0;
    getOperation()->walk([&](gpu::GPUFuncOp func) {
      func->walk([&](Operation *op) {
        auto add = dyn_cast<arith::AddFOp>(op);
        auto sub = dyn_cast<arith::SubFOp>(op);
        if (!add && !sub)
          return;
        Value lhs = op->getOperand(0), rhs = op->getOperand(1);
        // c + a·b, a·b + c; c − a·b = fma(−a, b, c); a·b − c = fma(a, b, −c)
        // (negation is exact: one rounding, as for the add).
        arith::MulFOp mul = soleProduct(rhs);
        bool productFirst = false;
        if (!mul) {
          mul = soleProduct(lhs);
          productFirst = true;
        }
        if (!mul)
          return;
        Value other = productFirst ? rhs : lhs;
        Value a = mul.getLhs();
        rewriter.setInsertionPoint(op);
        if (sub && productFirst)
          other = arith::NegFOp::create(rewriter, op->getLoc(), other);
        else if (sub)
          a = arith::NegFOp::create(rewriter, op->getLoc(), a);
        rewriter.replaceOpWithNewOp<math::FmaOp>(op, a, mul.getRhs(), other);
        rewriter.eraseOp(mul);
        ++count;
      });
    });
    numFused += count;
  }
};

} // namespace
