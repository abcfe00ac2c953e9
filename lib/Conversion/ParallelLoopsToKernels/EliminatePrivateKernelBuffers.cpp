//===- EliminatePrivateKernelBuffers.cpp - temporaries in registers -------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// Implements --eliminate-private-kernel-buffers: a host allocation that one
// kernel launch alone uses, and that every thread of the kernel writes
// before it reads, is a scratch buffer (a convolution's accumulator between
// its zero fill, its reduction and its epilogue). Its loads take the value
// stored before them, its stores go, and the kernel loses the argument.
// The rules are in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Conversion/Passes.h"

#include "ConstantOffsets.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"

namespace mlir {
namespace gpuopt {
#define GEN_PASS_DEF_ELIMINATEPRIVATEKERNELBUFFERSPASS
#include "gpuopt/Conversion/Passes.h.inc"
} // namespace gpuopt
} // namespace mlir

using namespace mlir;

namespace {

/// Whether `op` or an op nested in it stores to `arg` (every use of `arg`
/// is a load or store of it, checked before).
bool writes(Operation *op, Value arg) {
  WalkResult r = op->walk([&](memref::StoreOp store) {
    return store.getMemRef() == arg ? WalkResult::interrupt()
                                    : WalkResult::advance();
  });
  return r.wasInterrupted();
}

/// Whether `op` is or holds a barrier or a shuffle: after one, a thread may
/// read what another thread stored before it.
bool synchronizes(Operation *op) {
  return op
      ->walk([](Operation *inner) {
        return isa<gpu::BarrierOp, gpu::ShuffleOp>(inner)
                   ? WalkResult::interrupt()
                   : WalkResult::advance();
      })
      .wasInterrupted();
}

/// The value the thread stored last to `arg` at `load`'s indices before
/// `load`, if it is certain: the nearest store before it, in its block or,
/// out of `scf.if` regions (which run at most once), in the enclosing ones,
/// that has its indices, with every store between provably elsewhere and
/// no loop or other region between that may store to `arg`, and no
/// barrier or shuffle between (another thread may have stored since).
Value getStoredValue(memref::LoadOp load, Value arg) {
  Operation *at = load;
  while (true) {
    for (Operation *op = at->getPrevNode(); op; op = op->getPrevNode()) {
      if (synchronizes(op))
        return Value();
      if (auto store = dyn_cast<memref::StoreOp>(op)) {
        if (store.getMemRef() != arg)
          continue;
        if (llvm::equal(store.getIndices(), load.getIndices()))
          return store.getValueToStore();
        if (gpuopt::areDistinctIndices(store.getIndices(), load.getIndices()))
          continue;
        return Value();
      }
      if (op->getNumRegions() && writes(op, arg))
        return Value();
    }
    Operation *parent = at->getParentOp();
    if (!isa_and_nonnull<scf::IfOp>(parent))
      return Value();
    at = parent;
  }
}

/// Removes kernel argument `index` of `kernel` when no thread reads what an
/// earlier launch left in it: its loads take the value stored before them,
/// then its stores go. Returns whether the argument went.
bool eliminate(gpu::GPUFuncOp kernel, unsigned index) {
  BlockArgument arg = kernel.getArgument(index);
  SmallVector<memref::LoadOp> loads;
  SmallVector<memref::StoreOp> stores;
  for (OpOperand &use : arg.getUses()) {
    if (auto load = dyn_cast<memref::LoadOp>(use.getOwner())) {
      loads.push_back(load);
    } else if (auto store = dyn_cast<memref::StoreOp>(use.getOwner());
               store && use.get() == store.getMemRef()) {
      stores.push_back(store);
    } else {
      return false; // a view, a copy, a value stored, a call
    }
  }
  SmallVector<std::pair<memref::LoadOp, Value>> forwarded;
  for (memref::LoadOp load : loads) {
    Value v = getStoredValue(load, arg);
    if (!v)
      return false;
    forwarded.push_back({load, v});
  }
  for (auto [load, v] : forwarded) {
    load.getResult().replaceAllUsesWith(v);
    load.erase();
  }
  for (memref::StoreOp store : stores)
    store.erase();
  return true;
}

struct EliminatePrivateKernelBuffersPass
    : public gpuopt::impl::EliminatePrivateKernelBuffersPassBase<
          EliminatePrivateKernelBuffersPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Every launch of each kernel, and the uses of each host allocation.
    llvm::DenseMap<Operation *, SmallVector<gpu::LaunchFuncOp>> launches;
    SymbolTableCollection symbols;
    module.walk([&](gpu::LaunchFuncOp launch) {
      auto kernel = symbols.lookupNearestSymbolFrom<gpu::GPUFuncOp>(
          launch, launch.getKernel());
      if (kernel)
        launches[kernel].push_back(launch);
    });
    for (auto &[op, kernelLaunches] : launches) {
      auto kernel = cast<gpu::GPUFuncOp>(op);
      llvm::BitVector removed(kernel.getNumArguments());
      for (unsigned i = 0; i < kernel.getNumArguments(); ++i) {
        if (!isa<MemRefType>(kernel.getArgument(i).getType()))
          continue;
        // Private: in every launch, an allocation of the host function that
        // only this launch (once) and deallocations use.
        bool isPrivate = llvm::all_of(kernelLaunches, [&](gpu::LaunchFuncOp l) {
          Value buffer = l.getKernelOperand(i);
          if (!buffer.getDefiningOp<memref::AllocOp>())
            return false;
          unsigned launchUses = 0;
          for (OpOperand &use : buffer.getUses()) {
            if (isa<memref::DeallocOp>(use.getOwner()))
              continue;
            if (use.getOwner() != l.getOperation())
              return false;
            ++launchUses;
          }
          return launchUses == 1;
        });
        if (isPrivate && eliminate(kernel, i))
          removed.set(i);
      }
      if (removed.none())
        continue;
      for (gpu::LaunchFuncOp l : kernelLaunches) {
        SmallVector<Value> buffers;
        for (unsigned i = removed.size(); i-- > 0;) {
          if (!removed.test(i))
            continue;
          buffers.push_back(l.getKernelOperand(i));
          l.getKernelOperandsMutable().erase(i);
        }
        for (Value buffer : buffers) {
          for (Operation *user : llvm::make_early_inc_range(buffer.getUsers()))
            user->erase(); // deallocations
          buffer.getDefiningOp()->erase();
        }
      }
      if (failed(kernel.eraseArguments(removed))) {
        kernel.emitOpError("could not drop its private buffer arguments");
        return signalPassFailure();
      }
      numEliminated += removed.count();
    }
  }
};

} // namespace
