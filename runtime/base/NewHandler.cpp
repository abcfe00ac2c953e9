//===- NewHandler.cpp - the process-wide new-handler scopes ---------------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// BadAllocScope (runtime/include/gpuopt/Runtime/Allocator.h) lives in
// GpuoptRuntime, not next to the allocator in GpuoptCpuKernels: the file
// readers use it in every tool, and the tools do not link the generated code's
// allocator.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Runtime/Allocator.h"

#include <mutex>
#include <new>

namespace gpuopt::runtime {

namespace {
/// The BadAllocScopes open on all threads (the new-handler is per process:
/// scopes that saved and restored it each would, when they overlap on two
/// threads, restore it while the other is still open, or restore the unset
/// handler last).
struct HandlerScopes {
  std::mutex mutex;
  int open = 0;
  std::new_handler saved = nullptr;
};
HandlerScopes &handlerScopes() {
  static HandlerScopes *instance = new HandlerScopes(); // Never destroyed.
  return *instance;
}
} // namespace

BadAllocScope::BadAllocScope() {
  HandlerScopes &h = handlerScopes();
  std::lock_guard<std::mutex> lock(h.mutex);
  if (h.open++ == 0)
    h.saved = std::set_new_handler(nullptr);
}

BadAllocScope::~BadAllocScope() {
  HandlerScopes &h = handlerScopes();
  std::lock_guard<std::mutex> lock(h.mutex);
  if (--h.open == 0)
    std::set_new_handler(h.saved);
}

} // namespace gpuopt::runtime
