//===- Tensor.h - host tensors of the gpuopt runtime ------------*- C++ -*-===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// The runtime side of gpuopt builds with a C++17 compiler only: no MLIR, no
// LLVM, no exceptions required. Fallible functions return `Status`.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_RUNTIME_TENSOR_H
#define GPUOPT_RUNTIME_TENSOR_H

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace gpuopt {
namespace runtime {

/// Success, or an error message that says what is wrong and where.
class Status {
public:
  static Status ok() { return Status(); }
  static Status error(std::string message) {
    Status s;
    s.failed = true;
    s.msg = std::move(message);
    return s;
  }
  bool isOk() const { return !failed; }
  explicit operator bool() const { return !failed; }
  const std::string &message() const { return msg; }

private:
  bool failed = false;
  std::string msg;
};

/// Element types the runtime reads and writes. The integer and bool types
/// appear in real checkpoints (BatchNorm's `num_batches_tracked` is I64);
/// they are read so that such files load, but graphs bind only float tensors.
enum class DType { F16, BF16, F32, F64, I8, I16, I32, I64, U8, BOOL };

/// Whether `dtype` is one of the floating-point types.
bool isFloat(DType dtype);

/// Bytes per element of `dtype`.
size_t dtypeSize(DType dtype);
/// Safetensors spelling of `dtype` ("F32", ...).
const char *dtypeName(DType dtype);

/// A dense, row-major (C-order), little-endian host tensor that owns its bytes.
struct HostTensor {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;

  /// Product of `shape` (1 for a scalar).
  int64_t numElements() const;
};

/// Formats a shape as `[1, 3, 64, 64]`.
std::string formatShape(const std::vector<int64_t> &shape);

/// Sets `bytes` to the size of a dense `dtype` tensor of `shape`. Fails if a
/// dimension is negative or the element count or size overflows, which
/// untrusted shapes must be checked for before any allocation.
bool denseByteSize(const std::vector<int64_t> &shape, DType dtype,
                   uint64_t &bytes);

} // namespace runtime
} // namespace gpuopt

#endif // GPUOPT_RUNTIME_TENSOR_H
