//===- WarpRows.cpp - row reductions mapped to warp lanes -----------------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// The `warp-rows` mapping of --convert-parallel-loops-to-kernels: after row
// fusion a LayerNorm is one scf.parallel over its rows whose body runs the
// row's loops (sum, sum of squared deviations, normalisation) in sequence.
// Here several lanes of a warp share a row: each strides the row's loops,
// keeps its partial sums in registers, and a gpu.shuffle xor butterfly gives
// every lane the row's sums (bitwise the same in every lane: each step adds
// the same two values in both lanes of a pair).
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Conversion/ParallelLoopsToKernels/WarpRows.h"
#include "MemRefRoot.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;

namespace {

constexpr int64_t kWarpSize = 32;

/// A load or store of the row loop's body; `loop` is the row loop it is in
/// (null at the row level).
struct RowAccess {
  Operation *op;
  Value memref;
  SmallVector<Value> indices;
  bool write;
  scf::ForOp loop;
};

/// A sum into a per-row element in one row loop: the element is loaded,
/// `add` adds the iteration's term, the result is stored back.
struct Reduction {
  Value root;
  memref::LoadOp load;
  arith::AddFOp add;
  memref::StoreOp store;
};

/// What the mapping needs to know about the row loop's body.
struct RowPlan {
  /// Buffers holding one element per row (statistics), in order of first
  /// access, with the memref and indices they are accessed through.
  llvm::SetVector<Value> slots;
  llvm::DenseMap<Value, RowAccess> slotAccess;
  /// The sums of each row loop.
  llvm::DenseMap<Operation *, SmallVector<Reduction>> reductions;
  /// The slots nothing outside the loop reads.
  llvm::DenseSet<Value> privateSlots;
  /// Lanes per row chosen from the layout (0: none was found).
  int64_t layoutLanes = 0;
};

bool hasConstantBounds(scf::ForOp f) {
  std::optional<int64_t> st = getConstantIntValue(f.getStep());
  return getConstantIntValue(f.getLowerBound()) &&
         getConstantIntValue(f.getUpperBound()) && st && *st > 0;
}

/// Whether only `loop` (and deallocations) can see `root`'s contents: an
/// allocation whose uses, through views, are all inside `loop`.
bool isPrivateTo(Value root, scf::ParallelOp loop) {
  if (!root.getDefiningOp<memref::AllocOp>())
    return false;
  SmallVector<Value> work{root};
  while (!work.empty()) {
    Value v = work.pop_back_val();
    for (Operation *user : v.getUsers()) {
      if (loop->isAncestor(user) || isa<memref::DeallocOp>(user))
        continue;
      if (isa<ViewLikeOpInterface, memref::CastOp>(user) &&
          user->getNumResults() == 1) {
        work.push_back(user->getResult(0));
        continue;
      }
      return false;
    }
  }
  return true;
}

FailureOr<RowPlan> analyze(scf::ParallelOp loop) {
  if (!loop.getInitVals().empty())
    return failure();
  Block *body = loop.getBody();
  SmallVector<RowAccess> accesses;
  SmallVector<scf::ForOp> rowLoops;
  auto record = [&](Operation *op, scf::ForOp f) {
    if (auto load = dyn_cast<memref::LoadOp>(op))
      accesses.push_back(
          {op, load.getMemRef(), llvm::to_vector(load.getIndices()), false, f});
    else if (auto store = dyn_cast<memref::StoreOp>(op))
      accesses.push_back({op, store.getMemRef(),
                          llvm::to_vector(store.getIndices()), true, f});
    else
      return isPure(op) && op->getNumRegions() == 0;
    return true;
  };
  for (Operation &op : body->without_terminator()) {
    auto f = dyn_cast<scf::ForOp>(&op);
    if (!f) {
      if (!record(&op, nullptr))
        return failure();
      continue;
    }
    if (!f.getInitArgs().empty() || !hasConstantBounds(f))
      return failure();
    rowLoops.push_back(f);
    for (Operation &inner : f.getBody()->without_terminator())
      if (!record(&inner, f))
        return failure();
  }
  auto insideRowLoop = [&](Value v) {
    return llvm::any_of(rowLoops, [&](scf::ForOp f) {
      return f.getRegion().isAncestor(v.getParentRegion());
    });
  };
  auto namesRow = [&](const RowAccess &a) {
    return llvm::all_of(loop.getInductionVars(), [&](Value iv) {
      return llvm::is_contained(a.indices, iv);
    });
  };

  // Buffers the body writes, with all of their accesses.
  llvm::SetVector<Value> written;
  llvm::DenseMap<Value, SmallVector<const RowAccess *>> byRoot;
  for (const RowAccess &a : accesses) {
    Value root = gpuopt::getMemRefRoot(a.memref);
    byRoot[root].push_back(&a);
    if (a.write)
      written.insert(root);
  }
  RowPlan plan;
  for (Value root : written) {
    ArrayRef<const RowAccess *> uses = byRoot[root];
    const RowAccess &first = *uses.front();
    // One element per thread: the same view and indices everywhere, which
    // name the row.
    if (!namesRow(first) || llvm::any_of(uses, [&](const RowAccess *a) {
          return a->memref != first.memref || a->indices != first.indices;
        }))
      return failure();
    if (llvm::none_of(first.indices, insideRowLoop)) {
      plan.slots.insert(root);
      plan.slotAccess.try_emplace(root, first);
      continue;
    }
    // One element per iteration of one row loop, owned by the lane that
    // runs the iteration.
    scf::ForOp f = first.loop;
    if (!f || !llvm::is_contained(first.indices, f.getInductionVar()) ||
        llvm::any_of(uses, [&](const RowAccess *a) { return a->loop != f; }))
      return failure();
  }

  // The slots accessed in row loops: a sum (one load, an add of it, one
  // store of the add) or reads only.
  for (scf::ForOp f : rowLoops)
    for (Value root : plan.slots) {
      SmallVector<const RowAccess *> inF;
      for (const RowAccess *a : byRoot[root])
        if (a->loop == f)
          inF.push_back(a);
      if (llvm::none_of(inF, [](const RowAccess *a) { return a->write; }))
        continue;
      if (inF.size() != 2 || inF[0]->write || !inF[1]->write)
        return failure();
      auto load = cast<memref::LoadOp>(inF[0]->op);
      auto store = cast<memref::StoreOp>(inF[1]->op);
      auto add = store.getValue().getDefiningOp<arith::AddFOp>();
      if (!add || add->getBlock() != f.getBody() ||
          !load.getResult().hasOneUse() || !add.getResult().hasOneUse() ||
          !isa<Float32Type>(add.getType()) ||
          (add.getLhs() != load.getResult() &&
           add.getRhs() != load.getResult()))
        return failure();
      plan.reductions[f].push_back({root, load, add, store});
    }

  // Every read of a slot follows a write of it in the row's program order,
  // so that its value is known in registers; a sum, then a later loop
  // writing elements of its own (the normalisation).
  llvm::DenseSet<Value> known;
  bool sawSum = false, sawMapAfterSum = false;
  for (Operation &op : body->without_terminator()) {
    auto f = dyn_cast<scf::ForOp>(&op);
    for (const RowAccess &a : accesses) {
      if (!(f ? a.loop == f : a.op == &op))
        continue;
      Value root = gpuopt::getMemRefRoot(a.memref);
      if (!plan.slots.contains(root)) {
        sawMapAfterSum |= a.write && sawSum;
        continue;
      }
      if (a.write)
        known.insert(root);
      else if (!known.contains(root))
        return failure();
    }
    if (f && plan.reductions.count(f))
      sawSum = true;
  }
  if (!sawSum || !sawMapAfterSum)
    return failure();

  // Lanes that read along the innermost dimension read neighbouring
  // elements; otherwise neighbouring rows do.
  scf::ForOp sumLoop = *llvm::find_if(
      rowLoops, [&](scf::ForOp f) { return plan.reductions.count(f); });
  for (const RowAccess &a : accesses) {
    if (a.loop != sumLoop || a.write ||
        plan.slots.contains(gpuopt::getMemRefRoot(a.memref)))
      continue;
    // The innermost index of a dimension longer than 1.
    ArrayRef<int64_t> shape = cast<MemRefType>(a.memref.getType()).getShape();
    int64_t d = shape.size() - 1;
    while (d > 0 && shape[d] == 1)
      --d;
    if (d < 0)
      continue;
    plan.layoutLanes =
        a.indices[d] == sumLoop.getInductionVar() ? kWarpSize : 4;
    break;
  }
  for (Value slot : plan.slots)
    if (isPrivateTo(slot, loop))
      plan.privateSlots.insert(slot);
  return plan;
}

} // namespace

