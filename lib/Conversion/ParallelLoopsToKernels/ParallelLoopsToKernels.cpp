//===- ParallelLoopsToKernels.cpp - outline loop nests into kernels -------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// Implements --convert-parallel-loops-to-kernels: the host functions of a
// bufferized module become sequences of gpu.launch_func over root buffers,
// and every loop nest becomes a kernel of one gpu.module.
//
//===----------------------------------------------------------------------===//

#include "LoopBounds.h"
#include "MemRefRoot.h"
#include "WrittenBuffers.h"
#include "gpuopt/Conversion/ParallelLoopsToKernels/RegisterTile.h"
#include "gpuopt/Conversion/ParallelLoopsToKernels/WarpRows.h"
#include "gpuopt/Conversion/ParallelLoopsToKernels/WorkgroupTile.h"
#include "gpuopt/Conversion/Passes.h"
#include "gpuopt/Conversion/SegToCpuKernels/KernelCallRoutine.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Transforms/RegionUtils.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"

#include <functional>

namespace mlir {
namespace gpuopt {
#define GEN_PASS_DEF_CONVERTPARALLELLOOPSTOKERNELSPASS
#include "gpuopt/Conversion/Passes.h.inc"
} // namespace gpuopt
} // namespace mlir

using namespace mlir;
using mlir::gpuopt::getLoopBounds;
using mlir::gpuopt::LoopBounds;

