//===- UniqueReturnBuffers.cpp - each returned buffer once ----------------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// Implements --unique-return-buffers: a `func.return` that returns one
// memref value at several positions (CSE merges identical ops whose results
// are all returned) returns a fresh copy of it at every position after the
// first. Upstream --buffer-results-to-out-params with hoist-static-allocs
// replaces a returned allocation by its out-parameter and erases it, once
// per position: the second position then uses the erased allocation
// (SIGSEGV, found by the seg-lowering fuzzer).
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Conversion/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"

namespace mlir {
namespace gpuopt {
#define GEN_PASS_DEF_UNIQUERETURNBUFFERSPASS
#include "gpuopt/Conversion/Passes.h.inc"
} // namespace gpuopt
} // namespace mlir

using namespace mlir;

namespace {

struct UniqueReturnBuffersPass
    : public gpuopt::impl::UniqueReturnBuffersPassBase<
          UniqueReturnBuffersPass> {
  void runOnOperation() override {
    WalkResult result = getOperation().walk([&](func::ReturnOp ret) {
      llvm::SmallPtrSet<Value, 8> seen;
      OpBuilder builder(ret);
      for (OpOperand &operand : ret->getOpOperands()) {
        Value value = operand.get();
        auto type = dyn_cast<MemRefType>(value.getType());
        if (!type || seen.insert(value).second)
          continue;
        if (!type.hasStaticShape() || !type.getLayout().isIdentity()) {
          ret.emitOpError("returns the buffer of result ")
              << operand.getOperandNumber()
              << " twice and it has no static identity layout to copy";
          return WalkResult::interrupt();
        }
        Value copy = memref::AllocOp::create(builder, ret.getLoc(), type);
        memref::CopyOp::create(builder, ret.getLoc(), value, copy);
        operand.set(copy);
        ++numCopies;
      }
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
