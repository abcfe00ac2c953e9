//===- GpuPipeline.cpp - the NVPTX lowering pipeline ----------------------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Pipelines/GpuPipeline.h"

#include "gpuopt/Conversion/Passes.h"
#include "gpuopt/Dialect/Seg/Transforms/Passes.h"

#include "gpuopt/Pipelines/Pipelines.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

using namespace mlir;

LogicalResult
mlir::gpuopt::buildGpuKernelPipeline(OpPassManager &pm,
                                     const GpuLoweringOptions &options) {
  // First: bufferization recurses on call cycles, and sizes must fit int64.
  // Then no calls: the kernel outlining and the CUDA launch plan take one
  // host function.
  pm.addPass(seg::createVerifyLowerablePass());
  pm.addPass(createInlinerPass({}, [](OpPassManager &) {}));
  pm.addPass(createConvertSegToLinalgPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  {
    OpPassManager &fn = pm.nest<func::FuncOp>();
    fn.addPass(createLinalgElementwiseOpFusionPass());
    fn.addPass(createUnshareInitTensorsPass());
  }
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  pm.addNestedPass<func::FuncOp>(createUniqueReturnBuffersPass());
  bufferization::BufferResultsToOutParamsPassOptions outParams;
  outParams.modifyPublicFunctions = true;
  outParams.hoistStaticAllocs = true;
  pm.addPass(bufferization::createBufferResultsToOutParamsPass(outParams));
  pm.addPass(createCanonicalizerPass());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToParallelLoopsPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  ConvertParallelLoopsToKernelsPassOptions kernelOptions;
  kernelOptions.blockSize = options.blockSize;
  pm.addPass(createConvertParallelLoopsToKernelsPass(kernelOptions));
  // Canonical kernels first, so that copies compare equal; the back end
  // then compiles each distinct kernel once (docs/Reliability.md, "Compile
  // time").
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createDeduplicateGpuKernelsPass());
  return success();
}

SmallVector<std::string>
mlir::gpuopt::splitGpuChips(const GpuLoweringOptions &options) {
  SmallVector<StringRef> parts;
  StringRef(options.chip).split(parts, ',', -1, /*KeepEmpty=*/false);
  SmallVector<std::string> chips;
  for (StringRef chip : parts)
    if (!chip.trim().empty())
      chips.push_back(chip.trim().str());
  return chips;
}

LogicalResult
mlir::gpuopt::buildGpuBinaryPipeline(OpPassManager &pm,
                                     const GpuLoweringOptions &options) {
  SmallVector<std::string> chips = splitGpuChips(options);
  if (chips.empty())
    return failure();
  // One target per chip: the kernels are lowered once and serialized once
  // per target.
  for (const std::string &chip : chips) {
    GpuNVVMAttachTargetOptions target;
    target.chip = chip;
    target.features = options.features;
    target.optLevel = options.optLevel;
    pm.addPass(createGpuNVVMAttachTarget(target));
  }
  {
    OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
    kernels.addPass(memref::createExpandStridedMetadataPass());
    kernels.addPass(createLowerAffinePass());
    kernels.addPass(createSCFToControlFlowPass());
    ConvertGpuOpsToNVVMOpsOptions toNvvm;
    toNvvm.indexBitwidth = 64;
    toNvvm.useBarePtrCallConv = true;
    kernels.addPass(createConvertGpuOpsToNVVMOps(toNvvm));
    kernels.addPass(createCanonicalizerPass());
    kernels.addPass(createCSEPass());
    kernels.addPass(createReconcileUnrealizedCastsPass());
  }
  if (options.serialize) {
    GpuModuleToBinaryPassOptions binary;
    binary.compilationTarget = options.format;
    binary.toolkitPath = options.toolkit;
    pm.addPass(createGpuModuleToBinaryPass(binary));
  }
  return success();
}

void mlir::gpuopt::registerGpuPipelines() {
  registerCheckedPipeline<GpuLoweringOptions>(
      "gpuopt-gpu-lowering",
      "Lower a seg module for NVIDIA GPUs: seg -> linalg -> buffers -> "
      "parallel loops -> one kernel per loop nest (gpu.launch_func on the "
      "host) -> NVVM -> PTX/cubin in a gpu.binary",
      [](OpPassManager &pm, const GpuLoweringOptions &options,
         PipelineErrorHandler error) -> LogicalResult {
        if (splitGpuChips(options).empty())
          return error("gpuopt-gpu-lowering: option 'chip' names no NVPTX "
                       "chip (expected e.g. chip=sm_90 or chip=sm_80,sm_90)");
        if (failed(buildGpuKernelPipeline(pm, options)) ||
            failed(buildGpuBinaryPipeline(pm, options)))
          return error("gpuopt-gpu-lowering: cannot build the pipeline");
        return success();
      });
}
