//===- CpuTargetRegistration.cpp - gpuopt-compile --target=cpu ------------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// The flags of --target=cpu and their translation into CpuCompileOptions.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Target/Cpu/CpuTarget.h"
#include "gpuopt/Target/TargetRegistry.h"

using namespace mlir;
using namespace mlir::gpuopt;
namespace cl = llvm::cl;

namespace {
class CpuCompileTarget : public CompileTarget {
public:
  explicit CpuCompileTarget(cl::OptionCategory &category)
      : cpu("cpu",
            cl::desc("--target=cpu: the CPUs the generated code runs on: "
                     "native (this one), or x86-64, x86-64-v2, x86-64-v3 "
                     "(AVX2, FMA), x86-64-v4 (AVX-512) for every CPU of "
                     "that level"),
            cl::init(CpuCompileOptions().cpu), cl::cat(category)),
        emit("emit",
             cl::desc("--target=cpu: what -o receives: lib (the model "
                      "library) or asm (the generated code's assembly, "
                      "without the runtime)"),
             cl::init("lib"), cl::cat(category)) {}

  SmallVector<cl::Option *> flags() override { return {&cpu, &emit}; }

  LogicalResult validateFlags(std::string &error) override {
    if (emit != "lib" && emit != "asm") {
      error = "--emit must be lib or asm, got '" + emit + "'";
      return failure();
    }
    return getCpuLevelTarget(cpu, error);
  }

  LogicalResult compile(ModuleOp module,
                        const TargetCompileRequest &request) override {
    CpuCompileOptions options;
    options.entry = request.entry;
    options.pipeline = request.pipeline;
    options.outputPath = request.outputPath;
    options.cpu = cpu;
    options.emitAssembly = emit == "asm";
    return compileForCpu(module, options);
  }

private:
  cl::opt<std::string> cpu;
  cl::opt<std::string> emit;
};
} // namespace

void mlir::gpuopt::registerCpuTarget() {
  registerTarget({"cpu", "the host CPU", [](cl::OptionCategory &category) {
                    return std::make_unique<CpuCompileTarget>(category);
                  }});
}