namespace {

/// Ops that stay on the host: allocations and the values kernels are
/// launched with.
bool isHostOp(Operation *op) {
  return isa<memref::AllocOp, memref::DeallocOp, func::ReturnOp>(op) ||
         isPure(op) || isa<memref::GetGlobalOp>(op);
}

/// Whether `op` can be cloned into a kernel instead of passing its result:
/// constants, pure scalar arithmetic, views and globals.
bool isSinkable(Operation *op) {
  return isa<memref::GetGlobalOp>(op) ||
         (isPure(op) && op->getNumRegions() == 0);
}

/// One memory access of a loop body.
struct Access {
  Value root;
  Value memref;
  SmallVector<Value> indices;
  bool write;
};

/// Collects the loads and stores of `loop`; fails if it has other memory
/// effects whose footprint is unknown.
LogicalResult collectAccesses(scf::ParallelOp loop,
                              SmallVectorImpl<Access> &out) {
  WalkResult r = loop.getBody()->walk([&](Operation *op) {
    if (auto load = dyn_cast<memref::LoadOp>(op)) {
      out.push_back({mlir::gpuopt::getMemRefRoot(load.getMemRef()),
                     load.getMemRef(), llvm::to_vector(load.getIndices()),
                     false});
      return WalkResult::advance();
    }
    if (auto store = dyn_cast<memref::StoreOp>(op)) {
      out.push_back({mlir::gpuopt::getMemRefRoot(store.getMemRef()),
                     store.getMemRef(), llvm::to_vector(store.getIndices()),
                     true});
      return WalkResult::advance();
    }
    if (isMemoryEffectFree(op) ||
        isa<scf::ForOp, scf::IfOp, scf::YieldOp, scf::ReduceOp>(op))
      return WalkResult::advance();
    return WalkResult::interrupt();
  });
  return failure(r.wasInterrupted());
}

/// The product of the constant trip counts of the deepest nest of `scf.for`
/// loops in `loop`'s body (0 without any; a non-constant loop counts 1).
int64_t getSequentialWork(scf::ParallelOp loop) {
  int64_t most = 0;
  loop.getBody()->walk([&](scf::ForOp f) {
    int64_t work = 1;
    for (Operation *op = f; op != loop; op = op->getParentOp()) {
      auto g = dyn_cast<scf::ForOp>(op);
      if (!g)
        continue;
      if (std::optional<APInt> n = g.getStaticTripCount())
        work *= std::max<int64_t>(n->getSExtValue(), 1);
    }
    most = std::max(most, work);
  });
  return most;
}

/// Whether every access to a buffer of `shared`, in the first loop (`a1`)
/// and in the second (`a2`, whose indices `ivs` renames into the first's), is
/// through one memref value at one list of indices that names every value of
/// `owned`: each iteration of the first over `owned` touches its own
/// elements of those buffers, and the second touches them at the same
/// iteration.
bool isPointwise(ArrayRef<Access> a1, ArrayRef<Access> a2,
                 const llvm::SetVector<Value> &shared, const IRMapping &ivs,
                 ArrayRef<Value> owned) {
  auto mapped = [&](const Access &a, bool inSecond) {
    SmallVector<Value> idx;
    for (Value v : a.indices)
      idx.push_back(inSecond ? ivs.lookupOrDefault(v) : v);
    return idx;
  };
  for (Value root : shared) {
    std::optional<std::pair<Value, SmallVector<Value>>> pattern;
    auto check = [&](const Access &a, bool inSecond) {
      if (a.root != root)
        return true;
      SmallVector<Value> idx = mapped(a, inSecond);
      if (!pattern) {
        for (Value iv : owned)
          if (!llvm::is_contained(idx, iv))
            return false;
        pattern.emplace(a.memref, idx);
        return true;
      }
      return pattern->first == a.memref && pattern->second == idx;
    };
    for (const Access &a : a1)
      if (!check(a, false))
        return false;
    for (const Access &a : a2)
      if (!check(a, true))
        return false;
  }
  return true;
}

/// The buffers written by one of the loops and accessed by the other.
llvm::SetVector<Value> getSharedRoots(ArrayRef<Access> a1,
                                      ArrayRef<Access> a2) {
  llvm::SetVector<Value> shared;
  for (const Access &x : a1)
    for (const Access &y : a2)
      if (x.root == y.root && (x.write || y.write))
        shared.insert(x.root);
  return shared;
}

/// How `second` fuses into `first`: for each loop index of `first`, the
/// index of `second` that names the same iteration (the identity for equal
/// bounds, else read off the buffers they share); the other indices of
/// `second` (with `serial`) run as sequential loops in `first`'s thread.
/// None when they cannot fuse. Every buffer written by one loop and accessed
/// by the other must be accessed point-wise: through the same memref value
/// at the same indices, which name every index of `first` (so each of its
/// threads owns the elements it touches).
std::optional<SmallVector<unsigned>>
getFusionMap(scf::ParallelOp first, scf::ParallelOp second, bool serial) {
  if (!first.getInitVals().empty() || !second.getInitVals().empty())
    return std::nullopt;
  FailureOr<LoopBounds> b1 = getLoopBounds(first), b2 = getLoopBounds(second);
  if (failed(b1) || failed(b2))
    return std::nullopt;
  size_t n1 = b1->count.size(), n2 = b2->count.size();
  bool sameBounds =
      b1->lower == b2->lower && b1->count == b2->count && b1->step == b2->step;
  // Other bounds: the same dims in another order, or (with `serial`) more.
  if (!sameBounds && (n2 < n1 || (n2 > n1 && !serial)))
    return std::nullopt;
  SmallVector<Access> a1, a2;
  if (failed(collectAccesses(first, a1)) || failed(collectAccesses(second, a2)))
    return std::nullopt;
  llvm::SetVector<Value> shared = getSharedRoots(a1, a2);

  SmallVector<unsigned> map;
  if (sameBounds) {
    for (unsigned d = 0; d < n1; ++d)
      map.push_back(d);
  } else {
    // Read the correspondence off the shared accesses: where `first` indexes
    // with its loop index i and `second`, at the same position of the same
    // memref, with its index j, j names i's iteration (a depthwise
    // convolution iterates (h, w, c), its fill and epilogue (c, h, w)).
    if (shared.empty())
      return std::nullopt;
    auto ivPos = [](scf::ParallelOp loop, Value v) -> std::optional<unsigned> {
      auto arg = dyn_cast<BlockArgument>(v);
      if (!arg || arg.getOwner() != loop.getBody())
        return std::nullopt;
      return arg.getArgNumber();
    };
    SmallVector<std::optional<unsigned>> partial(n1);
    for (const Access &x : a1)
      for (const Access &y : a2) {
        if (x.root != y.root || !shared.contains(x.root) ||
            x.memref != y.memref || x.indices.size() != y.indices.size())
          continue;
        for (auto [u, v] : llvm::zip(x.indices, y.indices)) {
          std::optional<unsigned> i = ivPos(first, u), j = ivPos(second, v);
          if (!i || !j)
            continue;
          if (partial[*i] && *partial[*i] != *j)
            return std::nullopt;
          partial[*i] = *j;
        }
      }
    for (unsigned i = 0; i < n1; ++i) {
      if (!partial[i])
        return std::nullopt;
      unsigned j = *partial[i];
      if (llvm::is_contained(map, j) || b1->lower[i] != b2->lower[j] ||
          b1->count[i] != b2->count[j] || b1->step[i] != b2->step[j])
        return std::nullopt;
      map.push_back(j);
    }
    // A thread of `first` takes on the iterations of `second` it names:
    // only when it already loops (a reduction) for at least as long.
    int64_t serialCount = 1;
    for (unsigned j = 0; j < n2; ++j)
      if (!llvm::is_contained(map, j))
        serialCount *= b2->count[j];
    if (serialCount > 1 && serialCount > getSequentialWork(first))
      return std::nullopt;
  }

  IRMapping ivs;
  for (unsigned i = 0; i < n1; ++i)
    ivs.map(second.getInductionVars()[map[i]], first.getInductionVars()[i]);
  if (!isPointwise(a1, a2, shared, ivs,
                   llvm::to_vector(first.getInductionVars())))
    return std::nullopt;
  return map;
}

/// The static box of `root` that `view` covers when it is a static subview
/// of it (none: possibly all of it).
using Box = SmallVector<std::pair<int64_t, int64_t>>;
std::optional<Box> getBox(Value view, Value root) {
  auto sub = view.getDefiningOp<memref::SubViewOp>();
  if (!sub || sub.getSource() != root)
    return std::nullopt;
  ArrayRef<int64_t> off = sub.getStaticOffsets(), size = sub.getStaticSizes(),
                    stride = sub.getStaticStrides();
  Box box;
  for (size_t d = 0; d < off.size(); ++d) {
    if (ShapedType::isDynamic(off[d]) || ShapedType::isDynamic(size[d]) ||
        ShapedType::isDynamic(stride[d]) || size[d] < 1)
      return std::nullopt;
    box.push_back({off[d], off[d] + (size[d] - 1) * stride[d]});
  }
  return box;
}

bool areDisjoint(const std::optional<Box> &a, const std::optional<Box> &b) {
  if (!a || !b || a->size() != b->size())
    return false;
  for (size_t d = 0; d < a->size(); ++d)
    if ((*a)[d].second < (*b)[d].first || (*b)[d].second < (*a)[d].first)
      return true;
  return false;
}

/// Where a loop joins the sequential loops that end `first`'s body (those
/// row fusion made): the value each index of the joining loop takes (an
/// index of `first` or of one of those loops) and the op its body goes
/// before (the innermost loop's terminator).
struct NestFusion {
  SmallVector<Value> ivs;
  Operation *point;
};

/// Whether `second` can join the nest of `scf.for` loops that ends `first`'s
/// body (after row fusion, a LayerNorm's loop over its channels): `second`
/// iterates the dims of `first` and of the nest, matched through the buffers
/// they share, which both access point-wise at all of those indices. Each
/// iteration of `second` then runs in the iteration of the nest that
/// produced what it reads (a LayerNorm's elementwise consumer), after it.
std::optional<NestFusion> getNestFusion(scf::ParallelOp first,
                                        scf::ParallelOp second) {
  if (!first.getInitVals().empty() || !second.getInitVals().empty())
    return std::nullopt;
  FailureOr<LoopBounds> b1 = getLoopBounds(first), b2 = getLoopBounds(second);
  if (failed(b1) || failed(b2))
    return std::nullopt;
  // The candidate indices and their bounds: `first`'s, then the nest's.
  SmallVector<Value> owned = llvm::to_vector(first.getInductionVars());
  LoopBounds ownedBounds = *b1;
  Block *body = first.getBody();
  while (auto loop = dyn_cast_or_null<scf::ForOp>(
             body->getTerminator()->getPrevNode())) {
    std::optional<int64_t> lb = getConstantIntValue(loop.getLowerBound());
    std::optional<int64_t> ub = getConstantIntValue(loop.getUpperBound());
    std::optional<int64_t> st = getConstantIntValue(loop.getStep());
    if (!loop.getInitArgs().empty() || !lb || !ub || !st || *st <= 0)
      break;
    owned.push_back(loop.getInductionVar());
    ownedBounds.lower.push_back(*lb);
    ownedBounds.count.push_back(*ub > *lb ? (*ub - *lb + *st - 1) / *st : 0);
    ownedBounds.step.push_back(*st);
    body = loop.getBody();
  }
  size_t n2 = b2->count.size();
  if (body == first.getBody() || owned.size() != n2)
    return std::nullopt;
  SmallVector<Access> a1, a2;
  if (failed(collectAccesses(first, a1)) || failed(collectAccesses(second, a2)))
    return std::nullopt;
  llvm::SetVector<Value> shared = getSharedRoots(a1, a2);
  if (shared.empty())
    return std::nullopt;
  SmallVector<std::optional<unsigned>> partial(n2);
  for (const Access &x : a1)
    for (const Access &y : a2) {
      if (x.root != y.root || !shared.contains(x.root) ||
          x.memref != y.memref || x.indices.size() != y.indices.size())
        continue;
      for (auto [u, v] : llvm::zip(x.indices, y.indices)) {
        auto arg = dyn_cast<BlockArgument>(v);
        auto *k = llvm::find(owned, u);
        if (!arg || arg.getOwner() != second.getBody() || k == owned.end())
          continue;
        unsigned j = arg.getArgNumber();
        unsigned i = k - owned.begin();
        if (partial[j] && *partial[j] != i)
          return std::nullopt;
        partial[j] = i;
      }
    }
  NestFusion result;
  IRMapping ivs;
  SmallVector<unsigned> used;
  for (unsigned j = 0; j < n2; ++j) {
    if (!partial[j] || llvm::is_contained(used, *partial[j]))
      return std::nullopt;
    unsigned i = *partial[j];
    if (ownedBounds.lower[i] != b2->lower[j] ||
        ownedBounds.count[i] != b2->count[j] ||
        ownedBounds.step[i] != b2->step[j])
      return std::nullopt;
    used.push_back(i);
    result.ivs.push_back(owned[i]);
    ivs.map(second.getInductionVars()[j], owned[i]);
  }
  if (!isPointwise(a1, a2, shared, ivs, owned))
    return std::nullopt;
  result.point = body->getTerminator();
  return result;
}

/// A copy's buffers, and the box its target covers in the target root when
/// it is a static subview of it (none: possibly all of it).
struct CopyInfo {
  memref::CopyOp op;
  Value srcRoot, dstRoot;
  std::optional<Box> box;
};

CopyInfo getCopyInfo(memref::CopyOp copy) {
  Value dstRoot = mlir::gpuopt::getMemRefRoot(copy.getTarget());
  return {copy, mlir::gpuopt::getMemRefRoot(copy.getSource()), dstRoot,
          getBox(copy.getTarget(), dstRoot)};
}

/// Makes the producers of a copied buffer write straight into the copy's
/// target: a `memref.alloc` S whose only uses are loads and stores, then one
/// `memref.copy` of all of S into a static subview V of (or all of) another
/// root buffer D, is replaced by V, and the copy disappears (a concat's
/// pieces, a result copied into an out-parameter). Legal when nothing from
/// S's first use to the copy touches D, except through static subviews
/// disjoint from V (the other pieces of a concat): D's other contents are
/// then read and written in the same order as before, and V holds S's
/// contents from the copy on, as before. D's allocation and V move above
/// S's allocation.
void elideCopies(Block &block) {
  SmallVector<memref::CopyOp> copies;
  for (Operation &op : block)
    if (auto copy = dyn_cast<memref::CopyOp>(&op))
      copies.push_back(copy);
  for (memref::CopyOp copy : copies) {
    auto alloc = copy.getSource().getDefiningOp<memref::AllocOp>();
    if (!alloc || alloc->getBlock() != &block ||
        !alloc.getType().getLayout().isIdentity())
      continue;
    Value target = copy.getTarget();
    Value dst = mlir::gpuopt::getMemRefRoot(target);
    std::optional<Box> box = getBox(target, dst);
    if (!(box || target == dst) || dst == alloc.getResult())
      continue;
    auto dstAlloc = dst.getDefiningOp<memref::AllocOp>();
    auto dstArg = dyn_cast<BlockArgument>(dst);
    if (!(dstAlloc && dstAlloc->getBlock() == &block) &&
        !(dstArg && dstArg.getOwner() == &block))
      continue;
    if (dstAlloc && !dstAlloc.getDynamicSizes().empty())
      continue;
    // Every other use of S is a load or store before the copy.
    Operation *firstUse = nullptr;
    bool usable = true;
    for (OpOperand &use : alloc->getUses()) {
      Operation *user = use.getOwner();
      if (user == copy)
        continue;
      Operation *top = block.findAncestorOpInBlock(*user);
      bool access = isa<memref::LoadOp>(user) ||
                    (isa<memref::StoreOp>(user) &&
                     cast<memref::StoreOp>(user).getMemRef() == use.get());
      if (!access || !top || !top->isBeforeInBlock(copy)) {
        usable = false;
        break;
      }
      if (!firstUse || top->isBeforeInBlock(firstUse))
        firstUse = top;
    }
    if (!usable || !firstUse)
      continue;
    for (Operation *op = firstUse; op != copy && usable;
         op = op->getNextNode()) {
      op->walk([&](Operation *inner) {
        // Views and allocations touch no contents.
        if (isPure(inner) || isa<memref::AllocOp>(inner))
          return;
        for (Value v : inner->getOperands())
          if (isa<MemRefType>(v.getType()) &&
              mlir::gpuopt::getMemRefRoot(v) == dst &&
              !areDisjoint(getBox(v, dst), box))
            usable = false;
      });
    }
    if (!usable)
      continue;
    if (dstAlloc && alloc->isBeforeInBlock(dstAlloc))
      dstAlloc->moveBefore(alloc);
    Value replacement = dst;
    if (target != dst) {
      Operation *view = target.getDefiningOp();
      if (alloc->isBeforeInBlock(view))
        view->moveAfter(alloc);
      replacement = view->getResult(0);
    }
    copy.erase();
    alloc.getResult().replaceAllUsesWith(replacement);
    alloc.erase();
  }
}

/// Whether `c` can run concurrently with every copy of `group`: it reads no
/// buffer they write, writes none they read, and writes disjoint boxes of
/// the buffers they also write.
bool isIndependent(const CopyInfo &c, ArrayRef<CopyInfo> group) {
  for (const CopyInfo &g : group) {
    if (c.srcRoot == g.dstRoot || c.dstRoot == g.srcRoot)
      return false;
    if (c.dstRoot != g.dstRoot)
      continue;
    if (!areDisjoint(c.box, g.box))
      return false;
  }
  return true;
}

/// Splits the runs of memref.copy in `block` (allocations and pure ops may
/// sit between them) into groups of independent copies with static shapes; with
/// `batch` false every copy is its own group.
SmallVector<SmallVector<memref::CopyOp>> groupCopies(Block &block, bool batch) {
  SmallVector<SmallVector<memref::CopyOp>> groups;
  SmallVector<CopyInfo> current;
  auto flush = [&] {
    if (current.empty())
      return;
    groups.emplace_back();
    for (CopyInfo &c : current)
      groups.back().push_back(c.op);
    current.clear();
  };
  for (Operation &op : block) {
    auto copy = dyn_cast<memref::CopyOp>(&op);
    if (!copy) {
      // Allocations and views neither read nor write buffer contents.
      if (!isa<memref::AllocOp>(op) &&
          !(isPure(&op) && op.getNumRegions() == 0))
        flush();
      continue;
    }
    auto type = dyn_cast<MemRefType>(copy.getTarget().getType());
    CopyInfo info = getCopyInfo(copy);
    if (!batch || !type || !type.hasStaticShape() ||
        !isIndependent(info, current))
      flush();
    current.push_back(info);
    if (!batch || !type || !type.hasStaticShape())
      flush();
  }
  flush();
  return groups;
}

/// Whether `op`, found between two loops, can move above the first: a pure
/// op without regions, or an allocation (which only creates a buffer the
/// first loop cannot use).
bool isMovableBetween(Operation *op) {
  return (isPure(op) && op->getNumRegions() == 0) || isa<memref::AllocOp>(op);
}

/// Moves `between` (isMovableBetween ops after `first` in its block) above
/// `first`: pure ops and allocations touch no buffer contents, so that is
/// legal when their operands are defined before it; fails (nothing moved)
/// otherwise.
LogicalResult hoistAbove(ArrayRef<Operation *> between, Operation *first) {
  Block *block = first->getBlock();
  bool movable = llvm::all_of(between, [&](Operation *op) {
    return llvm::all_of(op->getOperands(), [&](Value v) {
      Operation *def = v.getDefiningOp();
      return !def || def->getBlock() != block || def->isBeforeInBlock(first) ||
             llvm::is_contained(between, def);
    });
  });
  if (!movable)
    return failure();
  for (Operation *op : between)
    op->moveBefore(first);
  return success();
}

/// The next loop after `op` past the ops fusion may move above it, if any.
scf::ParallelOp getNextLoop(Operation *op) {
  Operation *next = op->getNextNode();
  while (next && !isa<scf::ParallelOp>(next) && isMovableBetween(next))
    next = next->getNextNode();
  return dyn_cast_or_null<scf::ParallelOp>(next);
}

/// Whether `second`, which could fuse into `first` although they share no
/// buffer, should rather start a kernel with the loop after it, which it
/// shares a buffer with and fuses with: a zero fill of an accumulator
/// between one convolution and the next belongs to the next, whose kernel
/// then writes and reads that buffer alone (--eliminate-private-kernel-
/// buffers can then keep it in registers). The number of kernels is the
/// same either way.
bool prefersNextLoop(scf::ParallelOp first, scf::ParallelOp second,
                     bool serial) {
  SmallVector<Access> a1, a2, a3;
  if (failed(collectAccesses(first, a1)) ||
      failed(collectAccesses(second, a2)) || !getSharedRoots(a1, a2).empty())
    return false;
  scf::ParallelOp third = getNextLoop(second);
  if (!third || failed(collectAccesses(third, a3)) ||
      getSharedRoots(a2, a3).empty())
    return false;
  return getFusionMap(second, third, serial).has_value();
}

/// Whether `loop` runs loops of its own (a reduction's nest).
bool hasNest(scf::ParallelOp loop) {
  return loop.getBody()
      ->walk([](LoopLikeOpInterface) { return WalkResult::interrupt(); })
      .wasInterrupted();
}

/// Whether fusing `first` and `second` would cost a workgroup tiling: one
/// of them is a reduction tileReductionInWorkgroupMemory takes and the other
/// has a nest too.
bool splitsWorkgroupTile(scf::ParallelOp first, scf::ParallelOp second) {
  return (hasNest(second) &&
          mlir::gpuopt::canTileReductionInWorkgroupMemory(first)) ||
         (hasNest(first) &&
          mlir::gpuopt::canTileReductionInWorkgroupMemory(second));
}

/// The root buffers a loop's body reads and writes, those it allocates
/// itself (its workgroup tiles) left out; `unknown` when an op touches
/// memory it does not name.
struct BufferUse {
  llvm::DenseSet<Value> read, written;
  bool unknown = false;

