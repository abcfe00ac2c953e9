//===- MemRefCopy.cpp - runtime symbols that lowered MLIR code calls ------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// `memref.copy` between non-contiguous memrefs lowers to a call of
// `memrefCopy` (upstream: libmlir_c_runner_utils). Compiled model libraries
// must not depend on MLIR's libraries, so the model runtime provides it,
// with upstream's signature and semantics.
//
//===----------------------------------------------------------------------===//

#include <cstdint>
#include <cstring>
#include <vector>

namespace {
/// MLIR's unranked memref: a rank and a pointer to a ranked descriptor
/// {allocated, aligned, offset, sizes[rank], strides[rank]}.
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
  auto *words = static_cast<int64_t *>(m.descriptor);
  char *aligned = reinterpret_cast<char *>(static_cast<intptr_t>(words[1]));
  return {aligned + words[2] * elemSize, words + 3, words + 3 + m.rank};
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
  // Odometer over every index; the innermost dimension moves one element.
  std::vector<int64_t> index(rank, 0);
  int64_t srcOffset = 0, dstOffset = 0;
  while (true) {
    std::memcpy(d.data + dstOffset * elemSize, s.data + srcOffset * elemSize,
                elemSize);
    int64_t axis = rank - 1;
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
