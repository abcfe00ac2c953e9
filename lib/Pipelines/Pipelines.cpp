//===- Pipelines.cpp - gpuopt pass pipelines ------------------------------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Pipelines/Pipelines.h"

#include "gpuopt/Conversion/Passes.h"
#include "gpuopt/Dialect/Seg/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
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
  // Upstream passes, by their registered names (the pipeline reads as the
  // textual form a user would type).
  // copy-before-write: the kernel calls of --convert-seg-to-cpu-kernels read
  // their operands through bufferization.to_buffer, which One-Shot Analysis
  // does not model as a later read, so in-place decisions could overwrite a
  // buffer a kernel still reads (seen on Rolling-UNet-S after --fuse-roll
  // alone). Copying before every in-place write removes the hazard; it adds
  // few copies here because seg ops produce fresh tensors (6 on
  // Rolling-UNet-S, 4 on UNet).
  const char *upstream =
      "canonicalize,cse,"
      "one-shot-bufferize{bufferize-function-boundaries=1 copy-before-write=1 "
      "function-boundary-type-conversion=identity-layout-map},"
      "func.func(unique-return-buffers),"
      "buffer-results-to-out-params{modify-public-functions=1 "
      "hoist-static-allocs=1},"
      "func.func(llvm-request-c-wrappers),"
      // Both linear in the op count (docs/Reliability.md, "Compile time"):
      // upstream's ownership-based deallocation is quadratic on a graph's
      // one big function, and lowering it to loops and through LLVM as one
      // function is too.
      "func.func(free-buffers-after-last-use),canonicalize,outline-linalg-ops,"
      "func.func(convert-linalg-to-loops,split-long-blocks),"
      "expand-strided-metadata,lower-affine,convert-scf-to-cf,"
      "convert-math-to-libm,"
      // Buffers through gpuopt's allocator (lib/Runtime/Allocator.cpp).
      "finalize-memref-to-llvm{use-generic-functions=1},"
      "convert-to-llvm,reconcile-unrealized-casts";
  return parsePassPipeline(upstream, pm);
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

void mlir::gpuopt::registerPipelines() {
  PassPipelineRegistration<CpuLoweringOptions>(
      "gpuopt-cpu-lowering",
      "Lower a seg module to the LLVM dialect for the CPU (convolutions and "
      "linear layers -> kernel calls, the rest -> linalg -> buffers -> loops "
      "-> LLVM), with C interfaces",
      [](OpPassManager &pm, const CpuLoweringOptions &options) {
        // gpuopt-opt registers every pass the pipeline names.
        (void)buildCpuLoweringPipeline(pm, options);
      });
  PassPipelineRegistration<OptimizeOptions>(
      "gpuopt-optimize",
      "Run gpuopt's graph optimizations: --fuse-roll (or, with deform-conv, "
      "--roll-to-deform-conv), --simplify-token-layout, --fuse-conv-bn-relu, "
      "canonicalize, cse",
      buildOptimizePipeline);
}
