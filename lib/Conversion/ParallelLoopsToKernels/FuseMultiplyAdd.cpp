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
      func->walk([&](arith::AddFOp add) {
        Value other = add.getLhs();
        arith::MulFOp mul = soleProduct(add.getRhs());
        if (!mul) {
          mul = soleProduct(add.getLhs());
          other = add.getRhs();
        }
        if (!mul)
          return;
        rewriter.setInsertionPoint(add);
        rewriter.replaceOpWithNewOp<math::FmaOp>(add, mul.getLhs(),
                                                 mul.getRhs(), other);
        rewriter.eraseOp(mul);
        ++count;
      });
    });
    numFused += count;
  }
};

} // namespace
