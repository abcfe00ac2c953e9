//===- FreeBuffersAfterLastUse.cpp - one dealloc per alloc, linear time ---===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// Implements --free-buffers-after-last-use: every memref.alloc of a function
// gets a memref.dealloc after the last op of its block that uses it or a
// view of it. One pass over the uses, so linear in the size of the function
// (upstream's ownership-based deallocation and its simplification are not).
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Conversion/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"

#include "llvm/ADT/SmallVector.h"

namespace mlir {
namespace gpuopt {
#define GEN_PASS_DEF_FREEBUFFERSAFTERLASTUSEPASS
#include "gpuopt/Conversion/Passes.h.inc"
} // namespace gpuopt
} // namespace mlir

using namespace mlir;

namespace {

/// Returns the last op of `alloc`'s block that uses the buffer or one of its
/// views, or the error that makes freeing it there unsafe.
FailureOr<Operation *> findLastUse(memref::AllocOp alloc) {
  Block *block = alloc->getBlock();
  Operation *last = alloc;
  // Any memref result of an op that takes the buffer may alias it (views,
  // casts, reshapes, calls that return an argument): follow them all.
  SmallVector<Value> aliases{alloc.getResult()};
  while (!aliases.empty()) {
    Value alias = aliases.pop_back_val();
    for (Operation *user : alias.getUsers()) {
      if (isa<memref::DeallocOp>(user))
        return alloc.emitOpError("is freed already");
      if (user->hasTrait<OpTrait::IsTerminator>())
        return alloc.emitOpError("leaves its block through '")
               << user->getName()
               << "' (run --buffer-results-to-out-params first)";
      for (Value result : user->getResults()) {
        if (isa<BaseMemRefType>(result.getType()))
          aliases.push_back(result);
        else if (isa<TensorType>(result.getType()))
          return alloc.emitOpError("is read as a tensor by '")
                 << user->getName() << "', which may outlive it";
      }
      Operation *ancestor = block->findAncestorOpInBlock(*user);
      if (!ancestor)
        return alloc.emitOpError("is used outside its block, by '")
               << user->getName() << "'";
      if (last->isBeforeInBlock(ancestor))
        last = ancestor;
    }
  }
  return last;
}

struct FreeBuffersAfterLastUsePass
    : public gpuopt::impl::FreeBuffersAfterLastUsePassBase<
          FreeBuffersAfterLastUsePass> {
  void runOnOperation() override {
    // Find every insertion point before inserting anything, so that the
    // block's op order (isBeforeInBlock) is computed once, not per dealloc.
    SmallVector<std::pair<memref::AllocOp, Operation *>> frees;
    bool failed = false;
    getOperation().walk([&](memref::AllocOp alloc) {
      FailureOr<Operation *> last = findLastUse(alloc);
      if (mlir::failed(last))
        failed = true;
      else
        frees.emplace_back(alloc, *last);
    });
    if (failed)
      return signalPassFailure();
    OpBuilder builder(&getContext());
    for (auto [alloc, last] : frees) {
      builder.setInsertionPointAfter(last);
      memref::DeallocOp::create(builder, alloc.getLoc(), alloc.getResult());
    }
    numFreed += frees.size();
  }
};

} // namespace
