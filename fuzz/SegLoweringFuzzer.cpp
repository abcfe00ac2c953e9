//===- SegLoweringFuzzer.cpp - libFuzzer target: lowerings on verified IR -===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// Runs the lowering pipelines on every input that parses and verifies:
// --gpuopt-cpu-lowering (kernel calls, linalg, bufferization, LLVM) and
// --gpuopt-gpu-lowering up to the NVVM dialect (no serialization: ptxas is
// not fuzzed). A lowering may reject verified IR, with a diagnostic (a call
// cycle, a size over the limit, an op it does not support); a crash, a
// sanitizer report, or a failure that says nothing is a finding. The seeds
// and the dictionary's big dims aim at the size arithmetic of the lowerings.
//
//===----------------------------------------------------------------------===//

#include "SegFuzzer.h"

#include "gpuopt/Pipelines/GpuPipeline.h"
#include "gpuopt/Pipelines/Pipelines.h"

#include "mlir/Pass/PassManager.h"

using namespace mlir;

namespace {
enum class Lowering { Cpu, Gpu };
} // namespace

static void runLowering(gpuopt_fuzz::Session &session, ModuleOp input,
                        Lowering lowering) {
  OwningOpRef<ModuleOp> module = input.clone();
  PassManager pm = PassManager::on<ModuleOp>(&session.context);
  LogicalResult built = success();
  if (lowering == Lowering::Cpu) {
    built = mlir::gpuopt::buildCpuLoweringPipeline(pm);
  } else {
    mlir::gpuopt::CudaTargetOptions target;
    std::string error;
    built =
        success(succeeded(mlir::gpuopt::buildGpuKernelPipeline(pm, target)) &&
                succeeded(mlir::gpuopt::buildGpuBinaryPipeline(
                    pm, target, /*serialize=*/false, error)));
  }
  if (failed(built))
    session.finding("the lowering pipeline does not build", "");
  size_t logged = session.log.size();
  if (succeeded(pm.run(*module)) || session.log.size() > logged)
    return;
  std::string text;
  llvm::raw_string_ostream os(text);
  input.print(os);
  session.finding(Twine(lowering == Lowering::Cpu ? "--gpuopt-cpu-lowering"
                                                  : "--gpuopt-gpu-lowering") +
                      " failed without a diagnostic on verified input",
                  text);
}

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  // The pipelines name upstream passes by their registered names.
  mlir::gpuopt::registerAllPasses();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  gpuopt_fuzz::Session session;
  OwningOpRef<ModuleOp> module =
      session.parse(StringRef(reinterpret_cast<const char *>(data), size));
  if (!module)
    return 0;
  runLowering(session, *module, Lowering::Cpu);
  runLowering(session, *module, Lowering::Gpu);
  return 0;
}
