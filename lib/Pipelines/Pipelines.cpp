//===- Pipelines.cpp - gpuopt pass pipelines ------------------------------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Pipelines/Pipelines.h"

#include "gpuopt/Dialect/Seg/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void mlir::gpuopt::buildOptimizePipeline(OpPassManager &pm,
                                         const OptimizeOptions &options) {
  OpPassManager &fn = pm.nest<func::FuncOp>();
  // Rolls first: collapsing them needs the exporter's slice/roll/concat
  // shapes, and folding them needs the token linears still in place.
  auto addRollPass = [&] {
    if (options.deformConv)
      fn.addPass(seg::createRollToDeformConvPass());
    else if (options.fuseRoll)
      fn.addPass(seg::createFuseRollPass());
  };
  addRollPass();
  if (options.simplifyTokenLayout) {
    fn.addPass(seg::createSimplifyTokenLayoutPass());
    // Token linears are now convolutions: shifts in front of them fold too.
    addRollPass();
  }
  if (options.fuseConvBnRelu)
    fn.addPass(seg::createFuseConvBnReluPass());
  fn.addPass(createCanonicalizerPass());
  fn.addPass(createCSEPass());
}

void mlir::gpuopt::registerPipelines() {
  PassPipelineRegistration<OptimizeOptions>(
      "gpuopt-optimize",
      "Run gpuopt's graph optimizations: --fuse-roll (or, with deform-conv, "
      "--roll-to-deform-conv), --simplify-token-layout, --fuse-conv-bn-relu, "
      "canonicalize, cse",
      buildOptimizePipeline);
}
