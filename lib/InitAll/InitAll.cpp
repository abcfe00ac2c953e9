//===- InitAll.cpp - register everything gpuopt tools need ---------------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/InitAll.h"

#include "gpuopt/Dialect/Seg/IR/SegDialect.h"
#include "gpuopt/Dialect/Seg/Transforms/Passes.h"
#include "gpuopt/Pipelines/Pipelines.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Transforms/Passes.h"

void mlir::gpuopt::registerAllDialects(DialectRegistry &registry) {
  registry.insert<seg::SegDialect, func::FuncDialect, arith::ArithDialect,
                  tensor::TensorDialect, linalg::LinalgDialect,
                  math::MathDialect>();
}

void mlir::gpuopt::registerAllPasses() {
  // Generic transformations: canonicalize, cse, inline, symbol-dce, ...
  registerTransformsPasses();
  seg::registerSegPasses();
  registerPipelines();
}
