//===- CpuTarget.h - compile a seg graph into a model library ---*- C++ -*-===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// `gpuopt-compile --target=cpu`: lowers a seg module for the host CPU and
// links it with the model runtime into a self-contained shared library that
// implements the C ABI of include/gpuopt/Runtime/ModelAbi.h.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_TARGET_CPU_CPUTARGET_H
#define GPUOPT_TARGET_CPU_CPUTARGET_H

#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace mlir {
namespace gpuopt {

/// What compileForCpu does besides the CPU lowering.
struct CpuCompileOptions {
  /// The function to compile.
  std::string entry = "forward";
  /// A textual pass pipeline run first (e.g. "gpuopt-optimize"); empty for
  /// none.
  std::string pipeline;
  /// Where the shared library goes.
  std::string outputPath;
};

/// Compiles `module` (consumed: it is lowered in place) into a shared library
/// at `options.outputPath`: --seg-split-load-time, the CPU lowering
/// (--gpuopt-cpu-lowering), LLVM -O3 for the host CPU, and a link with the
/// model runtime by the C++ compiler gpuopt was built with. Failures are
/// diagnostics located at the module or the offending op.
LogicalResult compileForCpu(ModuleOp module, const CpuCompileOptions &options);

} // namespace gpuopt
} // namespace mlir

#endif // GPUOPT_TARGET_CPU_CPUTARGET_H
