//===- InitAll.cpp - register everything gpuopt tools need ---------------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/InitAll.h"

#include "gpuopt/Analysis/Passes.h"
#include "gpuopt/Conversion/Passes.h"
#include "gpuopt/Dialect/Seg/IR/SegDialect.h"
#include "gpuopt/Dialect/Seg/Transforms/Passes.h"
#include "gpuopt/Pipelines/GpuPipeline.h"
#include "gpuopt/Pipelines/Pipelines.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"

void mlir::gpuopt::registerAllDialects(DialectRegistry &registry) {
  registry.insert<seg::SegDialect>();
  // The upstream dialects, with their bufferization and to-LLVM interfaces:
  // the CPU and NVPTX pipelines run over all of them.
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  // gpu-module-to-binary translates kernel modules to LLVM IR.
  mlir::registerAllToLLVMIRTranslations(registry);
}

void mlir::gpuopt::registerAllPasses() {
  mlir::registerAllPasses();
  seg::registerSegPasses();
  registerAnalysisPasses();
  registerConversionPasses();
  registerPipelines();
  registerGpuPipelines();
}
