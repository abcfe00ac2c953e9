//===- CpuTarget.h - compile a seg graph into a model library ---*- C++ -*-===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// `gpuopt-compile --target=cpu`: lowers a seg module for the host CPU and
// links it with the model runtime into a self-contained shared library that
// implements the C ABI of runtime/include/gpuopt/Runtime/ModelAbi.h.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_TARGET_CPU_CPUTARGET_H
#define GPUOPT_TARGET_CPU_CPUTARGET_H

#include "mlir/IR/BuiltinOps.h"

#include <string>
#include <vector>

namespace mlir {
namespace gpuopt {

/// What LLVM generates code for at a `--cpu=` level
/// (runtime/include/gpuopt/Runtime/CpuFeatures.h), shared by gpuopt-compile and
/// the JIT of gpuopt-run.
struct CpuLevelTarget {
  /// The level as given: native, x86-64, x86-64-v2, x86-64-v3 or x86-64-v4.
  std::string level;
  /// The LLVM CPU: the host's for native, else the level (LLVM knows the
  /// levels as CPU names).
  std::string llvmCpu;
  /// LLVM subtarget features ("+avx2", ...): the host's for native, else the
  /// level's extensions.
  std::vector<std::string> llvmFeatures;
  /// The extensions of CpuFeatures.def the code may use, which a CPU must
  /// have to run it (the metadata's "cpu_features").
  std::vector<std::string> required;
};

/// The target of `--cpu=<level>`; failure with a message listing the levels
/// in `error` for an unknown one.
FailureOr<CpuLevelTarget> getCpuLevelTarget(StringRef level,
                                            std::string &error);

/// What compileForCpu does besides the CPU lowering.
struct CpuCompileOptions {
  /// The function to compile.
  std::string entry = "forward";
  /// A textual pass pipeline run first (e.g. "gpuopt-optimize"); empty for
  /// none.
  std::string pipeline;
  /// Where the shared library (or the assembly) goes.
  std::string outputPath;
  /// The `--cpu=` level the generated code is compiled for (the runtime
  /// kernels linked with it choose their instruction set at run time).
  std::string cpu = "native";
  /// Write the generated code's assembly (without the runtime) to
  /// `outputPath` instead of linking a library: to inspect what a level
  /// emits.
  bool emitAssembly = false;
};

/// Compiles `module` (consumed: it is lowered in place) into a shared library
/// at `options.outputPath`: --seg-split-load-time, the CPU lowering
/// (--gpuopt-cpu-lowering), LLVM -O3 for `options.cpu`, and a link with the
/// model runtime by the C++ compiler gpuopt was built with. Failures are
/// diagnostics located at the module or the offending op.
LogicalResult compileForCpu(ModuleOp module, const CpuCompileOptions &options);

/// Registers `gpuopt-compile --target=cpu` (Target/TargetRegistry.h).
void registerCpuTarget();

} // namespace gpuopt
} // namespace mlir

#endif // GPUOPT_TARGET_CPU_CPUTARGET_H
