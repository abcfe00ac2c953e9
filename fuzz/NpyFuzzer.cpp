//===- NpyFuzzer.cpp - libFuzzer target: .npy reader ----------------------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// Feeds arbitrary bytes to parseNpy. It must return an error Status or a
// float32 tensor whose byte count matches its shape; ASan and UBSan catch
// out-of-bounds reads and overflows on the way.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Runtime/Npy.h"

#include <cstdio>
#include <cstdlib>

using namespace gpuopt::runtime;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  HostTensor tensor;
  Status status = parseNpy(data, size, "fuzz", tensor);
  if (!status) {
    if (status.message().rfind("fuzz: ", 0) != 0) {
      std::fprintf(stderr, "unlocated error: %s\n", status.message().c_str());
      std::abort();
    }
    return 0;
  }
  uint64_t bytes;
  if (tensor.dtype != DType::F32 ||
      !denseByteSize(tensor.shape, tensor.dtype, bytes) ||
      bytes != tensor.data.size() || bytes > size) {
    std::fprintf(stderr, "accepted %s %s holding %zu bytes\n",
                 dtypeName(tensor.dtype), formatShape(tensor.shape).c_str(),
                 tensor.data.size());
    std::abort();
  }
  return 0;
}
