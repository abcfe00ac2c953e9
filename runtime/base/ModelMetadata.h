//===- ModelMetadata.h - the metadata of a compiled model -------*- C++ -*-===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// The parsed GPUOPT_COMPILED_METADATA of runtime/include/gpuopt/Runtime/
// CompiledModel.h: an artifact (Artifact.fbs) whose program is a CpuProgram.
// Internal to the runtime (ModelAbi.cpp and its fuzz target); no MLIR, no
// LLVM.
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

/// Verifies (verifyArtifact) and cross-checks `size` bytes of metadata
/// (untrusted: a successful parse guarantees that the program is a
/// CpuProgram, that every index is in range, that the inputs are numbered
/// 0..n-1 and agree with the model's inputs, that the forward function's
/// results are the model's outputs, and that every tensor is f32 of rank <=
/// kArtifactMaxRank with a byte size that fits in int64). Every error starts
/// with "corrupt model metadata: ".
Status parseModelMetadata(const uint8_t *data, size_t size, ModelMetadata &out);

/// The reader limits applied to the metadata itself: parameter count
/// (maxTensors) and every rank (maxRank).
Status checkModelMetadataLimits(const ModelMetadata &md,
                                const SafetensorsLimits &limits);

} // namespace runtime
} // namespace gpuopt

#endif // GPUOPT_LIB_RUNTIME_MODELMETADATA_H
