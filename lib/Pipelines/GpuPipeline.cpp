//===- GpuPipeline.cpp - the NVPTX lowering pipeline ----------------------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Pipelines/GpuPipeline.h"

#include "gpuopt/Conversion/Passes.h"
#include "gpuopt/Dialect/Seg/Transforms/Passes.h"

#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FormatVariadic.h"

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
  // Upstream passes by their registered names, as a user would type them.
  std::string upstream =
      "canonicalize,cse,func.func(linalg-fuse-elementwise-ops,"
      "unshare-init-tensors),"
      "one-shot-bufferize{bufferize-function-boundaries=1 "
      "function-boundary-type-conversion=identity-layout-map},"
      "func.func(unique-return-buffers),"
      "buffer-results-to-out-params{modify-public-functions=1 "
      "hoist-static-allocs=1},"
      "canonicalize,func.func(convert-linalg-to-parallel-loops),"
      "canonicalize,cse";
  if (failed(parsePassPipeline(upstream, pm)))
    return failure();
  ConvertParallelLoopsToKernelsPassOptions kernelOptions;
  kernelOptions.blockSize = options.blockSize;
  pm.addPass(createConvertParallelLoopsToKernelsPass(kernelOptions));
  // Canonical kernels first, so that copies compare equal; the back end
  // then compiles each distinct kernel once (docs/Reliability.md, "Compile
  // time").
  if (failed(parsePassPipeline("canonicalize,cse", pm)))
    return failure();
  pm.addPass(createDeduplicateGpuKernelsPass());
  return success();
}

LogicalResult
mlir::gpuopt::buildGpuBinaryPipeline(OpPassManager &pm,
                                     const GpuLoweringOptions &options) {
  std::string pipeline;
  SmallVector<StringRef> chips;
  StringRef(options.chip).split(chips, ',', -1, /*KeepEmpty=*/false);
  // One target per chip: the kernels are lowered once and serialized once
  // per target.
  for (StringRef chip : chips)
    pipeline += llvm::formatv("nvvm-attach-target{{chip={0} features={1} "
                              "O={2}},",
                              chip.trim(), options.features, options.optLevel)
                    .str();
  pipeline +=
      "gpu.module(expand-strided-metadata,lower-affine,convert-scf-to-cf,"
      "convert-gpu-to-nvvm{index-bitwidth=64 use-bare-ptr-memref-call-conv=1},"
      "canonicalize,cse,reconcile-unrealized-casts)";
  if (options.serialize)
    pipeline += llvm::formatv(",gpu-module-to-binary{{format={0} toolkit={1}}",
                              options.format, options.toolkit)
                    .str();
  return parsePassPipeline(pipeline, pm);
}

void mlir::gpuopt::registerGpuPipelines() {
  PassPipelineRegistration<GpuLoweringOptions>(
      "gpuopt-gpu-lowering",
      "Lower a seg module for NVIDIA GPUs: seg -> linalg -> buffers -> "
      "parallel loops -> one kernel per loop nest (gpu.launch_func on the "
      "host) -> NVVM -> PTX/cubin in a gpu.binary",
      [](OpPassManager &pm, const GpuLoweringOptions &options) {
        // gpuopt-opt registers every pass the pipeline names.
        (void)buildGpuKernelPipeline(pm, options);
        (void)buildGpuBinaryPipeline(pm, options);
      });
}
