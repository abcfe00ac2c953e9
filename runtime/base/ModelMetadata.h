//===- ModelMetadata.h - the metadata of a compiled model -------*- C++ -*-===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// The parsed GPUOPT_COMPILED_METADATA of runtime/include/gpuopt/Runtime/
// CompiledModel.h. Internal to the runtime (ModelAbi.cpp and its fuzz
// target); no MLIR, no LLVM.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_LIB_RUNTIME_MODELMETADATA_H
#define GPUOPT_LIB_RUNTIME_MODELMETADATA_H

#include "gpuopt/Runtime/Safetensors.h"
#include "gpuopt/Runtime/Tensor.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace gpuopt {
namespace runtime {

enum class ModelArgKind { Input, Param, Derived };

struct ModelArg {
  ModelArgKind kind;
  size_t index;
  std::vector<int64_t> shape;
};

struct ModelFunction {
  std::vector<ModelArg> args;
  std::vector<std::vector<int64_t>> results;
};

struct ModelParam {
  std::string name;
  std::vector<int64_t> shape;
};

struct ModelMetadata {
  std::string cpu;
  std::vector<std::string> cpuFeatures;
  std::vector<ModelParam> params;
  ModelFunction init, forward;
  std::vector<std::vector<int64_t>> inputs;
};

/// Parses and cross-checks `size` bytes of metadata text (untrusted: a
/// successful parse guarantees that every index is in range, that the inputs
/// are numbered 0..n-1 and that every shape's f32 byte size fits in int64).
Status parseModelMetadata(const char *text, size_t size, ModelMetadata &out);

/// The reader limits applied to the metadata itself: parameter count
/// (maxTensors) and every rank (maxRank).
Status checkModelMetadataLimits(const ModelMetadata &md,
                                const SafetensorsLimits &limits);

} // namespace runtime
} // namespace gpuopt

#endif // GPUOPT_LIB_RUNTIME_MODELMETADATA_H
