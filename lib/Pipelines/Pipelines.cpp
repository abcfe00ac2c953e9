//===- Pipelines.cpp - gpuopt pass pipelines ------------------------------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Pipelines/Pipelines.h"

#include "gpuopt/Conversion/Passes.h"
#include "gpuopt/Dialect/Seg/Transforms/Passes.h"

#include "mlir/Conversion/ConvertToLLVM/ToLLVMPass.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/Transforms/RequestCWrappers.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/StandardInstrumentations.h"

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
      fn.addPass(seg::createFuseRollPass({options.report}));
  };
  addRollPass();
  if (options.simplifyTokenLayout) {
    fn.addPass(seg::createSimplifyTokenLayoutPass());
    // Token linears are now convolutions: shifts in front of them fold too.
    addRollPass();
  }
  if (options.fuseConvBnRelu)
    fn.addPass(seg::createFuseConvBnReluPass({options.report}));
  fn.addPass(createCanonicalizerPass());
  fn.addPass(createCSEPass());
}

LogicalResult
mlir::gpuopt::buildCpuLoweringPipeline(OpPassManager &pm,
                                       const CpuLoweringOptions &options) {
  // First: bufferization recurses on call cycles, and sizes must fit int64.
  // Then no calls: One-Shot Bufferize with copy-before-write reads
  // uninitialized analysis state at a func.call (valgrind, ASan in the
  // seg-lowering fuzzer). No default pipeline: nothing to re-optimize.
  pm.addPass(seg::createVerifyLowerablePass());
  pm.addPass(createInlinerPass({}, [](OpPassManager &) {}));
  if (options.kernels)
    pm.addPass(createConvertSegToCpuKernelsPass());
  pm.addPass(createConvertSegToLinalgPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // A shift no consumer absorbs (ShiftViT's x + shift(x)) goes into its
  // elementwise consumer's loop nest, as the CUDA pipeline's elementwise
  // fusion does; only gathers (unrestricted, the fused relu + add of
  // cpu-levels.mlir was no longer vectorized).
  pm.addNestedPass<func::FuncOp>(createFuseGathersIntoElementwisePass());
  // copy-before-write: the kernel calls of --convert-seg-to-cpu-kernels read
  // their operands through bufferization.to_buffer, which One-Shot Analysis
  // does not model as a later read, so in-place decisions could overwrite a
  // buffer a kernel still reads (seen on Rolling-UNet-S after --fuse-roll
  // alone). Copying before every in-place write removes the hazard; it adds
  // few copies here because seg ops produce fresh tensors (6 on
  // Rolling-UNet-S, 4 on UNet).
  addBufferizationPasses(pm, /*copyBeforeWrite=*/true);
  pm.addNestedPass<func::FuncOp>(LLVM::createLLVMRequestCWrappersPass());
  // Both linear in the op count (docs/Reliability.md, "Compile time"):
  // upstream's ownership-based deallocation is quadratic on a graph's one big
  // function, and lowering it to loops and through LLVM as one function is
  // too.
  pm.addNestedPass<func::FuncOp>(createFreeBuffersAfterLastUsePass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createOutlineLinalgOpsPass());
  {
    OpPassManager &fn = pm.nest<func::FuncOp>();
    fn.addPass(createConvertLinalgToLoopsPass());
    fn.addPass(createSplitLongBlocksPass());
  }
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createConvertMathToLibmPass());
  // Buffers through gpuopt's allocator (runtime/cpu/Allocator.cpp).
  FinalizeMemRefToLLVMConversionPassOptions memrefToLlvm;
  memrefToLlvm.useGenericFunctions = true;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefToLlvm));
  pm.addPass(createConvertToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  return success();
}

std::function<llvm::Error(llvm::Module *)>
mlir::gpuopt::makeLlvmOptimizer(llvm::TargetMachine *targetMachine) {
  return [targetMachine](llvm::Module *module) -> llvm::Error {
    // The new pass manager skips optnone functions only through this
    // instrumentation; a bare PassBuilder optimizes them like any other.
    llvm::PassInstrumentationCallbacks callbacks;
    llvm::OptNoneInstrumentation optNone(/*DebugLogging=*/false);
    optNone.registerCallbacks(callbacks);
    // CalledValuePropagation is interprocedural: it walks every function,
    // optnone or not, and took 20 of 22 seconds of -O3 on a 10^4-op graph
    // (docs/benchmarks/compile-time.md). It only annotates indirect calls,
    // and the generated code makes none.
    callbacks.registerShouldRunOptionalPassCallback(
        [](llvm::StringRef pass, llvm::Any) {
          return pass != "CalledValuePropagationPass";
        });
    llvm::PipelineTuningOptions tuning;
    tuning.LoopUnrolling = true;
    tuning.LoopInterleaving = true;
    tuning.LoopVectorization = true;
    tuning.SLPVectorization = true;
    llvm::PassBuilder builder(targetMachine, tuning, std::nullopt, &callbacks);
    llvm::LoopAnalysisManager loops;
    llvm::FunctionAnalysisManager functions;
    llvm::CGSCCAnalysisManager sccs;
    llvm::ModuleAnalysisManager modules;
    builder.registerModuleAnalyses(modules);
    builder.registerCGSCCAnalyses(sccs);
    builder.registerFunctionAnalyses(functions);
    builder.registerLoopAnalyses(loops);
    builder.crossRegisterProxies(loops, functions, sccs, modules);
    builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3)
        .run(*module, modules);
    return llvm::Error::success();
  };
}

void mlir::gpuopt::addBufferizationPasses(OpPassManager &pm,
                                          bool copyBeforeWrite) {
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.copyBeforeWrite = copyBeforeWrite;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  pm.addNestedPass<func::FuncOp>(createUniqueReturnBuffersPass());
  bufferization::BufferResultsToOutParamsPassOptions outParams;
  outParams.modifyPublicFunctions = true;
  outParams.hoistStaticAllocs = true;
  pm.addPass(bufferization::createBufferResultsToOutParamsPass(outParams));
}

void mlir::gpuopt::registerPipelines() {
  registerCheckedPipeline<CpuLoweringOptions>(
      "gpuopt-cpu-lowering",
      "Lower a seg module to the LLVM dialect for the CPU (convolutions and "
      "linear layers -> kernel calls, the rest -> linalg -> buffers -> loops "
      "-> LLVM), with C interfaces",
      [](OpPassManager &pm, const CpuLoweringOptions &options,
         PipelineErrorHandler error) -> LogicalResult {
        if (failed(buildCpuLoweringPipeline(pm, options)))
          return error("gpuopt-cpu-lowering: cannot build the pipeline");
        return success();
      });
  registerCheckedPipeline<OptimizeOptions>(
      "gpuopt-optimize",
      "Run gpuopt's graph optimizations: --fuse-roll (or, with deform-conv, "
      "--roll-to-deform-conv), --simplify-token-layout, --fuse-conv-bn-relu, "
      "canonicalize, cse",
      [](OpPassManager &pm, const OptimizeOptions &options,
         PipelineErrorHandler) -> LogicalResult {
        buildOptimizePipeline(pm, options);
        return success();
      });
}
