//===- InterchangeReductionsInnermost.cpp - reduction loops innermost -----===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// Implements --interchange-reductions-innermost: the iteration space of
// every `linalg.generic` is permuted so that its parallel dims come first and
// its reduction dims last, each group in its original order. Lowered to
// parallel loops, a reduction then becomes an `scf.parallel` over the outputs
// with sequential `scf.for` loops inside, instead of a sequential loop around
// a parallel one (which the GPU lowering can only run as a one-thread
// kernel). Each output element still accumulates its terms in the same
// order, so the results are bitwise the same.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Conversion/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace gpuopt {
#define GEN_PASS_DEF_INTERCHANGEREDUCTIONSINNERMOSTPASS
#include "gpuopt/Conversion/Passes.h.inc"
} // namespace gpuopt
} // namespace mlir

using namespace mlir;

namespace {

struct InterchangeReductionsInnermostPass
    : public gpuopt::impl::InterchangeReductionsInnermostPassBase<
          InterchangeReductionsInnermostPass> {
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> generics;
    getOperation().walk([&](linalg::GenericOp op) { generics.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (linalg::GenericOp op : generics) {
      SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
      SmallVector<unsigned> order;
      for (auto [d, it] : llvm::enumerate(iterators))
        if (it == utils::IteratorType::parallel)
          order.push_back(d);
      for (auto [d, it] : llvm::enumerate(iterators))
        if (it != utils::IteratorType::parallel)
          order.push_back(d);
      bool sorted = true;
      for (auto [i, d] : llvm::enumerate(order))
        sorted &= i == d;
      if (sorted)
        continue;
      rewriter.setInsertionPoint(op);
      if (failed(linalg::interchangeGenericOp(rewriter, op, order))) {
        op.emitOpError("cannot interchange its reduction dims innermost");
        return signalPassFailure();
      }
      ++numInterchanged;
    }
  }
};

} // namespace
