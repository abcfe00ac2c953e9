//===- MemRefCopy.cpp - runtime symbols that lowered MLIR code calls ------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// `memref.copy` between non-contiguous memrefs lowers to a call of
// `memrefCopy` (upstream: libmlir_c_runner_utils). Compiled model libraries
// must not depend on MLIR's libraries, so the runtime provides it, with
// upstream's signature and semantics (the JIT uses it too, through
// getCpuKernelSymbols()). Rows that are contiguous on both sides are copied
// with one memcpy each (concatenations, pads).
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Runtime/MemRef.h"

#include <cstdint>
#include <cstring>
#include <vector>

namespace {
/// MLIR's unranked memref: a rank and a pointer to a ranked descriptor
/// (runtime/include/gpuopt/Runtime/MemRef.h).
struct UnrankedMemRef {
  int64_t rank;
  void *descriptor;
};

struct RankedView {
  char *data;
  const int64_t *sizes;
  const int64_t *strides;
};

RankedView view(const UnrankedMemRef &m, int64_t elemSize) {
  namespace rt = gpuopt::runtime;
  auto *words = static_cast<int64_t *>(m.descriptor);
  char *aligned = reinterpret_cast<char *>(
      static_cast<intptr_t>(words[rt::kMemRefAlignedWord]));
  return {aligned + words[rt::kMemRefOffsetWord] * elemSize,
          words + rt::kMemRefSizesWord, words + rt::memRefStridesWord(m.rank)};
}
} // namespace

extern "C" void memrefCopy(int64_t elemSize, UnrankedMemRef *src,
                           UnrankedMemRef *dst) {
  int64_t rank = src->rank;
  RankedView s = view(*src, elemSize), d = view(*dst, elemSize);
  for (int64_t i = 0; i < rank; ++i)
    if (s.sizes[i] == 0)
      return;
  if (rank == 0) {
    std::memcpy(d.data, s.data, elemSize);
    return;
  }
  // Rows: the innermost dimension is one memcpy when both sides are
  // contiguous along it (concat and pad write rows of a larger buffer).
  int64_t inner = s.sizes[rank - 1];
  bool rowCopy = s.strides[rank - 1] == 1 && d.strides[rank - 1] == 1;
  int64_t outerRank = rowCopy ? rank - 1 : rank;
  if (outerRank == 0) {
    std::memcpy(d.data, s.data, inner * elemSize);
    return;
  }
  // Odometer over the remaining indices.
  std::vector<int64_t> index(outerRank, 0);
  int64_t srcOffset = 0, dstOffset = 0;
  while (true) {
    std::memcpy(d.data + dstOffset * elemSize, s.data + srcOffset * elemSize,
                rowCopy ? inner * elemSize : elemSize);
    int64_t axis = outerRank - 1;
    for (; axis >= 0; --axis) {
      srcOffset += s.strides[axis];
      dstOffset += d.strides[axis];
      if (++index[axis] < s.sizes[axis])
        break;
      srcOffset -= s.strides[axis] * s.sizes[axis];
      dstOffset -= d.strides[axis] * s.sizes[axis];
      index[axis] = 0;
    }
    if (axis < 0)
      return;
  }
}
