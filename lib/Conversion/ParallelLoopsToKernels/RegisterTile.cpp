//===- RegisterTile.cpp - several outputs of a reduction per thread -------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// The register tiling of --convert-parallel-loops-to-kernels: T iterations
// of a parallel loop over a reduction run as one, their bodies interleaved
// op by op (unroll and jam of the parallel index), so that the operand they
// share is loaded once per reduction step for T multiply-adds.
//
// Interleaving is legal because the iterations of an scf.parallel are
// independent: any interleaving of their ops is an execution the loop
// allows. Sharing a load among them is legal when nothing in the loop
// writes its buffer.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Conversion/ParallelLoopsToKernels/RegisterTile.h"
#include "LoopBounds.h"
#include "MemRefRoot.h"
#include "WrittenBuffers.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

using namespace mlir;
using mlir::gpuopt::WrittenBuffers;

namespace {

/// Which values in the body of `loop` depend on its index `iv`
/// (conservatively: a value whose dependence is not plain data flow through
/// region-free ops and the bounds of `scf.for` loops is taken to depend).
class IndexDependence {
public:
  IndexDependence(scf::ParallelOp loop, Value iv) : loop(loop), iv(iv) {}

  bool dependsOn(Value v) {
    if (v == iv)
      return true;
    if (auto it = memo.find(v); it != memo.end())
      return it->second;
    bool result = compute(v);
    memo[v] = result;
    return result;
  }

  bool dependsOnAny(ValueRange values) {
    return llvm::any_of(values, [&](Value v) { return dependsOn(v); });
  }

private:
  bool compute(Value v) {
    Operation *def = v.getDefiningOp();
    Operation *owner =
        def ? def : cast<BlockArgument>(v).getOwner()->getParentOp();
    if (!owner || owner == loop.getOperation() ||
        !loop->isProperAncestor(owner))
      return false; // defined above the loop, or another of its indices
    if (!def) {
      auto forOp = dyn_cast<scf::ForOp>(owner);
      if (!forOp || !forOp.getInitArgs().empty())
        return true;
      return dependsOnAny(
          {forOp.getLowerBound(), forOp.getUpperBound(), forOp.getStep()});
    }
    if (def->getNumRegions() != 0)
      return true;
    return dependsOnAny(def->getOperands());
  }

  scf::ParallelOp loop;
  Value iv;
  llvm::DenseMap<Value, bool> memo;
};

/// Whether the body of `loop` accumulates, in a nest of `scf.for` loops
/// whose bounds do not depend on index `dim`, into an element (a load and a
/// store at the same indices that the innermost loop does not change) while
/// loading one operand whose indices do not depend on `dim` from a buffer
/// the loop does not write, and one whose indices do.
bool sharesAnOperandAlong(scf::ParallelOp loop, unsigned dim,
                          const WrittenBuffers &written) {
  IndexDependence dep(loop, loop.getInductionVars()[dim]);
  bool found = false;
  loop.getBody()->walk([&](memref::StoreOp store) {
    auto inner = dyn_cast<scf::ForOp>(store->getParentOp());
    if (found || !inner)
      return;
    // The loops around the accumulation run alike for every value of `dim`.
    for (Operation *op = inner; op != loop; op = op->getParentOp()) {
      auto forOp = dyn_cast<scf::ForOp>(op);
      if (forOp && dep.dependsOnAny({forOp.getLowerBound(),
                                     forOp.getUpperBound(), forOp.getStep()}))
        return;
    }
    IndexDependence innerDep(loop, inner.getInductionVar());
    if (innerDep.dependsOnAny(store.getIndices()))
      return;
    bool accumulates = llvm::any_of(
        inner.getBody()->getOps<memref::LoadOp>(), [&](memref::LoadOp load) {
          return load.getMemRef() == store.getMemRef() &&
                 llvm::equal(load.getIndices(), store.getIndices());
        });
    if (!accumulates)
      return;
    bool shared = false, varying = false;
    inner.getBody()->walk([&](memref::LoadOp load) {
      if (dep.dependsOnAny(load.getIndices()))
        varying = true;
      else if (!dep.dependsOn(load.getMemRef()) &&
               !written.mayWrite(load.getMemRef()))
        shared = true;
    });
    found = shared && varying;
  });
  return found;
}

/// Emits the ops of `src` once for each mapping of `maps` (one per tiled
/// iteration), interleaved op by op: an `scf.for` whose operands all
/// iterations share becomes one loop holding the interleaved bodies; a
/// region-free op whose operands they share, pure or a load from a buffer
/// the loop does not write, is emitted once.
void emitInterleaved(Block &src, OpBuilder &b, MutableArrayRef<IRMapping> maps,
                     const WrittenBuffers &written) {
  auto shared = [&](Operation &op) {
    return llvm::all_of(op.getOperands(), [&](Value v) {
      Value first = maps.front().lookupOrDefault(v);
      return llvm::all_of(
          maps, [&](IRMapping &m) { return m.lookupOrDefault(v) == first; });
    });
  };
  for (Operation &op : src.without_terminator()) {
    auto forOp = dyn_cast<scf::ForOp>(op);
    if (forOp && forOp.getInitArgs().empty() && shared(op)) {
      IRMapping &m = maps.front();
      auto loop = scf::ForOp::create(b, forOp.getLoc(),
                                     m.lookupOrDefault(forOp.getLowerBound()),
                                     m.lookupOrDefault(forOp.getUpperBound()),
                                     m.lookupOrDefault(forOp.getStep()));
      for (IRMapping &each : maps)
        each.map(forOp.getInductionVar(), loop.getInductionVar());
      OpBuilder inner = OpBuilder::atBlockTerminator(loop.getBody());
      emitInterleaved(*forOp.getBody(), inner, maps, written);
      continue;
    }
    auto load = dyn_cast<memref::LoadOp>(op);
    bool once = op.getNumRegions() == 0 && shared(op) &&
                (isPure(&op) || (load && !written.mayWrite(load.getMemRef())));
    if (once) {
      Operation *clone = b.clone(op, maps.front());
      for (IRMapping &each : maps.drop_front())
        each.map(op.getResults(), clone->getResults());
      continue;
    }
    for (IRMapping &each : maps)
      b.clone(op, each);
  }
}

} // namespace

