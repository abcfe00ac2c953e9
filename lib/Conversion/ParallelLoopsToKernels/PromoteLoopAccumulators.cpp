//===- PromoteLoopAccumulators.cpp - accumulators in registers ------------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// Implements --promote-loop-accumulators: a loop-invariant memref.load /
// memref.store pair in an scf.for body becomes a loop-carried value (scalar
// replacement), when no other access in the loop may touch that element;
// several pairs at constant offsets from each other (a register tile's
// accumulators) are promoted together.
// The rules (Passes.td) are what makes it legal; for kernel arguments they
// rest on the CUDA runtime's plan checks.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Conversion/Passes.h"

#include "ConstantOffsets.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"

namespace mlir {
namespace gpuopt {
#define GEN_PASS_DEF_PROMOTELOOPACCUMULATORSPASS
#include "gpuopt/Conversion/Passes.h.inc"
} // namespace gpuopt
} // namespace mlir

using namespace mlir;

namespace {

/// The memory a memref value is a view of: the value its view chain starts
/// from (a function argument, an allocation, a memref.get_global), or null
/// when the chain passes through something else.
Value rootOf(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (isa<memref::AllocOp, memref::AllocaOp, memref::GetGlobalOp>(def))
      return v;
    if (auto view = dyn_cast<ViewLikeOpInterface>(def)) {
      v = view.getViewSource();
      continue;
    }
    if (auto cast = dyn_cast<memref::CastOp>(def)) {
      v = cast.getSource();
      continue;
    }
    return Value();
  }
  return v; // a block argument
}

/// What the function's body tells about its roots.
class RootInfo {
public:
  explicit RootInfo(FunctionOpInterface func)
      : entry(&func.getFunctionBody().front()) {
    auto gpuFunc = dyn_cast<gpu::GPUFuncOp>(func.getOperation());
    isKernel = gpuFunc && gpuFunc.isKernel();
    // The kernel arguments written anywhere in the kernel (conservatively:
    // any store, or any use this cannot tell, through a view of it).
    if (isKernel)
      for (BlockArgument arg : func.getArguments())
        if (isa<MemRefType>(arg.getType()) && mayWrite(arg))
          written.insert(arg);
  }

  /// Whether memory reached from root `a` may overlap memory reached from
  /// root `b` (null: unknown).
  bool mayAlias(Value a, Value b) const {
    if (!a || !b || a == b)
      return true;
    Operation *da = a.getDefiningOp(), *db = b.getDefiningOp();
    if (isa_and_nonnull<memref::AllocOp, memref::AllocaOp>(da) ||
        isa_and_nonnull<memref::AllocOp, memref::AllocaOp>(db))
      return false; // a fresh allocation overlaps nothing else
    auto ga = dyn_cast_or_null<memref::GetGlobalOp>(da);
    auto gb = dyn_cast_or_null<memref::GetGlobalOp>(db);
    if (ga && gb)
      return ga.getName() == gb.getName();
    // A kernel's arguments are buffers of the launch plan's arena, never a
    // global of its module.
    if ((ga || gb) && isKernel)
      return false;
    auto aa = dyn_cast<BlockArgument>(a), ab = dyn_cast<BlockArgument>(b);
    if (!isKernel || !aa || !ab || !isEntryArgument(aa) || !isEntryArgument(ab))
      return true;
    // Two kernel arguments: the plan checks refuse a launch where a written
    // argument overlaps another unless both are written (in place).
    return written.contains(aa) && written.contains(ab);
  }

private:
  bool isEntryArgument(BlockArgument arg) const {
    return arg.getOwner() == entry;
  }

  static bool mayWrite(Value v) {
    for (OpOperand &use : v.getUses()) {
      Operation *user = use.getOwner();
      if (isa<memref::LoadOp, memref::DimOp>(user))
        continue;
      if (auto store = dyn_cast<memref::StoreOp>(user)) {
        if (use.get() == store.getMemRef())
          return true;
        continue;
      }
      if (isa<ViewLikeOpInterface, memref::CastOp>(user)) {
        if (llvm::any_of(user->getResults(), mayWrite))
          return true;
        continue;
      }
      return true;
    }
    return false;
  }

  Block *entry;
  bool isKernel = false;
  llvm::DenseSet<Value> written;
};

/// One memory access inside the loop: the op and the root of the memory it
/// touches (null: unknown, may touch anything).
struct Access {
  Operation *op;
  Value root;
};

/// Collects the accesses of every op nested in `loop`; false if an op's
/// effects are unknown.
bool collectAccesses(scf::ForOp loop, SmallVectorImpl<Access> &accesses) {
  WalkResult result = loop.getBody()->walk([&](Operation *op) {
    if (auto load = dyn_cast<memref::LoadOp>(op)) {
      accesses.push_back({op, rootOf(load.getMemRef())});
      return WalkResult::advance();
    }
    if (auto store = dyn_cast<memref::StoreOp>(op)) {
      accesses.push_back({op, rootOf(store.getMemRef())});
      return WalkResult::advance();
    }
    if (op->hasTrait<OpTrait::HasRecursiveMemoryEffects>())
      return WalkResult::advance(); // its nested ops are walked
    auto iface = dyn_cast<MemoryEffectOpInterface>(op);
    if (!iface)
      return WalkResult::interrupt();
    SmallVector<MemoryEffects::EffectInstance> effects;
    iface.getEffects(effects);
    for (const MemoryEffects::EffectInstance &effect : effects) {
      if (!isa<MemoryEffects::Read, MemoryEffects::Write>(effect.getEffect()))
        continue; // allocation and free touch no element
      Value value = effect.getValue();
      accesses.push_back({op, value ? rootOf(value) : Value()});
    }
    return WalkResult::advance();
  });
  return !result.wasInterrupted();
}

