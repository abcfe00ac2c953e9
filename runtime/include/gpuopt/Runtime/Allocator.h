//===- Allocator.h - calling generated code that allocates ------*- C++ -*-===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// Generated code allocates its buffers through runtime/cpu/Allocator.cpp and
// does not check for null. Its callers (the compiled-model ABI, the JIT) call
// it through callGenerated(), which turns a buffer that cannot be allocated,
// or a kernel that fails, into an error message instead of an abort.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_RUNTIME_ALLOCATOR_H
#define GPUOPT_RUNTIME_ALLOCATOR_H

#include <new>
#include <string>

namespace gpuopt::runtime {

/// The packed entry of a generated function (`_mlir_<name>` or gpuopt-
/// compile's wrappers): one pointer per argument and result.
using GeneratedFunction = void (*)(void **);

/// Calls `fn(args)`. Returns true when it ran to the end. When a buffer it
/// asks for cannot be allocated, the call is abandoned at that point (the
/// frames in between are generated code, which holds no resources but the
/// buffers, and these go back to the allocator's cache); when a kernel fails,
/// the call runs on and its results are garbage. Either way it returns false
/// and sets `error`.
bool callGenerated(GeneratedFunction fn, void **args, std::string &error);

/// gpuopt-compile's checked entries (`gpuopt_compiled_init`/`_forward`),
/// which return non-zero without running when a descriptor's shape is not the
/// one the code was compiled for: the same guard, and `status` set to the
/// entry's return value when the call completed.
using CheckedGeneratedFunction = int (*)(void **);
bool callGenerated(CheckedGeneratedFunction fn, void **args, int &status,
                   std::string &error);

/// Records that kernel `kernel` failed with `what` during callGenerated() on
/// this thread, so that the call reports it; outside callGenerated() prints
/// the message and aborts (there is no caller to report to).
void reportKernelFailure(const char *kernel, const char *what);

/// Unsets the process's new-handler while alive, so that running out of
/// memory is std::bad_alloc, which gpuopt's code catches, rather than the
/// abort of the handler that LLVM's tools install. The handler is process-
/// wide, so scopes on all threads count together: the first to open saves
/// and unsets it, the last to close restores it (Allocator.cpp).
class BadAllocScope {
public:
  BadAllocScope();
  ~BadAllocScope();
  BadAllocScope(const BadAllocScope &) = delete;
  BadAllocScope &operator=(const BadAllocScope &) = delete;
};

/// Runs `allocate` in a BadAllocScope; returns false when it ran out of
/// memory.
template <typename Fn> bool tryAllocate(Fn &&allocate) {
  BadAllocScope scope;
  try {
    allocate();
  } catch (const std::bad_alloc &) {
    return false;
  }
  return true;
}

} // namespace gpuopt::runtime

#endif // GPUOPT_RUNTIME_ALLOCATOR_H
