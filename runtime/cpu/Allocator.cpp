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
// Generated code does not check for null, so a block that cannot be
// allocated ends the call of generated code: callGenerated() sets a jump
// buffer, and the allocator longjmps back to it. Only generated frames (no
// destructors, no locks) lie in between; the blocks the call allocated and did
// not free go back to the cache.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Runtime/Allocator.h"

#include <csetjmp>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <new>
#include <unordered_map>
#include <unordered_set>
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

/// The innermost callGenerated() on this thread.
struct CallScope {
  std::jmp_buf resume;
  /// Blocks allocated during the call and not yet freed.
  std::unordered_set<void *> live;
  std::string error;
};
thread_local CallScope *activeScope = nullptr;

/// Frees the cached free blocks (after an allocation failed: the memory may
/// serve a block of another size).
void trimCache(Cache &c) {
  for (auto &[size, blocks] : c.freeBySize)
    for (void *p : blocks) {
      c.sizeOf.erase(p);
      std::free(p);
    }
  c.freeBySize.clear();
}

/// A block of at least `size` bytes, or null when there is no memory.
void *allocate(uint64_t size) {
  if (size > SIZE_MAX - kAlignment)
    return nullptr; // Rounding up would wrap to a small block.
  size = (size + kAlignment - 1) / kAlignment * kAlignment;
  if (size == 0)
    size = kAlignment;
  Cache &c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  void *p = nullptr;
  bool fresh = false;
  auto it = c.freeBySize.find(size);
  if (it != c.freeBySize.end() && !it->second.empty()) {
    p = it->second.back();
    it->second.pop_back();
  } else {
    p = std::aligned_alloc(kAlignment, size);
    if (!p) {
      trimCache(c);
      p = std::aligned_alloc(kAlignment, size);
    }
    if (!p)
      return nullptr;
    fresh = true;
  }
  try {
    if (fresh)
      c.sizeOf[p] = size;
    if (activeScope)
      activeScope->live.insert(p);
  } catch (const std::bad_alloc &) {
    // No memory for the bookkeeping: give the block up rather than lose it.
    c.sizeOf.erase(p);
    std::free(p);
    return nullptr;
  }
  return p;
}

void release(void *p) {
  if (!p)
    return;
  Cache &c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  if (activeScope)
    activeScope->live.erase(p);
  auto it = c.sizeOf.find(p);
  if (it == c.sizeOf.end()) {
    std::free(p); // Not ours (cannot happen for generated code).
    return;
  }
  try {
    c.freeBySize[it->second].push_back(p);
  } catch (const std::bad_alloc &) {
    c.sizeOf.erase(it);
    std::free(p);
  }
}

/// Records `message` as the error of the current call of generated code (the
/// first error wins: what follows it is a consequence), or, outside one,
/// prints it and aborts.
void recordFailure(const std::string &message) {
  if (!activeScope) {
    std::fprintf(stderr, "gpuopt: %s\n", message.c_str());
    std::abort();
  }
  if (activeScope->error.empty())
    activeScope->error = message;
}

/// Abandons the current call of generated code after recordFailure(). Called
/// where no object with a destructor is alive in gpuopt's frames.
[[noreturn]] void abandonCall() { std::longjmp(activeScope->resume, 1); }

/// The block generated code asked for, or the end of its call.
void *allocateOrFail(uint64_t size) {
  void *p = allocate(size);
  if (!p) {
    recordFailure("out of memory: cannot allocate a buffer of " +
                  std::to_string(size) + " bytes (" +
                  std::to_string(size >> 20) +
                  " MiB) for an intermediate tensor");
    abandonCall();
  }
  return p;
}

} // namespace

namespace gpuopt::runtime {

namespace {
/// callGenerated()'s guard around `thunk(context)`.
bool callGuarded(void (*thunk)(void *), void *context, std::string &error) {
  CallScope scope;
  CallScope *outer = activeScope;
  activeScope = &scope;
  {
    // A failed `new` in a kernel must throw, for the kernel to report it.
    gpuopt::runtime::BadAllocScope throwing;
    // Nothing in this frame changes between setjmp and a longjmp but
    // `scope`, which is read through memory after it.
    if (setjmp(scope.resume) == 0)
      thunk(context);
  }
  activeScope = outer;
  if (!scope.error.empty()) {
    // Abandoned: its live blocks will never be freed by generated code.
    for (void *p : scope.live)
      release(p);
  } else if (outer) {
    // Blocks that outlive a nested call belong to the enclosing one.
    outer->live.insert(scope.live.begin(), scope.live.end());
  }
  if (scope.error.empty())
    return true;
  error = std::move(scope.error);
  return false;
}
} // namespace

bool callGenerated(GeneratedFunction fn, void **args, std::string &error) {
  struct Call {
    GeneratedFunction fn;
    void **args;
  } call{fn, args};
  return callGuarded(
      [](void *p) {
        auto *c = static_cast<Call *>(p);
        c->fn(c->args);
      },
      &call, error);
}

bool callGenerated(CheckedGeneratedFunction fn, void **args, int &status,
                   std::string &error) {
  struct Call {
    CheckedGeneratedFunction fn;
    void **args;
    int status;
  } call{fn, args, 0};
  bool ok = callGuarded(
      [](void *p) {
        auto *c = static_cast<Call *>(p);
        c->status = c->fn(c->args);
      },
      &call, error);
  status = call.status;
  return ok;
}

void reportKernelFailure(const char *kernel, const char *what) {
  recordFailure(std::string("the ") + kernel + " kernel failed: " + what);
}

} // namespace gpuopt::runtime

extern "C" {
void *_mlir_memref_to_llvm_alloc(uint64_t size) { return allocateOrFail(size); }
void *_mlir_memref_to_llvm_aligned_alloc(uint64_t alignment, uint64_t size) {
  // Every block is 64-byte aligned; larger alignments are not requested by
  // the lowering (memref.alloc alignments are at most 64 in gpuopt's IR).
  if (alignment > kAlignment) {
    recordFailure("a buffer asks for " + std::to_string(alignment) +
                  "-byte alignment; the runtime provides " +
                  std::to_string(kAlignment));
    abandonCall();
  }
  return allocateOrFail(size);
}
void _mlir_memref_to_llvm_free(void *p) { release(p); }
}
