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
#include <memory>
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

/// The bytes of a tensor: either owned, or a view into memory kept alive by
/// a shared owner (a mapped weights file), so that reading a checkpoint does
/// not copy it. A view's memory is private to the process: writing through
/// data() never changes the file it came from.
class TensorBytes {
public:
  TensorBytes() = default;
  TensorBytes(const TensorBytes &other) { *this = other; }
  TensorBytes(TensorBytes &&other) noexcept { *this = std::move(other); }
  /// Copying a view shares the memory; copying owned bytes copies them.
  TensorBytes &operator=(const TensorBytes &other) {
    if (this != &other) {
      owned = other.owned;
      keepAlive = other.keepAlive;
      begin_ = other.keepAlive ? other.begin_ : owned.data();
      size_ = other.size_;
    }
    return *this;
  }
  /// Moving keeps the buffer (a vector's move does), and empties `other`.
  TensorBytes &operator=(TensorBytes &&other) noexcept {
    if (this != &other) {
      owned = std::move(other.owned);
      keepAlive = std::move(other.keepAlive);
      begin_ = other.begin_;
      size_ = other.size_;
      other.owned.clear();
      other.keepAlive.reset();
      other.begin_ = nullptr;
      other.size_ = 0;
    }
    return *this;
  }

  /// Views `size` bytes at `bytes`, which `owner` keeps valid.
  void view(std::shared_ptr<const void> owner, const uint8_t *bytes,
            size_t size) {
    owned.clear();
    keepAlive = std::move(owner);
    begin_ = const_cast<uint8_t *>(bytes);
    size_ = size;
  }
  /// Replaces the bytes with `size` owned zero bytes.
  void resize(size_t size) {
    keepAlive.reset();
    owned.assign(size, 0);
    begin_ = owned.data();
    size_ = size;
  }
  /// Replaces the bytes with an owned copy of [first, last).
  void assign(const uint8_t *first, const uint8_t *last) {
    keepAlive.reset();
    owned.assign(first, last);
    begin_ = owned.data();
    size_ = owned.size();
  }

  uint8_t *data() { return begin_; }
  const uint8_t *data() const { return begin_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const uint8_t *begin() const { return begin_; }
  const uint8_t *end() const { return begin_ + size_; }

private:
  std::vector<uint8_t> owned;
  std::shared_ptr<const void> keepAlive;
  uint8_t *begin_ = nullptr;
  size_t size_ = 0;
};

/// A dense, row-major (C-order), little-endian host tensor.
struct HostTensor {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  TensorBytes data;

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
