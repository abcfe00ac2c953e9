//===- SplitLongBlocks.cpp - bound the op count of a block ----------------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// Implements --split-long-blocks: the entry block of a function is cut into
// blocks of at most max-ops ops chained by unconditional branches. MLIR
// numbers the ops of a block lazily and renumbers the whole block when an
// insertion finds no free number; the dialect conversions that lower a
// graph to LLVM insert before nearly every op and compare positions after,
// so one block of N ops costs them O(N^2). Blocks of bounded size make it
// O(N).
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Conversion/Passes.h"

#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace mlir {
namespace gpuopt {
#define GEN_PASS_DEF_SPLITLONGBLOCKSPASS
#include "gpuopt/Conversion/Passes.h.inc"
} // namespace gpuopt
} // namespace mlir

using namespace mlir;

namespace {

struct SplitLongBlocksPass
    : public gpuopt::impl::SplitLongBlocksPassBase<SplitLongBlocksPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp function = getOperation();
    if (function.isExternal() || !function.getBody().hasOneBlock())
      return;
    if (maxOps < 2) {
      function.emitOpError("--split-long-blocks needs max-ops >= 2, not ")
          << static_cast<uint64_t>(maxOps);
      return signalPassFailure();
    }
    Block *block = &function.front();
    size_t size = block->getOperations().size();
    if (size <= maxOps)
      return;
    // Cut from the back: each split moves only the ops of one new block,
    // where cutting from the front would move the whole rest every time.
    // Every block but the last keeps maxOps - 1 ops and its branch.
    size_t keep = maxOps - 1;
    size_t cut = ((size - 1) / keep) * keep;
    Block::iterator it = block->end();
    std::advance(it, -static_cast<ptrdiff_t>(size - cut));
    OpBuilder builder(&getContext());
    while (true) {
      Block *tail = block->splitBlock(it);
      builder.setInsertionPointToEnd(block);
      cf::BranchOp::create(builder, function.getLoc(), tail);
      ++numSplits;
      if (cut == keep)
        break;
      // `block` now ends with the new branch: step back over it.
      it = std::prev(block->end());
      std::advance(it, -static_cast<ptrdiff_t>(keep));
      cut -= keep;
    }
  }
};

} // namespace
