//===- Tensor.cpp - host tensors of the gpuopt runtime --------------------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Runtime/Tensor.h"

#include <cassert>
#include <limits>

namespace gpuopt {
namespace runtime {

size_t dtypeSize(DType dtype) {
  switch (dtype) {
  case DType::I8:
  case DType::U8:
  case DType::BOOL:
    return 1;
  case DType::F16:
  case DType::BF16:
  case DType::I16:
    return 2;
  case DType::F32:
  case DType::I32:
    return 4;
  case DType::F64:
  case DType::I64:
    return 8;
  }
  assert(false && "unknown DType");
  return 0;
}

const char *dtypeName(DType dtype) {
  switch (dtype) {
  case DType::F16:
    return "F16";
  case DType::BF16:
    return "BF16";
  case DType::F32:
    return "F32";
  case DType::F64:
    return "F64";
  case DType::I8:
    return "I8";
  case DType::I16:
    return "I16";
  case DType::I32:
    return "I32";
  case DType::I64:
    return "I64";
  case DType::U8:
    return "U8";
  case DType::BOOL:
    return "BOOL";
  }
  assert(false && "unknown DType");
  return "?";
}

bool isFloat(DType dtype) {
  return dtype == DType::F16 || dtype == DType::BF16 || dtype == DType::F32 ||
         dtype == DType::F64;
}

int64_t HostTensor::numElements() const {
  // Unsigned arithmetic keeps an invalid shape from being undefined behavior;
  // readers validate shapes with denseByteSize before building a tensor.
  uint64_t count = 1;
  for (int64_t dim : shape)
    count *= static_cast<uint64_t>(dim);
  return static_cast<int64_t>(count);
}

std::string formatShape(const std::vector<int64_t> &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i != 0)
      text += ", ";
    text += std::to_string(shape[i]);
  }
  return text + "]";
}

bool denseByteSize(const std::vector<int64_t> &shape, DType dtype,
                   uint64_t &bytes) {
  constexpr uint64_t maxCount = std::numeric_limits<int64_t>::max();
  uint64_t count = 1;
  bool empty = false;
  for (int64_t dim : shape) {
    if (dim < 0)
      return false;
    // A zero dimension makes the tensor empty whatever the others are, so an
    // overflow of the partial product alone must not reject it.
    empty |= dim == 0;
  }
  if (empty) {
    bytes = 0;
    return true;
  }
  for (int64_t dim : shape) {
    if (static_cast<uint64_t>(dim) > maxCount / count)
      return false;
    count *= static_cast<uint64_t>(dim);
  }
  uint64_t elementBytes = dtypeSize(dtype);
  if (count > std::numeric_limits<uint64_t>::max() / elementBytes)
    return false;
  bytes = count * elementBytes;
  return true;
}

} // namespace runtime
} // namespace gpuopt
