//===- SafetensorsFuzzer.cpp - libFuzzer target: safetensors reader -------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// Feeds arbitrary bytes to parseSafetensors. Any outcome but an error Status
// or a file whose tensors are consistent with their headers is a finding;
// ASan and UBSan catch out-of-bounds reads and overflows on the way.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Runtime/Safetensors.h"

#include <cstdio>
#include <cstdlib>

using namespace gpuopt::runtime;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  SafetensorsFile file;
  Status status = parseSafetensors(data, size, "fuzz", file);
  if (!status) {
    // Every message names its source first.
    if (status.message().rfind("fuzz: ", 0) != 0) {
      std::fprintf(stderr, "unlocated error: %s\n", status.message().c_str());
      std::abort();
    }
    return 0;
  }
  // A successful parse returns dense tensors that fit the input.
  size_t total = 0;
  for (const auto &[name, tensor] : file.tensors) {
    uint64_t bytes;
    if (!denseByteSize(tensor.shape, tensor.dtype, bytes) ||
        bytes != tensor.data.size()) {
      std::fprintf(stderr, "tensor '%s' holds %zu bytes for %s %s\n",
                   name.c_str(), tensor.data.size(), dtypeName(tensor.dtype),
                   formatShape(tensor.shape).c_str());
      std::abort();
    }
    total += tensor.data.size();
  }
  if (total > size) {
    std::fprintf(stderr, "%zu tensor bytes from a %zu-byte file\n", total,
                 size);
    std::abort();
  }
  return 0;
}
