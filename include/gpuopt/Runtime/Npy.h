//===- Npy.h - .npy reader and writer ---------------------------*- C++ -*-===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// NumPy's .npy format, versions 1.0, 2.0 and 3.0. gpuopt exchanges float32
// little-endian C-order arrays; any other dtype, Fortran order, a malformed
// header, or a data section of the wrong length is an error Status.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_RUNTIME_NPY_H
#define GPUOPT_RUNTIME_NPY_H

#include "gpuopt/Runtime/Tensor.h"

#include <string>

namespace gpuopt {
namespace runtime {

/// Parses a whole .npy image; `what` names the source in messages.
Status parseNpy(const uint8_t *bytes, size_t size, const std::string &what,
                HostTensor &out);

/// Reads `path` as a float32 .npy array.
Status readNpy(const std::string &path, HostTensor &out);

/// Writes `tensor` (must be F32) as a version 1.0 .npy file.
Status writeNpy(const std::string &path, const HostTensor &tensor);

/// Reads a whole file into memory.
Status readFileBytes(const std::string &path, std::vector<uint8_t> &out);

/// Creates or truncates `path` and writes `size` bytes of `bytes` to it.
Status writeFileBytes(const std::string &path, const uint8_t *bytes,
                      size_t size);

} // namespace runtime
} // namespace gpuopt

#endif // GPUOPT_RUNTIME_NPY_H