FailureOr<scf::ParallelOp>
mlir::gpuopt::mapRowReductionsToWarps(scf::ParallelOp loop,
                                      int64_t lanesPerRow) {
  SmallVector<int64_t> lower, count, step;
  int64_t rows = 1;
  for (auto [lbV, ubV, stV] :
       llvm::zip(loop.getLowerBound(), loop.getUpperBound(), loop.getStep())) {
    std::optional<int64_t> lb = getConstantIntValue(lbV);
    std::optional<int64_t> ub = getConstantIntValue(ubV);
    std::optional<int64_t> st = getConstantIntValue(stV);
    if (!lb || !ub || !st || *st <= 0 || *ub <= *lb)
      return failure();
    lower.push_back(*lb);
    count.push_back((*ub - *lb + *st - 1) / *st);
    step.push_back(*st);
    rows *= count.back();
  }
  FailureOr<RowPlan> plan = analyze(loop);
  if (failed(plan))
    return failure();
  int64_t lanes = lanesPerRow;
  if (lanes == 0)
    lanes = plan->layoutLanes ? plan->layoutLanes : kWarpSize;
  int64_t rowsPerWarp = kWarpSize / lanes;
  int64_t warps = (rows + rowsPerWarp - 1) / rowsPerWarp;

  Location loc = loop.getLoc();
  OpBuilder b(loop);
  auto cst = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  auto par = scf::ParallelOp::create(b, loc, ValueRange{cst(0)},
                                     ValueRange{cst(warps * kWarpSize)},
                                     ValueRange{cst(1)});
  b.setInsertionPoint(par.getBody()->getTerminator());

  // Thread -> (warp, lane) -> (row, lane of the row): the rows of a warp are
  // its lanes modulo rowsPerWarp, so the butterfly's masks are the high
  // bits of the lane.
  Value gid = par.getInductionVars().front();
  Value lane = arith::RemUIOp::create(b, loc, gid, cst(kWarpSize));
  Value warp = arith::DivUIOp::create(b, loc, gid, cst(kWarpSize));
  Value rowInWarp = cst(0), rowLane = lane;
  if (rowsPerWarp > 1) {
    rowInWarp = arith::RemUIOp::create(b, loc, lane, cst(rowsPerWarp));
    rowLane = arith::DivUIOp::create(b, loc, lane, cst(rowsPerWarp));
  }
  Value row = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, warp, cst(rowsPerWarp)), rowInWarp);
  Value valid =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, row, cst(rows));
  Value leader = arith::AndIOp::create(
      b, loc, valid,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, rowLane, cst(0)));
  // A row past the end reads the last row (its loops do not run, and it
  // stores nothing), so that its lanes reach the shuffles too.
  Value clamped = arith::MinUIOp::create(b, loc, row, cst(rows - 1));
  SmallVector<Value> rowIdx{clamped};
  if (count.size() > 1)
    rowIdx = affine::AffineDelinearizeIndexOp::create(b, loc, clamped,
                                                      ValueRange{}, count)
                 ->getResults();
  IRMapping map;
  for (auto [d, iv] : llvm::enumerate(loop.getInductionVars())) {
    Value v = rowIdx[d];
    if (step[d] != 1)
      v = arith::MulIOp::create(b, loc, v, cst(step[d]));
    if (lower[d] != 0)
      v = arith::AddIOp::create(b, loc, v, cst(lower[d]));
    map.map(iv, v);
  }

  // The current value of each slot, in registers.
  llvm::DenseMap<Value, Value> known;
  auto slotOf = [&](Operation *op) -> Value {
    Value memref;
    if (auto load = dyn_cast<memref::LoadOp>(op))
      memref = load.getMemRef();
    else if (auto store = dyn_cast<memref::StoreOp>(op))
      memref = store.getMemRef();
    Value root = memref ? gpuopt::getMemRefRoot(memref) : Value();
    return root && plan->slots.contains(root) ? root : Value();
  };
  // Clones `op` unless it accesses a slot: a store sets the slot's value, a
  // load reads it.
  auto emit = [&](OpBuilder &ob, Operation &op) {
    Value slot = slotOf(&op);
    if (!slot) {
      ob.clone(op, map);
      return;
    }
    if (auto store = dyn_cast<memref::StoreOp>(op))
      known[slot] = map.lookupOrDefault(store.getValue());
    else
      map.map(op.getResult(0), known.lookup(slot));
  };

  for (Operation &op : loop.getBody()->without_terminator()) {
    auto f = dyn_cast<scf::ForOp>(&op);
    if (!f) {
      emit(b, op);
      continue;
    }
    int64_t lb = *getConstantIntValue(f.getLowerBound());
    int64_t ub = *getConstantIntValue(f.getUpperBound());
    int64_t st = *getConstantIntValue(f.getStep());
    Value start = arith::AddIOp::create(
        b, loc, cst(lb), arith::MulIOp::create(b, loc, rowLane, cst(st)));
    Value end = arith::SelectOp::create(b, loc, valid, cst(ub), cst(lb));
    SmallVector<Reduction> sums = plan->reductions.lookup(f);
    SmallVector<Value> inits;
    for (Reduction &r : sums)
      inits.push_back(arith::ConstantOp::create(
          b, loc, b.getFloatAttr(r.add.getType(), 0.0)));
    auto strided = scf::ForOp::create(
        b, f.getLoc(), start, end, cst(st * lanes), inits,
        [&](OpBuilder &fb, Location, Value iv, ValueRange partial) {
          map.map(f.getInductionVar(), iv);
          for (auto [r, p] : llvm::zip(sums, partial))
            map.map(r.load.getResult(), p);
          for (Operation &inner : f.getBody()->without_terminator()) {
            bool isSum = llvm::any_of(sums, [&](Reduction &r) {
              return r.load.getOperation() == &inner ||
                     r.store.getOperation() == &inner;
            });
            if (!isSum)
              emit(fb, inner);
          }
          SmallVector<Value> next;
          for (Reduction &r : sums)
            next.push_back(map.lookup(r.add.getResult()));
          scf::YieldOp::create(fb, loc, next);
        });
    for (auto [r, partial] : llvm::zip(sums, strided.getResults())) {
      Value total = partial;
      for (int64_t mask = kWarpSize / 2; mask >= rowsPerWarp; mask /= 2) {
        auto other = gpu::ShuffleOp::create(b, loc, total, mask, kWarpSize,
                                            gpu::ShuffleMode::XOR);
        total = arith::AddFOp::create(b, loc, total, other.getShuffleResult(),
                                      r.add.getFastmathAttr());
      }
      known[r.root] = arith::AddFOp::create(b, loc, known.lookup(r.root), total,
                                            r.add.getFastmathAttr());
    }
  }

  // The rows' statistics, once per row, where something else may read them.
  for (Value slot : plan->slots) {
    if (plan->privateSlots.contains(slot))
      continue;
    const RowAccess &a = plan->slotAccess.find(slot)->second;
    auto ifLeader = scf::IfOp::create(b, loc, leader, /*withElse=*/false);
    OpBuilder tb = ifLeader.getThenBodyBuilder();
    SmallVector<Value> indices;
    for (Value v : a.indices)
      indices.push_back(map.lookupOrDefault(v));
    memref::StoreOp::create(tb, loc, known.lookup(slot),
                            map.lookupOrDefault(a.memref), indices);
  }
  loop.erase();
  return par;
}