  explicit BufferUse(scf::ParallelOp loop) {
    Region &region = loop.getRegion();
    loop.getBody()->walk([&](Operation *op) {
      // Synchronisation of the block's own threads and copies.
      if (isa<gpu::BarrierOp, nvgpu::DeviceAsyncCreateGroupOp,
              nvgpu::DeviceAsyncWaitOp>(op) ||
          op->hasTrait<OpTrait::HasRecursiveMemoryEffects>())
        return;
      SmallVector<MemoryEffects::EffectInstance> effects;
      if (!mlir::gpuopt::getDeclaredEffects(op, effects)) {
        unknown = true;
        return;
      }
      for (const MemoryEffects::EffectInstance &effect : effects) {
        Value value = effect.getValue();
        if (!value) {
          unknown |= !isa<MemoryEffects::Allocate, MemoryEffects::Free>(
              effect.getEffect());
          continue;
        }
        Value root = mlir::gpuopt::getMemRefRoot(value);
        if (region.isAncestor(root.getParentRegion()))
          continue;
        if (isa<MemoryEffects::Write>(effect.getEffect()))
          written.insert(root);
        else if (isa<MemoryEffects::Read>(effect.getEffect()))
          read.insert(root);
      }
    });
  }
};

/// Whether two workgroup-tiled loops may run as one launch in any order of
/// their blocks: neither writes a buffer the other reads or writes.
bool areIndependentBlockLoops(scf::ParallelOp a, scf::ParallelOp b) {
  BufferUse ua(a), ub(b);
  if (ua.unknown || ub.unknown)
    return false;
  for (Value root : ua.written)
    if (ub.read.contains(root) || ub.written.contains(root))
      return false;
  for (Value root : ub.written)
    if (ua.read.contains(root))
      return false;
  return true;
}

/// Merges adjacent independent workgroup-tiled loops of `block` (the
/// blocks of the first, then those of the second, with as many threads)
/// into one loop whose block index chooses the body: one launch, each
/// product still tiled. Their workgroup tiles are both the merged kernel's.
/// Returns the number of loops merged away.
int64_t mergeThreadBlockLoops(Block &block) {
  int64_t merged = 0;
  auto isBlockLoop = [](Operation *op) {
    auto loop = dyn_cast_or_null<scf::ParallelOp>(op);
    return loop && loop->hasAttr(mlir::gpuopt::kThreadBlockAttrName) &&
           loop.getNumLoops() == 2 && loop.getInitVals().empty();
  };
  for (auto it = block.begin(); it != block.end(); ++it) {
    if (!isBlockLoop(&*it))
      continue;
    auto first = cast<scf::ParallelOp>(&*it);
    while (true) {
      SmallVector<Operation *> between;
      Operation *next = first->getNextNode();
      while (next && !isa<scf::ParallelOp>(next) && isMovableBetween(next)) {
        between.push_back(next);
        next = next->getNextNode();
      }
      if (!isBlockLoop(next))
        break;
      auto second = cast<scf::ParallelOp>(next);
      FailureOr<LoopBounds> b1 = getLoopBounds(first),
                            b2 = getLoopBounds(second);
      if (failed(b1) || failed(b2) || b1->lower != SmallVector<int64_t>{0, 0} ||
          b2->lower != SmallVector<int64_t>{0, 0} ||
          b1->step != SmallVector<int64_t>{1, 1} ||
          b2->step != SmallVector<int64_t>{1, 1} ||
          b1->count[1] != b2->count[1] ||
          !areIndependentBlockLoops(first, second))
        break;
      if (failed(hoistAbove(between, first)))
        break;
      // (blk, tid) over blocks0 + blocks1: blk < blocks0 runs the first
      // body, the others the second's with blk - blocks0. The branch is
      // uniform over a block, so the barriers inside it are met by all of
      // its threads.
      Location loc = first.getLoc();
      OpBuilder b(first);
      auto cst = [&](int64_t v) -> Value {
        return arith::ConstantIndexOp::create(b, loc, v);
      };
      Value c0 = cst(0), c1 = cst(1), n0 = cst(b1->count[0]);
      auto loop = scf::ParallelOp::create(
          b, loc, ValueRange{c0, c0},
          ValueRange{cst(b1->count[0] + b2->count[0]), cst(b1->count[1])},
          ValueRange{c1, c1});
      loop->setAttr(mlir::gpuopt::kThreadBlockAttrName,
                    first->getAttr(mlir::gpuopt::kThreadBlockAttrName));
      OpBuilder lb(loop.getBody()->getTerminator());
      Value blk = loop.getInductionVars()[0], tid = loop.getInductionVars()[1];
      // The workgroup tiles stay direct children of the loop (the kernel's
      // attributions).
      for (scf::ParallelOp part : {first, second})
        for (Operation &op :
             llvm::make_early_inc_range(part.getBody()->without_terminator()))
          if (auto alloca = dyn_cast<memref::AllocaOp>(op))
            alloca->moveBefore(lb.getInsertionBlock(), lb.getInsertionPoint());
      Value inFirst =
          arith::CmpIOp::create(lb, loc, arith::CmpIPredicate::ult, blk, n0);
      auto branch = scf::IfOp::create(lb, loc, inFirst, /*withElse=*/true);
      auto moveBody = [&](scf::ParallelOp part, Block *into, Value partBlk) {
        Block *src = part.getBody();
        src->getArgument(0).replaceAllUsesWith(partBlk);
        src->getArgument(1).replaceAllUsesWith(tid);
        for (Operation &op :
             llvm::make_early_inc_range(src->without_terminator()))
          op.moveBefore(into->getTerminator());
      };
      moveBody(first, branch.thenBlock(), blk);
      OpBuilder eb(branch.elseBlock()->getTerminator());
      moveBody(second, branch.elseBlock(),
               arith::SubIOp::create(eb, loc, blk, n0));
      first.erase();
      second.erase();
      first = loop;
      it = Block::iterator(loop);
      ++merged;
    }
  }
  return merged;
}

struct ConvertParallelLoopsToKernelsPass
    : public mlir::gpuopt::impl::ConvertParallelLoopsToKernelsPassBase<
          ConvertParallelLoopsToKernelsPass> {
  using Base::Base;

  void runOnOperation() override;

private:
  /// Fuses adjacent loops of `block`; pure ops and allocations between two
  /// loops move above the first when their operands allow it. With `serial`,
  /// a loop whose iteration space extends the previous one's (a LayerNorm's
  /// normalisation after its row statistics) fuses too, the extra indices
  /// running sequentially in each thread.
  void fuseLoops(Block &block, bool serial);
  /// Replaces `op` by a launch of a new kernel. `count` is the linearized
  /// iteration space (1 for a sequential kernel); `emitBody` clones the work
  /// given the kernel-side mapping and the thread's linear index.
  LogicalResult
  outline(ArrayRef<Operation *> ops, func::FuncOp func, int64_t count,
          function_ref<void(OpBuilder &, IRMapping &, Value)> emitBody,
          int64_t threadsPerBlock = 0);
  /// Replaces a group of independent copies by one kernel.
  LogicalResult outlineCopies(ArrayRef<memref::CopyOp> copies,
                              func::FuncOp func);
  /// Clones the definition of `v` into the kernel (recursively), or maps it to
  /// a new kernel argument when it is a root buffer.
  LogicalResult capture(Value v, Operation *user, OpBuilder &kb, IRMapping &map,
                        SmallVectorImpl<Value> &args);

  gpu::GPUModuleOp kernels;
  unsigned kernelIndex = 0;
};

void ConvertParallelLoopsToKernelsPass::fuseLoops(Block &block, bool serial) {
  for (auto it = block.begin(); it != block.end(); ++it) {
    auto first = dyn_cast<scf::ParallelOp>(&*it);
    if (!first)
      continue;
    while (true) {
      Operation *next = first->getNextNode();
      SmallVector<Operation *> between;
      while (next && !isa<scf::ParallelOp>(next) && isMovableBetween(next)) {
        between.push_back(next);
        next = next->getNextNode();
      }
      auto second = dyn_cast_or_null<scf::ParallelOp>(next);
      if (!second)
        break;
      std::optional<SmallVector<unsigned>> map =
          getFusionMap(first, second, serial);
      std::optional<NestFusion> nest;
      if (!map && serial)
        nest = getNestFusion(first, second);
      if (!map && !nest)
        break;
      if (map && prefersNextLoop(first, second, serial))
        break;
      // A kernel of two loop nests is no workgroup-tiled reduction: without
      // workgroup-tile-fuse-nests a loop the workgroup tiles take (a
      // convolution, a linear layer) keeps its own kernel rather than share
      // one with another reduction (two convolutions of the same input,
      // say); loops without nests (a fill before it, an epilogue after it)
      // still fuse with it.
      if (workgroupTile && !workgroupTileFuseNests &&
          splitsWorkgroupTile(first, second))
        break;
      if (failed(hoistAbove(between, first)))
        break;
      Block *dst = first.getBody();
      Block *src = second.getBody();
      if (nest) {
        for (auto [arg, iv] : llvm::zip(src->getArguments(), nest->ivs))
          arg.replaceAllUsesWith(iv);
        for (Operation &op :
             llvm::make_early_inc_range(src->without_terminator()))
          op.moveBefore(nest->point);
        second.erase();
        ++numFused;
        continue;
      }
      Operation *terminator = dst->getTerminator();
      for (auto [i, j] : llvm::enumerate(*map))
        src->getArgument(j).replaceAllUsesWith(dst->getArgument(i));
      // The indices of `second` that `first` does not name become
      // sequential loops around its body, outermost first.
      OpBuilder b(terminator);
      FailureOr<LoopBounds> bounds = getLoopBounds(second);
      Location loc = second.getLoc();
      for (unsigned j = 0; j < src->getNumArguments(); ++j) {
        if (llvm::is_contained(*map, j))
          continue;
        auto cst = [&](int64_t v) -> Value {
          return arith::ConstantIndexOp::create(b, loc, v);
        };
        int64_t lb = bounds->lower[j], st = bounds->step[j];
        auto loop = scf::ForOp::create(
            b, loc, cst(lb), cst(lb + bounds->count[j] * st), cst(st));
        src->getArgument(j).replaceAllUsesWith(loop.getInductionVar());
        terminator = loop.getBody()->getTerminator();
        b.setInsertionPoint(terminator);
      }
      for (Operation &op :
           llvm::make_early_inc_range(src->without_terminator()))
        op.moveBefore(terminator);
      second.erase();
      ++numFused;
    }
  }
}

LogicalResult
ConvertParallelLoopsToKernelsPass::capture(Value v, Operation *user,
                                           OpBuilder &kb, IRMapping &map,
                                           SmallVectorImpl<Value> &args) {
  if (map.contains(v))
    return success();
  Operation *def = v.getDefiningOp();
  if (def && isSinkable(def)) {
    for (Value operand : def->getOperands())
      if (failed(capture(operand, user, kb, map, args)))
        return failure();
    if (auto get = dyn_cast<memref::GetGlobalOp>(def)) {
      // The constant lives in the kernel module: copy its global there once.
      if (!SymbolTable::lookupSymbolIn(kernels, get.getNameAttr())) {
        Operation *global =
            SymbolTable::lookupNearestSymbolFrom(def, get.getNameAttr());
        if (!global)
          return def->emitOpError("references an unknown global");
        OpBuilder mb = OpBuilder::atBlockBegin(kernels.getBody());
        mb.clone(*global);
      }
    }
    kb.clone(*def, map);
    return success();
  }
  auto type = dyn_cast<MemRefType>(v.getType());
  if (!type)
    return user->emitOpError("uses a value computed on the host that cannot "
                             "be passed to a kernel: ")
           << v.getType();
  if (!type.hasStaticShape() || !type.getLayout().isIdentity())
    return user->emitOpError("needs a buffer of static shape and identity "
                             "layout as kernel argument, got ")
           << type;
  Block *entry = &kb.getInsertionBlock()->getParent()->front();
  map.map(v, entry->addArgument(type, v.getLoc()));
  args.push_back(v);
  return success();
}

LogicalResult ConvertParallelLoopsToKernelsPass::outline(
    ArrayRef<Operation *> ops, func::FuncOp func, int64_t count,
    function_ref<void(OpBuilder &, IRMapping &, Value)> emitBody,
    int64_t threadsPerBlock) {
  Operation *op = ops.back();
  Location loc = op->getLoc();
  OpBuilder mb = OpBuilder::atBlockEnd(kernels.getBody());
  std::string name =
      (func.getSymName() + "_kernel" + Twine(kernelIndex++)).str();
  auto kernel = gpu::GPUFuncOp::create(
      mb, loc, name, FunctionType::get(&getContext(), {}, {}));
  kernel->setAttr(gpu::GPUDialect::getKernelFuncAttrName(),
                  UnitAttr::get(&getContext()));
  Block &entry = kernel.getBody().front();
  OpBuilder kb = OpBuilder::atBlockBegin(&entry);

  // Everything the op reads from above becomes a clone or an argument.
  SetVector<Value> above;
  for (Operation *o : ops) {
    for (Region &region : o->getRegions())
      getUsedValuesDefinedAbove(region, above);
    for (Value operand : o->getOperands())
      above.insert(operand);
  }
  IRMapping map;
  SmallVector<Value> args;
  for (Value v : above)
    if (failed(capture(v, op, kb, map, args))) {
      kernel.erase();
      return failure();
    }
  // The arguments are known: workgroup attributions go after them.
  unsigned numArgs = entry.getNumArguments();
  kernel.setType(
      FunctionType::get(&getContext(), entry.getArgumentTypes(), {}));
  int64_t block = std::min<int64_t>(blockSize, llvm::alignTo(count, 32));
  if (count == 1)
    block = 1;
  if (threadsPerBlock)
    block = threadsPerBlock;
  // Every launch of the kernel has this block (deduplication compares the
  // attribute too): the NVVM lowering makes it the PTX `.maxntid`, so that
  // ptxas keeps the registers within what such a block may have (65536 per
  // block) and a launch never fails for lack of them.
  kernel.setKnownBlockSizeAttr(DenseI32ArrayAttr::get(
      &getContext(), {static_cast<int32_t>(block), 1, 1}));
  Value gid;
  if (threadsPerBlock) {
    // Whole blocks: every thread runs (and reaches every barrier).
    emitBody(kb, map, Value());
  } else if (count == 1) {
    gid = arith::ConstantIndexOp::create(kb, loc, 0);
    emitBody(kb, map, gid);
  } else {
    Value bid = gpu::BlockIdOp::create(kb, loc, gpu::Dimension::x);
    Value tid = gpu::ThreadIdOp::create(kb, loc, gpu::Dimension::x);
    Value bs = arith::ConstantIndexOp::create(kb, loc, block);
    gid = arith::AddIOp::create(kb, loc,
                                arith::MulIOp::create(kb, loc, bid, bs), tid);
    Value inRange =
        arith::CmpIOp::create(kb, loc, arith::CmpIPredicate::ult, gid,
                              arith::ConstantIndexOp::create(kb, loc, count));
    auto guard = scf::IfOp::create(kb, loc, inRange, /*withElse=*/false);
    OpBuilder tb = guard.getThenBodyBuilder();
    emitBody(tb, map, gid);
  }
  gpu::ReturnOp::create(kb, loc);
  kernel.setType(FunctionType::get(
      &getContext(), TypeRange(entry.getArgumentTypes()).take_front(numArgs),
      {}));

  OpBuilder hb(op);
  auto cst = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(hb, loc, v);
  };
  Value one = cst(1);
  gpu::KernelDim3 grid{cst((count + block - 1) / block), one, one};
  gpu::KernelDim3 threads{cst(block), one, one};
  gpu::LaunchFuncOp::create(hb, loc, kernel, grid, threads, Value(), args);
  for (Operation *o : ops)
    o->erase();
  ++numKernels;
  return success();
}

