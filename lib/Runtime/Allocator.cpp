//===- Allocator.cpp - Buffer cache for the memrefs of generated code -----===//
//
// The CPU lowering converts memref.alloc/dealloc with
// `finalize-memref-to-llvm{use-generic-functions=1}`, so generated code
// allocates through the three functions below instead of malloc/free. A
// forward pass allocates the same sizes every time it runs: freed blocks are
// kept in per-size free lists and handed out again, so from the second run
// on no buffer is fresh memory (no page faults, no zeroing by the kernel).
// Blocks live until the process exits; the cache holds at most what one
// forward pass has live at its peak plus what it freed.
//
//===----------------------------------------------------------------------===//

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace {

constexpr size_t kAlignment = 64;

struct Cache {
  std::mutex mutex;
  std::unordered_map<size_t, std::vector<void *>> freeBySize;
  std::unordered_map<void *, size_t> sizeOf;
};

Cache &cache() {
  static Cache *instance =
      new Cache(); // Never destroyed: no exit-order issues.
  return *instance;
}

void *allocate(size_t size) {
  size = (size + kAlignment - 1) / kAlignment * kAlignment;
  if (size == 0)
    size = kAlignment;
  Cache &c = cache();
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    auto it = c.freeBySize.find(size);
    if (it != c.freeBySize.end() && !it->second.empty()) {
      void *p = it->second.back();
      it->second.pop_back();
      return p;
    }
  }
  void *p = std::aligned_alloc(kAlignment, size);
  if (!p) {
    // Generated code does not check for null: fail here, with a message.
    std::fprintf(stderr, "gpuopt: out of memory allocating %zu bytes\n", size);
    std::abort();
  }
  std::lock_guard<std::mutex> lock(c.mutex);
  c.sizeOf[p] = size;
  return p;
}

void release(void *p) {
  if (!p)
    return;
  Cache &c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  auto it = c.sizeOf.find(p);
  if (it == c.sizeOf.end()) {
    std::free(p); // Not ours (cannot happen for generated code).
    return;
  }
  c.freeBySize[it->second].push_back(p);
}

} // namespace

extern "C" {
void *_mlir_memref_to_llvm_alloc(uint64_t size) { return allocate(size); }
void *_mlir_memref_to_llvm_aligned_alloc(uint64_t alignment, uint64_t size) {
  // Every block is 64-byte aligned; larger alignments are not requested by
  // the lowering (memref.alloc alignments are at most 64 in gpuopt's IR).
  if (alignment > kAlignment) {
    std::fprintf(stderr,
                 "gpuopt: a buffer asks for %llu-byte alignment; the runtime "
                 "provides %zu\n",
                 static_cast<unsigned long long>(alignment), kAlignment);
    std::abort();
  }
  return allocate(size);
}
void _mlir_memref_to_llvm_free(void *p) { release(p); }
}
