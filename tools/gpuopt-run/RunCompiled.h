//===- RunCompiled.h - gpuopt-run on a compiled model library ---*- C++ -*-===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// `gpuopt-run model.so ...`: loads a library made by gpuopt-compile with
// dlopen and runs it through its C ABI (runtime/include/gpuopt/Runtime/ModelAbi.h).
// No MLIR or LLVM is involved in this path.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_TOOLS_GPUOPT_RUN_RUNCOMPILED_H
#define GPUOPT_TOOLS_GPUOPT_RUN_RUNCOMPILED_H

#include "gpuopt/Runtime/Safetensors.h"

#include <string>
#include <vector>

namespace gpuopt {

/// gpuopt-run's arguments, as far as a compiled model uses them.
struct CompiledRunArgs {
  std::string library;
  /// Empty when not given (valid for a model without parameters).
  std::string weights;
  /// Paths of the .npy inputs and outputs (`@` already stripped).
  std::vector<std::string> inputs, outputs;
  unsigned runs = 1;
  bool strictWeights = false;
  bool quiet = false;
  /// gpuopt-run's --max-header-bytes, --max-tensors, --max-rank: for the
  /// weights file and the library's own metadata.
  runtime::SafetensorsLimits limits;
};

/// Whether `path` names a shared library: ELF magic or a `.so` name (a
/// corrupt or missing `model.so` gets an error about loading it).
bool isCompiledModel(const std::string &path);

/// Runs the model; prints errors as `gpuopt-run: error: ...` and returns the
/// exit code.
int runCompiledModel(const CompiledRunArgs &args);

} // namespace gpuopt

#endif // GPUOPT_TOOLS_GPUOPT_RUN_RUNCOMPILED_H
