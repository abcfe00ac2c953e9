//===- RunCompiled.h - gpuopt-run on a compiled model -----------*- C++ -*-===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// `gpuopt-run model.so ...` and `gpuopt-run model.gpuopt ...`: runs an
// artifact of gpuopt-compile (a CPU model library or a CUDA artifact)
// through the model runtime (runtime/include/gpuopt/Runtime/ModelApi.h, the
// code of libgpuopt_runtime.so, linked statically). No MLIR or LLVM is
// involved in this path.
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
  /// The model library or CUDA artifact.
  std::string library;
  /// Empty when not given (valid for a model library without parameters).
  std::string weights;
  /// Paths of the .npy inputs and outputs (`@` already stripped).
  std::vector<std::string> inputs, outputs;
  unsigned runs = 1;
  bool strictWeights = false;
  bool quiet = false;
  /// gpuopt-run's --max-header-bytes, --max-tensors, --max-rank: for the
  /// weights file and the library's own metadata.
  runtime::SafetensorsLimits limits;
  /// --device: the GPU of a CUDA artifact.
  int device = 0;
};

/// What kind of compiled model `path` is.
enum class CompiledKind { None, Library, Cuda };

/// A shared library (ELF magic or a `.so` name: a corrupt or missing
/// `model.so` gets an error about loading it), a CUDA artifact ("GPOA" at
/// bytes 4..7, the older "GPUOCUDA" magic, or a `.gpuopt` name), or neither
/// (an MLIR file).
CompiledKind getCompiledKind(const std::string &path);
inline bool isCompiledModel(const std::string &path) {
  return getCompiledKind(path) != CompiledKind::None;
}

/// Runs the model; prints errors as `gpuopt-run: error: ...` and returns the
/// exit code.
int runCompiledModel(const CompiledRunArgs &args);

} // namespace gpuopt

#endif // GPUOPT_TOOLS_GPUOPT_RUN_RUNCOMPILED_H
