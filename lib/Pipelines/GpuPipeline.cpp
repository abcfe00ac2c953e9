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

FailureOr<SmallVector<std::string>>
mlir::gpuopt::parseCudaChips(StringRef chips, std::string &error) {
  SmallVector<StringRef> parts;
  chips.split(parts, ',');
  SmallVector<std::string> result;
  for (StringRef part : parts) {
    StringRef chip = part;
    unsigned sm = 0;
    if (!part.consume_front("sm_") || part.getAsInteger(10, sm) || sm < 50) {
      error =
          ("must be sm_NN[,sm_MM...] with NN >= 50, got '" + chips + "'").str();
      return failure();
    }
    result.push_back(chip.str());
  }
  return result;
}

mlir::gpuopt::CudaTargetOptions
mlir::gpuopt::GpuLoweringOptions::getTargetOptions() const {
  CudaTargetOptions options;
  options.chip = chip;
  options.features = features;
  options.format = format;
  options.toolkit = toolkit;
  options.blockSize = blockSize;
  options.optLevel = optLevel;
  return options;
}

LogicalResult
mlir::gpuopt::buildGpuKernelPipeline(OpPassManager &pm,
                                     const CudaTargetOptions &options) {
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
                                     const CudaTargetOptions &options,
                                     bool serialize, std::string &error) {
  FailureOr<SmallVector<std::string>> chips =
      parseCudaChips(options.chip, error);
  if (failed(chips)) {
    error = "chip " + error;
    return failure();
  }
  std::string pipeline;
  // One target per chip: the kernels are lowered once and serialized once
  // per target.
  for (const std::string &chip : *chips)
    pipeline += llvm::formatv("nvvm-attach-target{{chip={0} features={1} "
                              "O={2}},",
                              chip, options.features, options.optLevel)
                    .str();
  pipeline +=
      "gpu.module(expand-strided-metadata,lower-affine,convert-scf-to-cf,"
      "convert-gpu-to-nvvm{index-bitwidth=64 use-bare-ptr-memref-call-conv=1},"
      "canonicalize,cse,reconcile-unrealized-casts)";
  if (serialize)
    pipeline += llvm::formatv(",gpu-module-to-binary{{format={0} toolkit={1}}",
                              options.format, options.toolkit)
                    .str();
  llvm::raw_string_ostream es(error);
  return parsePassPipeline(pipeline, pm, es);
}

void mlir::gpuopt::registerGpuPipelines() {
  // Registered by hand (not PassPipelineRegistration) so that a chip list
  // the parser refuses is an error of the pipeline, not a partial one.
  registerPassPipeline(
      "gpuopt-gpu-lowering",
      "Lower a seg module for NVIDIA GPUs: seg -> linalg -> buffers -> "
      "parallel loops -> one kernel per loop nest (gpu.launch_func on the "
      "host) -> NVVM -> PTX/cubin in a gpu.binary",
      [](OpPassManager &pm, StringRef text,
         function_ref<LogicalResult(const Twine &)> errorHandler) {
        GpuLoweringOptions options;
        if (failed(options.parseFromString(text)))
          return failure();
        CudaTargetOptions target = options.getTargetOptions();
        std::string error;
        // gpuopt-opt registers every pass the pipeline names.
        if (failed(buildGpuKernelPipeline(pm, target)))
          return failure();
        if (failed(
                buildGpuBinaryPipeline(pm, target, options.serialize, error)))
          return errorHandler(error);
        return success();
      },
      [](function_ref<void(const detail::PassOptions &)> optHandler) {
        optHandler(GpuLoweringOptions());
      });
}
