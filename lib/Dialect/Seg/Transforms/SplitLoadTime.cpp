//===- SplitLoadTime.cpp - hoist load-time ops into an initializer --------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// Splits @<entry> into @<entry>_init (ops computed from parameters only, run
// once per loaded checkpoint) and @<entry> (per inference), so that compiled
// models do not recompute e.g. seg.fold_batch_norm at every call. The
// classification and the split are those of LoadTime.h, which every other
// consumer (interpreter, CPU JIT, targets, cost model) uses too.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Dialect/Seg/Transforms/LoadTime.h"
#include "gpuopt/Dialect/Seg/Transforms/Passes.h"

namespace mlir {
namespace gpuopt {
namespace seg {
#define GEN_PASS_DEF_SPLITLOADTIMEPASS
#include "gpuopt/Dialect/Seg/Transforms/Passes.h.inc"
} // namespace seg
} // namespace gpuopt
} // namespace mlir

using namespace mlir;
using namespace mlir::gpuopt::seg;

namespace {
struct SplitLoadTimePass
    : mlir::gpuopt::seg::impl::SplitLoadTimePassBase<SplitLoadTimePass> {
  using Base::Base;

  void runOnOperation() override {
    FailureOr<SplitLoadTimeResult> split = splitLoadTime(getOperation(), entry);
    if (failed(split))
      return signalPassFailure();
    numHoisted = split->numHoisted;
    numDerived = split->numDerived;
  }
};
} // namespace
