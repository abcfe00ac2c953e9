//===- TargetRegistry.cpp - the targets of gpuopt-compile -----------------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Target/TargetRegistry.h"

#include "llvm/ADT/STLExtras.h"

#include <vector>

using namespace mlir;
using namespace mlir::gpuopt;

namespace {
std::vector<TargetRegistration> &registry() {
  static std::vector<TargetRegistration> targets;
  return targets;
}
} // namespace

void mlir::gpuopt::registerTarget(TargetRegistration target) {
  if (llvm::any_of(registry(), [&](const TargetRegistration &t) {
        return t.name == target.name;
      }))
    return;
  registry().push_back(std::move(target));
}

ArrayRef<TargetRegistration> mlir::gpuopt::getRegisteredTargets() {
  return registry();
}
