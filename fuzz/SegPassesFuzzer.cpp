//===- SegPassesFuzzer.cpp - libFuzzer target: passes on verified IR ------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// Runs gpuopt's optimization passes, with the verifier after each pass, on
// every input that parses and verifies: --fuse-roll alone, --gpuopt-optimize,
// and --gpuopt-optimize=deform-conv=true (--roll-to-deform-conv). The passes
// only optimize, so on verified IR they must neither crash nor fail nor
// produce IR that does not verify; any of these is a finding.
//
//===----------------------------------------------------------------------===//

#include "SegFuzzer.h"

#include "gpuopt/Dialect/Seg/Transforms/Passes.h"
#include "gpuopt/Pipelines/Pipelines.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassManager.h"

using namespace mlir;

namespace {
enum class Pipeline { FuseRoll, Optimize, OptimizeDeform };
} // namespace

static const char *pipelineName(Pipeline pipeline) {
  switch (pipeline) {
  case Pipeline::FuseRoll:
    return "--fuse-roll";
  case Pipeline::Optimize:
    return "--gpuopt-optimize";
  case Pipeline::OptimizeDeform:
    return "--gpuopt-optimize=deform-conv=true";
  }
  return "?";
}

static void runPipeline(gpuopt_fuzz::Session &session, ModuleOp input,
                        Pipeline pipeline) {
  OwningOpRef<ModuleOp> module = input.clone();
  PassManager pm = PassManager::on<ModuleOp>(&session.context);
  pm.enableVerifier(true);
  if (pipeline == Pipeline::FuseRoll) {
    pm.addNestedPass<func::FuncOp>(mlir::gpuopt::seg::createFuseRollPass());
  } else {
    mlir::gpuopt::OptimizeOptions options;
    options.deformConv = pipeline == Pipeline::OptimizeDeform;
    mlir::gpuopt::buildOptimizePipeline(pm, options);
  }
  if (succeeded(pm.run(*module)))
    return;
  std::string text;
  llvm::raw_string_ostream os(text);
  input.print(os);
  session.finding(Twine(pipelineName(pipeline)) +
                      " failed or produced invalid IR on verified input",
                  text);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  gpuopt_fuzz::Session session;
  OwningOpRef<ModuleOp> module =
      session.parse(StringRef(reinterpret_cast<const char *>(data), size));
  if (!module)
    return 0;
  for (Pipeline pipeline :
       {Pipeline::FuseRoll, Pipeline::Optimize, Pipeline::OptimizeDeform})
    runPipeline(session, *module, pipeline);
  return 0;
}
