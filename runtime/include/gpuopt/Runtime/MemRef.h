//===- MemRef.h - MLIR's memref descriptor, on the runtime side -*- C++ -*-===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// The one definition of the ranked strided memref descriptor that generated
// code passes and takes (MLIR's C interface, `llvm.emit_c_interface`):
//
//   {T *allocated, T *aligned, int64_t offset, int64_t sizes[rank],
//    int64_t strides[rank]}
//
// as a struct of static rank (the CPU kernels, their test and benchmark) and
// as a word vector of any rank over a dense row-major buffer (the model ABI
// and the JIT, which pass descriptors as `void *`). The compiler side reads
// the same words by the indices below (lib/Target/Cpu/CpuTarget.cpp,
// runtime/cpu/MemRefCopy.cpp). No MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_RUNTIME_MEMREF_H
#define GPUOPT_RUNTIME_MEMREF_H

#include <cstdint>
#include <vector>

namespace gpuopt::runtime {

/// Indices of the 64-bit words of a descriptor of rank `rank`.
inline constexpr int kMemRefAllocatedWord = 0;
inline constexpr int kMemRefAlignedWord = 1;
inline constexpr int kMemRefOffsetWord = 2;
inline constexpr int kMemRefSizesWord = 3;
inline constexpr int64_t memRefStridesWord(int64_t rank) {
  return kMemRefSizesWord + rank;
}
inline constexpr int64_t memRefNumWords(int64_t rank) {
  return kMemRefSizesWord + 2 * rank;
}

/// A ranked strided memref descriptor of static rank.
template <typename T, int Rank> struct MemRefDesc {
  T *allocated;
  T *aligned;
  int64_t offset;
  int64_t sizes[Rank];
  int64_t strides[Rank];
};

using MemRef1F = MemRefDesc<float, 1>;
using MemRef1I = MemRefDesc<int64_t, 1>;
using MemRef2F = MemRefDesc<float, 2>;
using MemRef4F = MemRefDesc<float, 4>;

/// The descriptor of the dense row-major buffer `data` of shape `sizes`.
template <typename T, int Rank>
MemRefDesc<T, Rank> denseMemRef(T *data, const int64_t (&sizes)[Rank]) {
  MemRefDesc<T, Rank> d;
  d.allocated = d.aligned = data;
  d.offset = 0;
  int64_t stride = 1;
  for (int r = Rank - 1; r >= 0; --r) {
    d.sizes[r] = sizes[r];
    d.strides[r] = stride;
    stride *= sizes[r];
  }
  return d;
}

/// A descriptor of any rank over a dense row-major buffer, as the words the
/// C interface reads (get() is the `void *` it takes).
class DenseMemRef {
public:
  explicit DenseMemRef(const std::vector<int64_t> &shape,
                       const void *data = nullptr)
      : words(memRefNumWords(int64_t(shape.size())), 0) {
    int64_t rank = int64_t(shape.size()), stride = 1;
    for (int64_t r = rank - 1; r >= 0; --r) {
      words[kMemRefSizesWord + r] = shape[r];
      words[memRefStridesWord(rank) + r] = stride;
      stride *= shape[r];
    }
    setData(data);
  }
  /// Points the descriptor at `data` (offset 0).
  void setData(const void *data) {
    int64_t address = static_cast<int64_t>(reinterpret_cast<intptr_t>(data));
    words[kMemRefAllocatedWord] = words[kMemRefAlignedWord] = address;
  }
  void *get() { return words.data(); }

private:
  std::vector<int64_t> words;
};

} // namespace gpuopt::runtime

#endif // GPUOPT_RUNTIME_MEMREF_H