/// Delinearizes `gid` into indices of the iteration space `count` (innermost
/// fastest), scaled by `step` and offset by `lower`.
SmallVector<Value> delinearize(OpBuilder &b, Location loc, Value gid,
                               ArrayRef<int64_t> lower, ArrayRef<int64_t> count,
                               ArrayRef<int64_t> step) {
  SmallVector<Value> ivs(count.size());
  Value rest = gid;
  for (int64_t d = count.size() - 1; d >= 0; --d) {
    Value n = arith::ConstantIndexOp::create(b, loc, count[d]);
    Value i = d == 0 ? rest : arith::RemUIOp::create(b, loc, rest, n);
    if (d > 0)
      rest = arith::DivUIOp::create(b, loc, rest, n);
    if (step[d] != 1)
      i = arith::MulIOp::create(
          b, loc, i, arith::ConstantIndexOp::create(b, loc, step[d]));
    if (lower[d] != 0)
      i = arith::AddIOp::create(
          b, loc, i, arith::ConstantIndexOp::create(b, loc, lower[d]));
    ivs[d] = i;
  }
  return ivs;
}

LogicalResult ConvertParallelLoopsToKernelsPass::outlineCopies(
    ArrayRef<memref::CopyOp> copies, func::FuncOp func) {
  // Each copy covers a range of the linear thread index; a balanced tree of
  // comparisons finds a thread's copy.
  SmallVector<int64_t> start{0};
  for (memref::CopyOp copy : copies) {
    auto type = dyn_cast<MemRefType>(copy.getTarget().getType());
    if (!type || !type.hasStaticShape())
      return copy.emitOpError("needs a static shape to become a kernel");
    start.push_back(start.back() + type.getNumElements());
  }
  SmallVector<Operation *> ops(copies.begin(), copies.end());
  if (start.back() == 0) {
    for (Operation *op : ops)
      op->erase();
    return success();
  }
  Location loc = ops.back()->getLoc();
  auto emitBody = [&](OpBuilder &b, IRMapping &map, Value gid) {
    std::function<void(OpBuilder &, size_t, size_t)> emit = [&](OpBuilder &b2,
                                                                size_t lo,
                                                                size_t hi) {
      if (hi - lo == 1) {
        memref::CopyOp copy = copies[lo];
        auto type = cast<MemRefType>(copy.getTarget().getType());
        Value local = gid;
        if (start[lo] != 0)
          local = arith::SubIOp::create(
              b2, loc, gid, arith::ConstantIndexOp::create(b2, loc, start[lo]));
        SmallVector<int64_t> zeros(type.getRank(), 0), ones(type.getRank(), 1);
        SmallVector<Value> ivs =
            delinearize(b2, loc, local, zeros, type.getShape(), ones);
        Value v =
            memref::LoadOp::create(b2, loc, map.lookup(copy.getSource()), ivs);
        memref::StoreOp::create(b2, loc, v, map.lookup(copy.getTarget()), ivs);
        return;
      }
      size_t mid = (lo + hi) / 2;
      Value cond = arith::CmpIOp::create(
          b2, loc, arith::CmpIPredicate::ult, gid,
          arith::ConstantIndexOp::create(b2, loc, start[mid]));
      auto branch = scf::IfOp::create(b2, loc, cond, /*withElse=*/true);
      OpBuilder tb = branch.getThenBodyBuilder();
      emit(tb, lo, mid);
      OpBuilder eb = branch.getElseBodyBuilder();
      emit(eb, mid, hi);
    };
    emit(b, 0, copies.size());
  };
  if (copies.size() > 1)
    numBatchedCopies += copies.size();
  return outline(ops, func, start.back(), emitBody);
}

