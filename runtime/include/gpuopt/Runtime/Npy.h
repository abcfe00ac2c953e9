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

#include "gpuopt/Runtime/FileIO.h"
#include "gpuopt/Runtime/Tensor.h"

#include <memory>
#include <string>

namespace gpuopt {
namespace runtime {

/// Parses a whole .npy image; `what` names the source in messages. With
/// `owner` (which keeps `bytes` valid) the tensor views the data section
/// instead of copying it.
Status parseNpy(const uint8_t *bytes, size_t size, const std::string &what,
                HostTensor &out,
                const std::shared_ptr<const void> &owner = nullptr);

/// Reads `path`, a regular file of at most kMaxReadBytes, as a float32 .npy
/// array (mapped, see MappedFile).
Status readNpy(const std::string &path, HostTensor &out);

/// Writes `tensor` (must be F32) as a version 1.0 .npy file, atomically: a
/// failure leaves an existing `path` as it was.
Status writeNpy(const std::string &path, const HostTensor &tensor);

} // namespace runtime
} // namespace gpuopt

#endif // GPUOPT_RUNTIME_NPY_H
