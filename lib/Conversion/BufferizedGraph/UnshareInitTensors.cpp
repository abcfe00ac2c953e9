//===- UnshareInitTensors.cpp - one init tensor per destination op --------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// Implements --unshare-init-tensors: CSE merges every `tensor.empty` of one
// type, and every `linalg.fill` of one value into such an empty, into a
// single value that all destination-style ops of that shape then use as
// their init. One-Shot Bufferize's analysis compares each write into that
// value with every other use of it (quadratic in the graph: 95% of a
// 10^5-op CUDA compile), and its in-place decisions turn the shared value
// into copies. Each init use gets its own clone instead, placed right
// before the op that uses it.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Conversion/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"

namespace mlir {
namespace gpuopt {
#define GEN_PASS_DEF_UNSHAREINITTENSORSPASS
#include "gpuopt/Conversion/Passes.h.inc"
} // namespace gpuopt
} // namespace mlir

using namespace mlir;

namespace {

/// The op defining `value` if it is an init worth unsharing: a
/// `tensor.empty`, or a `linalg.fill` (one result) of a `tensor.empty`.
Operation *shareableInit(Value value) {
  Operation *def = value.getDefiningOp();
  if (isa_and_nonnull<tensor::EmptyOp>(def))
    return def;
  auto fill = dyn_cast_or_null<linalg::FillOp>(def);
  if (fill && fill->getNumResults() == 1 &&
      fill.getOutputs().front().getDefiningOp<tensor::EmptyOp>())
    return fill;
  return nullptr;
}

struct UnshareInitTensorsPass
    : public gpuopt::impl::UnshareInitTensorsPassBase<UnshareInitTensorsPass> {
  void runOnOperation() override {
    SmallVector<OpOperand *> inits;
    getOperation().walk([&](DestinationStyleOpInterface op) {
      for (OpOperand &init : op.getDpsInitsMutable())
        if (isa<RankedTensorType>(init.get().getType()))
          inits.push_back(&init);
    });
    llvm::SmallPtrSet<Operation *, 16> kept;
    OpBuilder builder(&getContext());
    for (OpOperand *init : inits) {
      // The init may be a reshape of the shared value (CSE merges those
      // too): the chain of views from it back to the empty or fill.
      SmallVector<Operation *> views;
      Value value = init->get();
      while (Operation *def = value.getDefiningOp()) {
        if (!isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp,
                 tensor::CastOp>(def))
          break;
        views.push_back(def);
        value = def->getOperand(0);
      }
      Operation *def = shareableInit(value);
      if (!def)
        continue;
      bool shared =
          !def->hasOneUse() || llvm::any_of(views, [](Operation *view) {
            return !view->hasOneUse();
          });
      // The first init use keeps the original.
      if (!shared || kept.insert(def).second)
        continue;
      builder.setInsertionPoint(init->getOwner());
      IRMapping mapping;
      if (auto fill = dyn_cast<linalg::FillOp>(def))
        builder.clone(*fill.getOutputs().front().getDefiningOp(), mapping);
      Operation *clone = builder.clone(*def, mapping);
      for (Operation *view : llvm::reverse(views))
        clone = builder.clone(*view, mapping);
      init->set(clone->getResult(0));
      ++numUnshared;
    }
  }
};

} // namespace