void ConvertParallelLoopsToKernelsPass::runOnOperation() {
  ModuleOp module = getOperation();
  if (blockSize < 1 || blockSize > 1024) {
    module.emitError("block-size must be in [1, 1024], got ")
        << static_cast<int64_t>(blockSize);
    return signalPassFailure();
  }
  if (rowLanes != 0 &&
      (rowLanes < 0 || rowLanes > 32 || !llvm::isPowerOf2_64(rowLanes))) {
    module.emitError("row-lanes must be 0 (by the layout) or a power of two "
                     "up to 32, got ")
        << static_cast<int64_t>(rowLanes);
    return signalPassFailure();
  }
  if (registerTile < 1) {
    module.emitError("register-tile must be at least 1, got ")
        << static_cast<int64_t>(registerTile);
    return signalPassFailure();
  }
  if (workgroupTileMinBlocks < 1) {
    module.emitError("workgroup-tile-min-blocks must be at least 1, got ")
        << static_cast<int64_t>(workgroupTileMinBlocks);
    return signalPassFailure();
  }
  if (workgroupTileStages < 2) {
    module.emitError("workgroup-tile-stages must be at least 2, got ")
        << static_cast<int64_t>(workgroupTileStages);
    return signalPassFailure();
  }
  if (workgroupTileSplitK < 1 ||
      !llvm::isPowerOf2_64(static_cast<uint64_t>(workgroupTileSplitK))) {
    module.emitError("workgroup-tile-split-k must be a power of two (1: no "
                     "split), got ")
        << static_cast<int64_t>(workgroupTileSplitK);
    return signalPassFailure();
  }
  if (workgroupTileMaxThreadOutputs < 4) {
    module.emitError("workgroup-tile-max-thread-outputs must be at least 4, "
                     "got ")
        << static_cast<int64_t>(workgroupTileMaxThreadOutputs);
    return signalPassFailure();
  }
  SmallVector<func::FuncOp> funcs;
  for (auto func : module.getOps<func::FuncOp>())
    if (!func.isExternal())
      funcs.push_back(func);
  if (funcs.empty())
    return;

  if (SymbolTable::lookupSymbolIn(module, moduleName)) {
    module.emitError("module-name '") << moduleName << "' is already taken";
    return signalPassFailure();
  }
  OpBuilder mb = OpBuilder::atBlockEnd(module.getBody());
  kernels = gpu::GPUModuleOp::create(mb, module.getLoc(), moduleName);
  module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                  UnitAttr::get(&getContext()));

  for (func::FuncOp func : funcs) {
    if (!func.getBody().hasOneBlock()) {
      func.emitOpError("must have a single block to be outlined into "
                       "kernels");
      return signalPassFailure();
    }
    Block &body = func.getBody().front();
    if (elideCopiesOpt)
      elideCopies(body);
    if (fuse) {
      fuseLoops(body, /*serial=*/false);
      fuseLoops(body, /*serial=*/true);
    }
    mlir::gpuopt::WorkgroupTileOptions tileOptions;
    tileOptions.minBlocks = workgroupTileMinBlocks;
    tileOptions.tensorCores = workgroupTileTensorCores;
    tileOptions.prefetch = workgroupTilePrefetch;
    tileOptions.doubleBuffer = workgroupTileDoubleBuffer;
    tileOptions.vectorLoads = workgroupTileVectorLoads;
    tileOptions.asyncCopy = workgroupTileAsyncCopy;
    tileOptions.stages = workgroupTileStages;
    tileOptions.maxThreadOutputs = workgroupTileMaxThreadOutputs;
    tileOptions.maxSplits = workgroupTileSplitK;
    // Warps must not straddle blocks for lanes to share a row. A loop that
    // is not a row kernel may be a reduction to tile in registers.
    for (auto loop :
         llvm::make_early_inc_range(body.getOps<scf::ParallelOp>())) {
      if (warpRows && blockSize % 32 == 0 &&
          succeeded(mlir::gpuopt::mapRowReductionsToWarps(loop, rowLanes)))
        ++numWarpRows;
      else if (workgroupTile &&
               succeeded(mlir::gpuopt::tileReductionInWorkgroupMemory(
                   loop, tileOptions)))
        ++numWorkgroupTiled;
      else if (succeeded(
                   mlir::gpuopt::tileReductionInRegisters(loop, registerTile)))
        ++numRegisterTiled;
    }
    // The tiled loops kept apart (workgroup-tile-fuse-nests=false) share
    // launches where they are independent neighbours.
    if (workgroupTile && !workgroupTileFuseNests)
      numMergedBlockLoops += mergeThreadBlockLoops(body);
    SmallVector<SmallVector<memref::CopyOp>> groups =
        groupCopies(body, batchCopies);
    llvm::DenseMap<Operation *, SmallVector<memref::CopyOp> *> groupOf;
    for (SmallVector<memref::CopyOp> &g : groups)
      for (memref::CopyOp c : g)
        groupOf[c] = &g;
    for (Operation &opRef : llvm::make_early_inc_range(body)) {
      Operation *op = &opRef;
      Location loc = op->getLoc();
      LogicalResult result = success();
      if (auto loop = dyn_cast<scf::ParallelOp>(op)) {
        FailureOr<LoopBounds> b = getLoopBounds(loop);
        if (failed(b) || !loop.getInitVals().empty()) {
          loop.emitOpError("needs constant bounds, positive steps and no "
                           "reductions to become a kernel");
          return signalPassFailure();
        }
        int64_t total = 1;
        for (int64_t c : b->count)
          total *= c;
        if (total == 0) {
          loop.erase();
          continue;
        }
        // A workgroup-tiled loop: (block..., thread), a block per block.
        bool threadBlock = loop->hasAttr(mlir::gpuopt::kThreadBlockAttrName);
        auto emitLoop = [&](OpBuilder &b2, IRMapping &map, Value gid) {
          SmallVector<Value> ivs;
          if (threadBlock) {
            auto outer = [](ArrayRef<int64_t> v) { return v.drop_back(); };
            ivs = delinearize(
                b2, loc, gpu::BlockIdOp::create(b2, loc, gpu::Dimension::x),
                outer(b->lower), outer(b->count), outer(b->step));
            ivs.push_back(gpu::ThreadIdOp::create(b2, loc, gpu::Dimension::x));
          } else {
            ivs = delinearize(b2, loc, gid, b->lower, b->count, b->step);
          }
          map.map(loop.getInductionVars(), ivs);
          auto kernel =
              b2.getBlock()->getParent()->getParentOfType<gpu::GPUFuncOp>();
          for (Operation &inner : loop.getBody()->without_terminator()) {
            auto alloca = dyn_cast<memref::AllocaOp>(inner);
            if (threadBlock && alloca &&
                gpu::GPUDialect::hasWorkgroupMemoryAddressSpace(
                    alloca.getType())) {
              map.map(alloca.getResult(),
                      kernel.addWorkgroupAttribution(alloca.getType(), loc));
              // Its alignment (vector reads rely on it) on the shared
              // array the NVVM lowering makes of it.
              if (std::optional<uint64_t> align = alloca.getAlignment())
                kernel.setWorkgroupAttributionAttr(
                    kernel.getNumWorkgroupAttributions() - 1,
                    LLVM::LLVMDialect::getAlignAttrName(),
                    b2.getI64IntegerAttr(*align));
              continue;
            }
            b2.clone(inner, map);
          }
        };
        result = outline({op}, func, total, emitLoop,
                         threadBlock ? b->count.back() : 0);
      } else if (auto copy = dyn_cast<memref::CopyOp>(op)) {
        // A group is outlined at its last copy, which all its views dominate.
        auto group = groupOf.find(copy);
        if (group->second->back() != copy)
          continue;
        result = outlineCopies(*group->second, func);
      } else if (isHostOp(op)) {
        continue;
      } else if (auto call = dyn_cast<func::CallOp>(op);
                 call && mlir::gpuopt::getKernelCallRoutine(call)) {
        // A library routine (--convert-seg-to-cuda-library): the host
        // calls it (a Library step of the CUDA plan).
        continue;
      } else {
        if (op->getNumResults() != 0) {
          op->emitOpError("has results and side effects: it can run neither "
                          "on the host nor in a kernel");
          return signalPassFailure();
        }
        // Work that is not a parallel loop runs in a single thread.
        result =
            outline({op}, func, 1, [&](OpBuilder &b2, IRMapping &map, Value) {
              b2.clone(*op, map);
            });
      }
      if (failed(result))
        return signalPassFailure();
    }
  }
  if (kernels.getBody()->empty())
    kernels.erase();
}

} // namespace