FailureOr<scf::ParallelOp>
mlir::gpuopt::tileReductionInRegisters(scf::ParallelOp loop, int64_t tile) {
  if (tile < 2 || !loop.getInitVals().empty())
    return failure();
  FailureOr<LoopBounds> bounds = getLoopBounds(loop);
  if (failed(bounds))
    return failure();
  const SmallVector<int64_t> &lower = bounds->lower, &count = bounds->count,
                             &step = bounds->step;

  // The index to tile: the outermost that shares an operand, so the
  // innermost index longer than 1 only when no other does.
  WrittenBuffers written(loop);
  std::optional<unsigned> dim;
  for (unsigned d = 0; d < count.size() && !dim; ++d)
    if (count[d] > 1 && sharesAnOperandAlong(loop, d, written))
      dim = d;
  if (!dim)
    return failure();
  unsigned k = *dim;
  int64_t t = std::min(tile, count[k]);
  int64_t whole = count[k] / t, rest = count[k] % t;

  Location loc = loop.getLoc();
  OpBuilder b(loop);
  auto cst = [&](OpBuilder &builder, int64_t v) -> Value {
    return arith::ConstantIndexOp::create(builder, loc, v);
  };
  SmallVector<Value> lbs = llvm::to_vector(loop.getLowerBound());
  SmallVector<Value> ubs = llvm::to_vector(loop.getUpperBound());
  SmallVector<Value> steps = llvm::to_vector(loop.getStep());
  lbs[k] = cst(b, 0);
  ubs[k] = cst(b, whole + (rest ? 1 : 0));
  steps[k] = cst(b, 1);
  auto tiled = scf::ParallelOp::create(b, loc, lbs, ubs, steps);
  b.setInsertionPoint(tiled.getBody()->getTerminator());

  IRMapping common;
  for (auto [oldIv, newIv] :
       llvm::zip(loop.getInductionVars(), tiled.getInductionVars()))
    common.map(oldIv, newIv);
  Value oldIv = loop.getInductionVars()[k];
  // The original index of position `i` of `dim`'s range.
  auto original = [&](OpBuilder &builder, Value i) -> Value {
    if (step[k] != 1)
      i = arith::MulIOp::create(builder, loc, i, cst(builder, step[k]));
    if (lower[k] != 0)
      i = arith::AddIOp::create(builder, loc, i, cst(builder, lower[k]));
    return i;
  };
  Value first =
      arith::MulIOp::create(b, loc, tiled.getInductionVars()[k], cst(b, t));

  auto emitTile = [&](OpBuilder &builder) {
    SmallVector<IRMapping> maps(t, common);
    for (int64_t j = 0; j < t; ++j) {
      Value i =
          j == 0 ? first
                 : arith::AddIOp::create(builder, loc, first, cst(builder, j))
                       .getResult();
      maps[j].map(oldIv, original(builder, i));
    }
    emitInterleaved(*loop.getBody(), builder, maps, written);
  };
  if (rest == 0) {
    emitTile(b);
  } else {
    // The last iteration holds `rest` values: the original body for each.
    Value full =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                              tiled.getInductionVars()[k], cst(b, whole));
    auto branch = scf::IfOp::create(b, loc, full, /*withElse=*/true);
    OpBuilder tb = branch.getThenBodyBuilder();
    emitTile(tb);
    OpBuilder eb = branch.getElseBodyBuilder();
    auto each =
        scf::ForOp::create(eb, loc, first, cst(eb, count[k]), cst(eb, 1));
    OpBuilder fb = OpBuilder::atBlockTerminator(each.getBody());
    IRMapping map = common;
    map.map(oldIv, original(fb, each.getInductionVar()));
    for (Operation &op : loop.getBody()->without_terminator())
      fb.clone(op, map);
  }
  loop.erase();
  return tiled;
}
