//===- GpuPipeline.cpp - the NVPTX lowering pipeline ----------------------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Pipelines/GpuPipeline.h"

#include "gpuopt/Conversion/Passes.h"
#include "gpuopt/Dialect/Seg/Transforms/Passes.h"

#include "gpuopt/Pipelines/Pipelines.h"

#include "mlir/Conversion/ConvertToLLVM/ToLLVMPass.h"
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

/// The oldest PTX ISA version (major * 10 + minor) LLVM's NVPTX back end
/// accepts for sm_`sm`, where that is newer than 8.0 (the default
/// features'); 0 otherwise.
static unsigned getMinimumPtxVersion(unsigned sm) {
  switch (sm) {
  case 100:
  case 101:
    return 86;
  case 120:
    return 87;
  case 103:
  case 121:
    return 88;
  case 110:
    return 90;
  default:
    return 0;
  }
}

/// The NN of a chip `sm_NN` that parseCudaChips accepted.
static unsigned getSmVersion(StringRef chip) {
  unsigned sm = 0;
  (void)chip.drop_front(3).getAsInteger(10, sm);
  return sm;
}

/// `features` for `chip` (sm_NN, checked): a `+ptxNN` older than the chip's
/// minimum PTX version raised to it, which the back end would otherwise
/// abort on ("PTX version 8.0 does not support target 'sm_120'").
static std::string getChipFeatures(StringRef features, StringRef chip) {
  unsigned minimum = getMinimumPtxVersion(getSmVersion(chip));
  if (!minimum)
    return features.str();
  SmallVector<StringRef> parts;
  features.split(parts, ',', -1, /*KeepEmpty=*/false);
  std::string result;
  for (StringRef part : parts) {
    unsigned version = 0;
    bool old = part.starts_with("+ptx") &&
               !part.drop_front(4).getAsInteger(10, version) &&
               version < minimum;
    result += (result.empty() ? "" : ",") +
              (old ? "+ptx" + std::to_string(minimum) : part.str());
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
  options.registerTile = registerTile;
  options.workgroupTile = workgroupTile;
  options.workgroupTileFuseNests = workgroupTileFuseNests;
  options.workgroupTilePrefetch = workgroupTilePrefetch;
  options.workgroupTileDoubleBuffer = workgroupTileDoubleBuffer;
  options.workgroupTileAsyncCopy = workgroupTileAsyncCopy;
  options.workgroupTileStages = workgroupTileStages;
  options.workgroupTileMaxThreadOutputs = workgroupTileMaxThreadOutputs;
  options.workgroupTileSplitK = workgroupTileSplitK;
  options.optLevel = optLevel;
  options.gpuConv = gpuConv;
  options.gpuConvDevice = gpuConvDevice;
  options.precision = precision;
  return options;
}

LogicalResult
mlir::gpuopt::checkGpuConvOptions(const CudaTargetOptions &options,
                                  bool deviceGiven, StringRef dashes,
                                  std::string &error) {
  auto check = [&](const char *name, StringRef value,
                   ArrayRef<const char *> known) {
    if (llvm::is_contained(known, value))
      return true;
    std::string names;
    for (auto [i, k] : llvm::enumerate(known))
      names += (i == 0                  ? ""
                : i + 1 == known.size() ? " or "
                                        : ", ") +
               std::string(k);
    error =
        (dashes + name + " must be " + names + ", got '" + value + "'").str();
    return false;
  };
  if (!check("gpu-conv", options.gpuConv, kGpuConvModes) ||
      !check("gpu-precision", options.precision, kGpuPrecisions))
    return failure();
  // A device model only "auto" predicts for: elsewhere it would be
  // silently ignored.
  if (deviceGiven && options.gpuConv != "auto") {
    error = (dashes + "gpu-conv-device applies to " + dashes +
             "gpu-conv=auto, not " + dashes + "gpu-conv=" + options.gpuConv)
                .str();
    return failure();
  }
  return success();
}

LogicalResult
mlir::gpuopt::buildGpuKernelPipeline(OpPassManager &pm,
                                     const CudaTargetOptions &options) {
  // First: bufferization recurses on call cycles, and sizes must fit int64.
  // Then no calls: the kernel outlining and the CUDA launch plan take one
  // host function.
  std::string error;
  if (failed(checkGpuConvOptions(options, /*deviceGiven=*/false, "", error)))
    return failure();
  pm.addPass(seg::createVerifyLowerablePass());
  pm.addPass(createInlinerPass({}, [](OpPassManager &) {}));
  // Library calls are made on tensors, before anything else lowers them.
  if (options.gpuConv != "generated") {
    ConvertSegToCudaLibraryPassOptions library;
    library.select = options.gpuConv == "auto" ? "auto" : "all";
    library.device = options.gpuConvDevice;
    library.precision = options.precision;
    library.workgroupTileMinBlocks = options.workgroupTileMinBlocks;
    library.workgroupTileMaxThreadOutputs =
        options.workgroupTileMaxThreadOutputs;
    library.workgroupTileSplitK = options.workgroupTileSplitK;
    pm.addPass(createConvertSegToCudaLibraryPass(library));
  }
  // Padding and shifts in the convolutions' operand loads: no padded or
  // gathered copies, so no fill, copy or gather kernels for them.
  ConvertSegToLinalgPassOptions toLinalg;
  toLinalg.remapConvInputs = true;
  pm.addPass(createConvertSegToLinalgPass(toLinalg));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  {
    OpPassManager &fn = pm.nest<func::FuncOp>();
    fn.addPass(createLinalgElementwiseOpFusionPass());
    // The fusion's reshapes of fills fold into the fills, so that a
    // reduction's init has its own shape (docs/CUDABackend.md, "fusion"),
    // and reductions become one thread per output.
    fn.addPass(createCanonicalizerPass());
    fn.addPass(createInterchangeReductionsInnermostPass());
    fn.addPass(createUnshareInitTensorsPass());
  }
  addBufferizationPasses(pm, /*copyBeforeWrite=*/false);
  pm.addPass(createCanonicalizerPass());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToParallelLoopsPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  ConvertParallelLoopsToKernelsPassOptions kernelOptions;
  kernelOptions.blockSize = options.blockSize;
  kernelOptions.registerTile = options.registerTile;
  kernelOptions.workgroupTile = options.workgroupTile;
  kernelOptions.workgroupTileMinBlocks = options.workgroupTileMinBlocks;
  kernelOptions.workgroupTileFuseNests = options.workgroupTileFuseNests;
  kernelOptions.workgroupTilePrefetch = options.workgroupTilePrefetch;
  kernelOptions.workgroupTileDoubleBuffer = options.workgroupTileDoubleBuffer;
  kernelOptions.workgroupTileStages = options.workgroupTileStages;
  kernelOptions.workgroupTileMaxThreadOutputs =
      options.workgroupTileMaxThreadOutputs;
  kernelOptions.workgroupTileSplitK = options.workgroupTileSplitK;
  // cp.async is sm_80's: on where every chip has it.
  if (options.workgroupTileAsyncCopy) {
    std::string error;
    FailureOr<SmallVector<std::string>> chips =
        parseCudaChips(options.chip, error);
    kernelOptions.workgroupTileAsyncCopy =
        succeeded(chips) && llvm::all_of(*chips, [](StringRef chip) {
          return getSmVersion(chip) >= 80;
        });
  }
  // TF32 is the precision of the whole plan: library steps and tiles alike.
  kernelOptions.workgroupTileTensorCores = options.precision == "tf32";
  pm.addPass(createConvertParallelLoopsToKernelsPass(kernelOptions));
  // Canonical kernels first, so that copies compare equal; the back end
  // then compiles each distinct kernel once (docs/Reliability.md, "Compile
  // time").
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createDeduplicateGpuKernelsPass());
  // Accumulators in registers, then multiply-adds fused (explicitly, so that
  // the host image the emulator runs computes what the GPU computes).
  pm.addPass(createPromoteLoopAccumulatorsPass());
  // Then an accumulator buffer only its kernel reads, after storing it,
  // goes: its values stay in those registers.
  pm.addPass(createEliminatePrivateKernelBuffersPass());
  pm.addPass(createFuseMultiplyAddPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
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
  // One target per chip: the kernels are lowered once and serialized once
  // per target.
  for (const std::string &chip : *chips) {
    GpuNVVMAttachTargetOptions target;
    target.chip = chip;
    target.features = getChipFeatures(options.features, chip);
    target.optLevel = options.optLevel;
    pm.addPass(createGpuNVVMAttachTarget(target));
  }
  {
    OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
    // Sound only with the runtime's plan checks (Passes.td); after the host
    // image was built from the kernels, which never see it.
    // A located error for an op a chip lacks, not the back end's abort.
    kernels.addPass(createVerifyKernelTargetsPass());
    kernels.addPass(createMarkKernelArgumentsNoAliasPass());
    // Warp-level matrix multiplies (nvgpu.mma.sync) to nvvm.mma.sync;
    // kernels without them are unchanged. Their fragments and the vector
    // loads go to LLVM with the rest in convert-gpu-to-nvvm, which maps the
    // workgroup address space (convert-vector-to-llvm before it cannot).
    kernels.addPass(createConvertNVGPUToNVVMPass());
    kernels.addPass(memref::createExpandStridedMetadataPass());
    kernels.addPass(createLowerAffinePass());
    kernels.addPass(createSCFToControlFlowPass());
    ConvertGpuOpsToNVVMOpsOptions toNvvm;
    toNvvm.indexBitwidth = 64;
    toNvvm.useBarePtrCallConv = true;
    kernels.addPass(createConvertGpuOpsToNVVMOps(toNvvm));
    // What that leaves of the vector dialect (an n-D vector.shape_cast the
    // canonicalizer makes of a TF32 B fragment read as one pair), after
    // every memref is a pointer.
    kernels.addPass(createConvertVectorToLLVMPass());
    kernels.addPass(createUBToLLVMConversionPass());
    kernels.addPass(createCanonicalizerPass());
    kernels.addPass(createCSEPass());
    kernels.addPass(createReconcileUnrealizedCastsPass());
  }
  if (serialize) {
    GpuModuleToBinaryPassOptions binary;
    binary.compilationTarget = options.format;
    binary.toolkitPath = options.toolkit;
    pm.addPass(createGpuModuleToBinaryPass(binary));
  }
  return success();
}

void mlir::gpuopt::buildGpuHostPipeline(OpPassManager &pm) {
  // Every load and store guarded: the emulator reports an out-of-bounds
  // access by kernel, step and thread instead of letting it happen.
  ConvertGpuKernelsToHostPassOptions host;
  host.boundsChecks = true;
  pm.addPass(createConvertGpuKernelsToHostPass(host));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  // The mma fragments (vectors) of the kernels.
  pm.addPass(createConvertVectorToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  // Bare pointers, as for NVVM: a kernel's arguments are the plan's buffer
  // addresses.
  ConvertFuncToLLVMPassOptions toLlvm;
  toLlvm.useBarePtrCallConv = true;
  pm.addPass(createConvertFuncToLLVMPass(toLlvm));
  pm.addPass(createConvertToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

void mlir::gpuopt::registerGpuPipelines() {
  // A chip list parseCudaChips refuses is an error of the pipeline, not a
  // partial one.
  registerCheckedPipeline<GpuLoweringOptions>(
      "gpuopt-gpu-lowering",
      "Lower a seg module for NVIDIA GPUs: seg -> linalg -> buffers -> "
      "parallel loops -> one kernel per loop nest (gpu.launch_func on the "
      "host) -> NVVM -> PTX/cubin in a gpu.binary",
      [](OpPassManager &pm, const GpuLoweringOptions &options,
         PipelineErrorHandler errorHandler) -> LogicalResult {
        CudaTargetOptions target = options.getTargetOptions();
        std::string error;
        if (failed(checkGpuConvOptions(target, options.gpuConvDevice.hasValue(),
                                       "", error)))
          return errorHandler(error);
        if (failed(buildGpuKernelPipeline(pm, target)))
          return errorHandler("gpuopt-gpu-lowering: cannot build the kernel "
                              "pipeline");
        if (failed(
                buildGpuBinaryPipeline(pm, target, options.serialize, error)))
          return errorHandler(error);
        return success();
      });
}
