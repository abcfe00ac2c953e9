//===- ModelMetadataFuzzer.cpp - libFuzzer target: .so model metadata ----===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// Feeds arbitrary bytes to parseModelMetadata, the reader of the metadata a
// compiled model library carries (runtime/include/gpuopt/Runtime/
// CompiledModel.h): an artifact FlatBuffer (Artifact.fbs), verified by
// verifyArtifact before the CPU-specific checks. Its hash is checked before
// parsing in a real library, but the reader must not depend on that: any
// outcome but an error Status or a description whose indices and sizes the
// runtime may use unchecked is a finding. Each input gets its checksum
// (Model.checksum) stamped first, so that mutations reach the checks. The seeds
// are the metadata of compiled models (fuzz/seeds-model-metadata).
//
//===----------------------------------------------------------------------===//

#include "../runtime/base/ModelMetadata.h"

#include "gpuopt/Runtime/Artifact.h"

#include <cstdio>
#include <cstdlib>
#include <vector>

using namespace gpuopt::runtime;

namespace {

[[noreturn]] void finding(const char *what) {
  std::fprintf(stderr, "accepted metadata with %s\n", what);
  std::abort();
}

void checkShape(const std::vector<int64_t> &shape) {
  if (shape.size() > kArtifactMaxRank)
    finding("a shape of too high a rank");
  for (int64_t d : shape)
    if (d < 0)
      finding("a negative dimension");
}

void checkFunction(const ModelMetadata &md, const ModelFunction &fn,
                   bool isInit, size_t &inputs) {
  for (const ModelArg &arg : fn.args) {
    checkShape(arg.shape);
    uint64_t bytes;
    if (!denseByteSize(arg.shape, DType::F32, bytes))
      finding("an argument shape whose byte size overflows");
    switch (arg.kind) {
    case ModelArgKind::Param:
      if (arg.index >= md.params.size() ||
          md.params[arg.index].shape != arg.shape)
        finding("a parameter index out of range or of another shape");
      break;
    case ModelArgKind::Derived:
      if (isInit || arg.index >= md.init.results.size() ||
          md.init.results[arg.index] != arg.shape)
        finding("a bad initializer result index");
      break;
    case ModelArgKind::Input:
      if (isInit || arg.index != inputs || md.inputs[arg.index] != arg.shape)
        finding("inputs out of order");
      ++inputs;
      break;
    }
  }
  for (const std::vector<int64_t> &shape : fn.results) {
    checkShape(shape);
    uint64_t bytes;
    if (!denseByteSize(shape, DType::F32, bytes))
      finding("a result shape whose byte size overflows");
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // A heap copy of exactly `size` bytes: aligned as the library's copy is
  // (16 bytes), and any read past its end is reported. Its checksum is
  // stamped, so that a mutation reaches the checks behind it.
  std::vector<uint8_t> bytes(data, data + size);
  stampArtifactChecksum(bytes);
  ModelMetadata md;
  Status status = parseModelMetadata(bytes.data(), bytes.size(), md);
  if (!status) {
    if (status.message().rfind("corrupt model metadata: ", 0) != 0) {
      std::fprintf(stderr, "unexpected error: %s\n", status.message().c_str());
      std::abort();
    }
    return 0;
  }
  size_t inputs = 0;
  checkFunction(md, md.init, /*isInit=*/true, inputs);
  checkFunction(md, md.forward, /*isInit=*/false, inputs);
  if (inputs != md.inputs.size())
    finding("an input table that does not match the arguments");
  for (const ModelParam &p : md.params)
    checkShape(p.shape);
  // What was accepted is a verified artifact: printing it must not crash.
  (void)dumpArtifact(data);
  // The limits must decide without a crash either way.
  SafetensorsLimits tight;
  tight.maxTensors = 2;
  tight.maxRank = 2;
  (void)checkModelMetadataLimits(md, tight);
  (void)checkModelMetadataLimits(md, SafetensorsLimits());
  return 0;
}
