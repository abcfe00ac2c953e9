//===- LoopBounds.h - constant bounds of an scf.parallel --------*- C++ -*-===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// Shared by the kernel-mapping passes of this directory (not a public
// header).
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_LIB_CONVERSION_PARALLELLOOPSTOKERNELS_LOOPBOUNDS_H
#define GPUOPT_LIB_CONVERSION_PARALLELLOOPSTOKERNELS_LOOPBOUNDS_H

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"

namespace mlir {
namespace gpuopt {

/// Constant lower bounds, trip counts and steps of a parallel loop.
struct LoopBounds {
  SmallVector<int64_t> lower, count, step;
};

/// The bounds of `loop`, or failure when one is not a constant or a step is
/// not positive.
inline FailureOr<LoopBounds> getLoopBounds(scf::ParallelOp loop) {
  LoopBounds b;
  for (auto [lbV, ubV, stV] :
       llvm::zip(loop.getLowerBound(), loop.getUpperBound(), loop.getStep())) {
    std::optional<int64_t> lb = getConstantIntValue(lbV);
    std::optional<int64_t> ub = getConstantIntValue(ubV);
    std::optional<int64_t> st = getConstantIntValue(stV);
    if (!lb || !ub || !st || *st <= 0)
      return failure();
    b.lower.push_back(*lb);
    b.count.push_back(*ub > *lb ? (*ub - *lb + *st - 1) / *st : 0);
    b.step.push_back(*st);
  }
  return b;
}

} // namespace gpuopt
} // namespace mlir

#endif // GPUOPT_LIB_CONVERSION_PARALLELLOOPSTOKERNELS_LOOPBOUNDS_H