/// Whether `op`, a load or store through `memref` at `indices`, provably
/// touches another element: in some dimension both indices are one base
/// plus different constants (the accumulators of a register tile).
bool touchesAnotherElement(Operation *op, Value memref, ValueRange indices) {
  Value otherMemref;
  ValueRange otherIndices;
  if (auto load = dyn_cast<memref::LoadOp>(op)) {
    otherMemref = load.getMemRef();
    otherIndices = load.getIndices();
  } else if (auto store = dyn_cast<memref::StoreOp>(op)) {
    otherMemref = store.getMemRef();
    otherIndices = store.getIndices();
  } else {
    return false;
  }
  return otherMemref == memref &&
         gpuopt::areDistinctIndices(indices, otherIndices);
}

bool runsAtLeastOnce(scf::ForOp loop) {
  std::optional<int64_t> lb = getConstantIntValue(loop.getLowerBound());
  std::optional<int64_t> ub = getConstantIntValue(loop.getUpperBound());
  return lb && ub && *lb < *ub;
}

/// Promotes every legal pair of `loop`; returns the loop that replaces it
/// (or `loop`) and adds the number promoted to `count`.
scf::ForOp promote(scf::ForOp loop, const RootInfo &info,
                   RewriterBase &rewriter, uint64_t &count) {
  if (!runsAtLeastOnce(loop))
    return loop;
  SmallVector<Access> accesses;
  if (!collectAccesses(loop, accesses))
    return loop;
  auto invariant = [&](ValueRange values) {
    return llvm::all_of(
        values, [&](Value v) { return loop.isDefinedOutsideOfLoop(v); });
  };

  SmallVector<std::pair<memref::LoadOp, memref::StoreOp>> pairs;
  for (Operation &op : loop.getBody()->without_terminator()) {
    auto load = dyn_cast<memref::LoadOp>(op);
    if (!load || !invariant(load.getMemRef()) || !invariant(load.getIndices()))
      continue;
    Value root = rootOf(load.getMemRef());
    if (!root)
      continue;
    memref::StoreOp store;
    bool legal = true;
    for (const Access &access : accesses) {
      if (access.op == load.getOperation())
        continue;
      auto other = dyn_cast<memref::StoreOp>(access.op);
      if (!store && other && other->getBlock() == loop.getBody() &&
          other.getMemRef() == load.getMemRef() &&
          llvm::equal(other.getIndices(), load.getIndices()) &&
          load->isBeforeInBlock(other)) {
        store = other;
        continue;
      }
      if (touchesAnotherElement(access.op, load.getMemRef(), load.getIndices()))
        continue;
      if (info.mayAlias(root, access.root)) {
        legal = false;
        break;
      }
    }
    if (legal && store)
      pairs.push_back({load, store});
  }
  if (pairs.empty())
    return loop;

  rewriter.setInsertionPoint(loop);
  SmallVector<Value> inits;
  for (auto [load, store] : pairs)
    inits.push_back(memref::LoadOp::create(rewriter, load.getLoc(),
                                           load.getMemRef(), load.getIndices())
                        .getResult());
  FailureOr<LoopLikeOpInterface> replaced =
      cast<LoopLikeOpInterface>(loop.getOperation())
          .replaceWithAdditionalYields(
              rewriter, inits, /*replaceInitOperandUsesInLoop=*/false,
              [&](OpBuilder &, Location, ArrayRef<BlockArgument>) {
                SmallVector<Value> yields;
                for (auto [load, store] : pairs)
                  yields.push_back(store.getValueToStore());
                return yields;
              });
  if (failed(replaced))
    return loop; // scf.for always succeeds; nothing was changed otherwise
  auto newLoop = cast<scf::ForOp>(replaced->getOperation());
  unsigned first = newLoop.getNumResults() - pairs.size();
  rewriter.setInsertionPointAfter(newLoop);
  for (auto [i, pair] : llvm::enumerate(pairs)) {
    auto [load, store] = pair;
    rewriter.replaceAllUsesWith(load.getResult(),
                                newLoop.getRegionIterArgs()[first + i]);
    memref::StoreOp::create(rewriter, store.getLoc(),
                            newLoop.getResult(first + i), store.getMemRef(),
                            store.getIndices());
    rewriter.eraseOp(store);
    rewriter.eraseOp(load);
  }
  count += pairs.size();
  return newLoop;
}

struct PromoteLoopAccumulatorsPass
    : public gpuopt::impl::PromoteLoopAccumulatorsPassBase<
          PromoteLoopAccumulatorsPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    uint64_t count = 0;
    getOperation()->walk([&](FunctionOpInterface func) {
      if (func.isExternal())
        return;
      RootInfo info(func);
      // Post-order: inner loops first, so the pair left around a promoted
      // inner loop is in its parent's body when the parent is visited.
      SmallVector<scf::ForOp> loops;
      func->walk([&](scf::ForOp loop) { loops.push_back(loop); });
      for (scf::ForOp loop : loops)
        promote(loop, info, rewriter, count);
    });
    numPromoted += count;
  }
};

} // namespace
