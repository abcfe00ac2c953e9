//===- FuseGathersIntoElementwise.cpp - gathers into their consumer ------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// Implements --fuse-gathers-into-elementwise: upstream's elementwise fusion
// patterns with a control function that only lets gathers (the lowering of
// seg.shift / seg.channel_shift: a linalg.generic without inputs that reads a
// float tensor through tensor.extract) of one use fuse into their consumer.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Conversion/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir {
namespace gpuopt {
#define GEN_PASS_DEF_FUSEGATHERSINTOELEMENTWISEPASS
#include "gpuopt/Conversion/Passes.h.inc"
} // namespace gpuopt
} // namespace mlir

using namespace mlir;

namespace {

/// Whether `op` is a gather: a generic without inputs, one result, whose
/// body extracts from a float tensor.
bool isGather(Operation *op) {
  auto generic = dyn_cast_or_null<linalg::GenericOp>(op);
  if (!generic || generic.getNumDpsInputs() != 0 ||
      generic->getNumResults() != 1)
    return false;
  bool extractsFloat = false;
  generic.getBody()->walk([&](tensor::ExtractOp extract) {
    if (isa<FloatType>(extract.getType()))
      extractsFloat = true;
  });
  return extractsFloat;
}

struct FuseGathersIntoElementwisePass
    : public gpuopt::impl::FuseGathersIntoElementwisePassBase<
          FuseGathersIntoElementwisePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    linalg::populateElementwiseOpsFusionPatterns(
        patterns, [](OpOperand *fused) {
          Operation *producer = fused->get().getDefiningOp();
          return isGather(producer) && producer->hasOneUse();
        });
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
