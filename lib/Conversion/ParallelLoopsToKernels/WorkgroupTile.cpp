//===- WorkgroupTile.cpp - block tiles of a reduction in workgroup memory -===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// The workgroup tiling of --convert-parallel-loops-to-kernels. A loop nest
// `acc[p] += x(pM, k) * y(pN, k)` is a matrix product of an M x K operand
// (a convolution's weights, indexed by output channel) and a K x N one (its
// input, read through the shifted and guarded indices of the remapped
// convolution, indexed by pixel). Each block computes BM x BN outputs, each
// thread RM x RN of them in registers; for every 16 steps of k the block's
// threads load the x and y tiles into workgroup memory once, then every
// thread reads its RM + RN operands per step from there (1 + RN / 2
// vector reads): RM * RN multiply-adds for RM + RN workgroup words, and
// each global element is loaded once per block instead of once per output.
//
// Legality: the iterations of an scf.parallel are independent, so a thread
// may run the parts of several (its outputs') interleaved, and the loads
// of x and y may move ahead of the multiply-adds: nothing in the loop
// writes their buffers. Each output still adds its terms one at a time in
// the nest's order, but for a split reduction (split-K): each part adds its
// terms in order from zero, and a second loop adds the parts in order.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Conversion/ParallelLoopsToKernels/WorkgroupTile.h"
#include "LoopBounds.h"
#include "WrittenBuffers.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using mlir::gpuopt::WrittenBuffers;

namespace {

constexpr int64_t kThreads = gpuopt::kWorkgroupTileThreads;
constexpr int64_t kTileK = gpuopt::kWorkgroupTileK;
/// Static workgroup memory a block may have (CUDA's limit without opting
/// in to more; the emulator's kCudaHostMaxWorkgroupBytes, whose runtime
/// header this MLIR code does not include).
constexpr int64_t kWorkgroupTileMaxBytes = 48 * 1024;

using TileShape = gpuopt::WorkgroupTileShape;

/// The matched nest: `acc[p] = acc[p] + x * y` in its innermost body.
struct Reduction {
  SmallVector<Operation *> pre, post; // the loop body around the nest
  SmallVector<Value> nestIvs;
  SmallVector<int64_t> lower, count, step; // of the nest, outermost first
  memref::LoadOp accLoad;
  memref::StoreOp accStore;
  arith::MulFOp mul;
  arith::AddFOp add;
};

/// Which of the loop's and the nest's indices a value of the innermost body
/// depends on (bit i: index i of `ivs`), if the tile can recompute it
/// anywhere in the loop: it is defined above the loop, is an index, or is
/// computed in the innermost body by region-free pure ops and loads from
/// buffers the loop does not write.
class Recomputable {
public:
  Recomputable(scf::ParallelOp loop, Block *inner, ArrayRef<Value> ivs,
               const WrittenBuffers &written)
      : loop(loop), inner(inner), ivs(ivs), written(written) {}

  std::optional<uint64_t> deps(Value v) {
    if (auto it = memo.find(v); it != memo.end())
      return it->second;
    std::optional<uint64_t> result = compute(v);
    memo[v] = result;
    return result;
  }

  /// The ops computing `v` in the innermost body, operands first.
  void collect(Value v, llvm::SetVector<Operation *> &ops) {
    Operation *def = v.getDefiningOp();
    if (!def || def->getBlock() != inner || ops.contains(def))
      return;
    for (Value operand : def->getOperands())
      collect(operand, ops);
    ops.insert(def);
  }

private:
  std::optional<uint64_t> compute(Value v) {
    for (auto [i, iv] : llvm::enumerate(ivs))
      if (v == iv)
        return uint64_t(1) << i;
    Operation *def = v.getDefiningOp();
    Operation *owner =
        def ? def : cast<BlockArgument>(v).getOwner()->getParentOp();
    if (!owner || !loop->isProperAncestor(owner))
      return 0; // defined above the loop
    if (!def || def->getBlock() != inner || def->getNumRegions() != 0)
      return std::nullopt;
    if (auto load = dyn_cast<memref::LoadOp>(def)) {
      if (written.mayWrite(load.getMemRef()))
        return std::nullopt;
    } else if (!isPure(def)) {
      return std::nullopt;
    }
    uint64_t mask = 0;
    for (Value operand : def->getOperands()) {
      std::optional<uint64_t> d = deps(operand);
      if (!d)
        return std::nullopt;
      mask |= *d;
    }
    return mask;
  }

  scf::ParallelOp loop;
  Block *inner;
  ArrayRef<Value> ivs;
  const WrittenBuffers &written;
  llvm::DenseMap<Value, std::optional<uint64_t>> memo;
};

/// The perfect nest of `scf.for` loops with constant bounds in `loop`'s
/// body and the accumulation in its innermost body, or failure.
FailureOr<Reduction> matchReduction(scf::ParallelOp loop) {
  Reduction r;
  scf::ForOp root;
  for (Operation &op : loop.getBody()->without_terminator()) {
    if (auto forOp = dyn_cast<scf::ForOp>(op); forOp && !root) {
      root = forOp;
      continue;
    }
    if (op.getNumRegions() != 0)
      return failure();
    (root ? r.post : r.pre).push_back(&op);
  }
  if (!root)
    return failure();
  // What runs after the nest must not need what ran before it: the two
  // parts of an output run apart.
  for (Operation *op : r.post)
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp();
          def && llvm::is_contained(r.pre, def))
        return failure();

  scf::ForOp cur = root;
  while (true) {
    std::optional<int64_t> lb = getConstantIntValue(cur.getLowerBound());
    std::optional<int64_t> ub = getConstantIntValue(cur.getUpperBound());
    std::optional<int64_t> st = getConstantIntValue(cur.getStep());
    if (!cur.getInitArgs().empty() || !lb || !ub || !st || *st <= 0 ||
        *ub <= *lb)
      return failure();
    r.nestIvs.push_back(cur.getInductionVar());
    r.lower.push_back(*lb);
    r.count.push_back((*ub - *lb + *st - 1) / *st);
    r.step.push_back(*st);
    auto ops = cur.getBody()->without_terminator();
    auto next = llvm::hasSingleElement(ops) ? dyn_cast<scf::ForOp>(*ops.begin())
                                            : scf::ForOp();
    if (!next)
      break;
    cur = next;
  }
  Block *inner = cur.getBody();
  for (Operation &op : inner->without_terminator()) {
    if (auto store = dyn_cast<memref::StoreOp>(op)) {
      if (r.accStore)
        return failure();
      r.accStore = store;
    }
  }
  if (!r.accStore)
    return failure();
  r.add = r.accStore.getValueToStore().getDefiningOp<arith::AddFOp>();
  if (!r.add || r.add->getBlock() != inner || !r.add->hasOneUse())
    return failure();
  for (Value operand : r.add->getOperands()) {
    if (auto load = operand.getDefiningOp<memref::LoadOp>();
        load && load.getMemRef() == r.accStore.getMemRef() &&
        llvm::equal(load.getIndices(), r.accStore.getIndices()))
      r.accLoad = load;
    else
      r.mul = operand.getDefiningOp<arith::MulFOp>();
  }
  if (!r.accLoad || !r.mul || r.mul->getBlock() != inner ||
      !r.mul->hasOneUse() || !r.accLoad->hasOneUse() ||
      r.accLoad->getBlock() != inner)
    return failure();
  return r;
}

/// Maps `ivs` (innermost fastest) to the position `flat` of their
/// iteration space, scaled and offset by their bounds.
void mapFlatIndex(OpBuilder &b, Location loc, Value flat, ArrayRef<Value> ivs,
                  ArrayRef<int64_t> lower, ArrayRef<int64_t> count,
                  ArrayRef<int64_t> step, IRMapping &map) {
  auto cst = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  Value rest = flat;
  for (int64_t d = static_cast<int64_t>(ivs.size()) - 1; d >= 0; --d) {
    Value i =
        d == 0 ? rest : arith::RemUIOp::create(b, loc, rest, cst(count[d]));
    if (d > 0)
      rest = arith::DivUIOp::create(b, loc, rest, cst(count[d]));
    if (step[d] != 1)
      i = arith::MulIOp::create(b, loc, i, cst(step[d]));
    if (lower[d] != 0)
      i = arith::AddIOp::create(b, loc, i, cst(lower[d]));
    map.map(ivs[d], i);
  }
}

/// The index-space part of one side (M or N) of the product.
struct Side {
  SmallVector<Value> ivs;
  SmallVector<int64_t> lower, count, step;
  int64_t size = 1;
  /// The bits of `ivs` in the dependence masks of Recomputable.
  uint64_t mask = 0;

  void add(Value iv, int64_t lb, int64_t n, int64_t st, uint64_t bit) {
    ivs.push_back(iv);
    lower.push_back(lb);
    count.push_back(n);
    step.push_back(st);
    size *= n;
    mask |= bit;
  }
  void map(OpBuilder &b, Location loc, Value flat, IRMapping &m) const {
    mapFlatIndex(b, loc, flat, ivs, lower, count, step, m);
  }
};

/// The value the ops just emitted into `block` (an output's part before the
/// nest) last store to its accumulator, which the nest's `accLoad` (mapped
/// by `map`) would read, if that store is the last access to the
/// accumulator's buffer in `block`; the store goes, since the epilogue
/// stores the element again and nothing reads it in between (the operands
/// come from buffers the loop does not write).
Value forwardInitialValue(Block *block, memref::LoadOp accLoad,
                          IRMapping &map) {
  Value memref = map.lookupOrDefault(accLoad.getMemRef());
  auto indices = llvm::map_range(
      accLoad.getIndices(), [&](Value v) { return map.lookupOrDefault(v); });
  for (Operation &op : llvm::reverse(*block)) {
    if (auto store = dyn_cast<memref::StoreOp>(op)) {
      if (gpuopt::getMemRefRoot(store.getMemRef()) !=
          gpuopt::getMemRefRoot(memref))
        continue;
      if (store.getMemRef() != memref ||
          !llvm::equal(store.getIndices(), indices))
        return Value();
      Value v = store.getValueToStore();
      store.erase();
      return v;
    }
    if (auto load = dyn_cast<memref::LoadOp>(op)) {
      if (gpuopt::getMemRefRoot(load.getMemRef()) ==
          gpuopt::getMemRefRoot(memref))
        return Value();
      continue;
    }
    if (!isPure(&op))
      return Value();
  }
  return Value();
}

/// Forwards the accumulator `store` (an output's value, before its part
/// after the nest) to the loads of the element that follow it in its block,
/// and erases it when a later store of the block overwrites the element
/// before anything else may read or write it.
void forwardFinalValue(memref::StoreOp store) {
  Value root = gpuopt::getMemRefRoot(store.getMemRef());
  for (Operation *op = store->getNextNode(); op;) {
    Operation *next = op->getNextNode();
    auto same = [&](auto access) {
      return access.getMemRef() == store.getMemRef() &&
             llvm::equal(access.getIndices(), store.getIndices());
    };
    if (auto load = dyn_cast<memref::LoadOp>(op)) {
      if (same(load)) {
        load.getResult().replaceAllUsesWith(store.getValueToStore());
        load.erase();
      } else if (gpuopt::getMemRefRoot(load.getMemRef()) == root) {
        return;
      }
    } else if (auto later = dyn_cast<memref::StoreOp>(op)) {
      if (same(later))
        store.erase();
      return;
    } else if (!isPure(op)) {
      return;
    }
    op = next;
  }
}

/// `v` (f32 or a vector of f32) rounded to TF32: to the nearest value with
/// 10 mantissa bits, ties away from zero (PTX cvt.rna.tf32.f32), as the
/// bits of an f32 whose low 13 bits are zero. Infinities and NaNs keep
/// their class; a value that rounds past the largest finite one becomes
/// infinite, as with cvt.rna.
Value roundToTf32(OpBuilder &b, Location loc, Value v) {
  Type bitsType = b.getI32Type();
  if (auto vec = dyn_cast<VectorType>(v.getType()))
    bitsType = VectorType::get(vec.getShape(), bitsType);
  auto splat = [&](uint32_t c) -> Value {
    auto attr = b.getI32IntegerAttr(static_cast<int32_t>(c));
    if (auto vec = dyn_cast<VectorType>(bitsType))
      return arith::ConstantOp::create(b, loc,
                                       DenseElementsAttr::get(vec, attr));
    return arith::ConstantOp::create(b, loc, attr);
  };
  Value bits = arith::BitcastOp::create(b, loc, bitsType, v);
  Value exponent = arith::AndIOp::create(b, loc, bits, splat(0x7F800000u));
  Value finite = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                       exponent, splat(0x7F800000u));
  Value rounded = arith::AndIOp::create(
      b, loc, arith::AddIOp::create(b, loc, bits, splat(0x1000u)),
      splat(0xFFFFE000u));
  Value kept = arith::SelectOp::create(b, loc, finite, rounded, bits);
  return arith::BitcastOp::create(b, loc, v.getType(), kept);
}

/// Whether `memref` is a buffer the launch plan places (256-byte aligned,
/// in global memory on the GPU): a function argument or `memref.alloc` of
/// identity layout, or a reshape of one (which keeps its first element).
bool isPlanBuffer(Value memref) {
  Value root = memref;
  while (Operation *def = root.getDefiningOp()) {
    if (auto expand = dyn_cast<memref::ExpandShapeOp>(def))
      root = expand.getSrc();
    else if (auto collapse = dyn_cast<memref::CollapseShapeOp>(def))
      root = collapse.getSrc();
    else
      break;
  }
  auto type = cast<MemRefType>(root.getType());
  if (!type.getLayout().isIdentity() || type.getMemorySpace())
    return false;
  auto arg = dyn_cast<BlockArgument>(root);
  return arg ? isa<func::FuncOp>(arg.getOwner()->getParentOp())
             : isa_and_nonnull<memref::AllocOp>(root.getDefiningOp());
}

/// What an asynchronous copy of an operand reads (cp.async, global to
/// workgroup memory without registers): the operand `v` is an f32 load of a
/// plan buffer (isPlanBuffer), or `select(cond, load, +0.0)` — a padded or
/// remapped convolution input, whose load reads a clamped, valid element —
/// copied with 0 source elements (zero fill) where `cond` is false. The
/// load's only user is the select (its value must not decide `cond`: the
/// copy does not load it).
struct AsyncSource {
  memref::LoadOp load;
  Value cond; // null: always read
  Operation *select = nullptr;
};
std::optional<AsyncSource> matchAsyncSource(Value v) {
  AsyncSource source;
  if (auto select = v.getDefiningOp<arith::SelectOp>()) {
    auto zero = select.getFalseValue().getDefiningOp<arith::ConstantOp>();
    auto attr = zero ? dyn_cast<FloatAttr>(zero.getValue()) : FloatAttr();
    if (!attr || !attr.getValue().isPosZero() ||
        !select.getCondition().getType().isInteger(1))
      return std::nullopt;
    source.cond = select.getCondition();
    source.select = select;
    v = select.getTrueValue();
  }
  source.load = v.getDefiningOp<memref::LoadOp>();
  if (!source.load || !source.load.getType().isF32() ||
      !isPlanBuffer(source.load.getMemRef()) ||
      (source.select && !source.load->hasOneUse()))
    return std::nullopt;
  return source;
}

/// Indices an operand's vector loads run along: the reduction nest's or a
/// side's, flattened in order (the first slowest).
struct IndexGroup {
  ArrayRef<Value> ivs;
  ArrayRef<int64_t> lower, count, step;
  /// Their bits in the dependence masks of Recomputable.
  uint64_t mask;
  /// The product of `count`.
  int64_t size;
};

/// `v`'s load when 4 consecutive elements of `group`, flattened, are one
/// aligned 128-bit load (tileReductionInWorkgroupMemory's `vectorLoads`): a
/// `memref.load` of a function argument or `memref.alloc` (a buffer the
/// launch plan places, 256-byte aligned), or of a reshape of one made
/// before `loop`, of static shape and identity layout whose last indices, but
/// for trailing dimensions of size 1 (a 1x1 convolution's kernel), are the
/// group's indices, in order, each over its whole dimension from 0 with step 1,
/// its other indices independent of the group, and the group's size a multiple
/// of 4: then the element of flat group index g is at (the leading indices) x
/// size + g, and g in a multiple of 4 starts a 16-byte line. Sets `lead` to the
/// number of leading indices.
memref::LoadOp getContiguousLoad(Value v, const IndexGroup &group,
                                 scf::ParallelOp loop, Recomputable &rec,
                                 int64_t &lead) {
  auto load = v.getDefiningOp<memref::LoadOp>();
  if (!load || group.size % 4 != 0)
    return nullptr;
  Value memref = load.getMemRef();
  // The tiled loop replaces `loop`: the buffer's view must be made before.
  if (Operation *def = memref.getDefiningOp();
      def && loop->isProperAncestor(def))
    return nullptr;
  auto type = cast<MemRefType>(memref.getType());
  if (!type.hasStaticShape() || !type.getLayout().isIdentity() ||
      type.getMemorySpace() || !type.getElementType().isF32())
    return nullptr;
  if (!isPlanBuffer(memref))
    return nullptr;
  int64_t end = type.getRank();
  while (end > 0 && type.getDimSize(end - 1) == 1)
    --end;
  int64_t depth = group.ivs.size();
  lead = end - depth;
  if (lead < 0)
    return nullptr;
  for (auto [d, index] : llvm::enumerate(load.getIndices())) {
    int64_t dim = d;
    if (dim >= end)
      break; // size 1: the index is 0 (in bounds)
    if (dim < lead) {
      std::optional<uint64_t> deps = rec.deps(index);
      if (!deps || (*deps & group.mask))
        return nullptr;
      continue;
    }
    int64_t n = dim - lead;
    if (index != group.ivs[n] || group.lower[n] != 0 || group.step[n] != 1 ||
        group.count[n] != type.getDimSize(dim))
      return nullptr;
  }
  return load;
}

} // namespace

/// tileReductionInWorkgroupMemory; with `rewrite` false only whether it
/// would apply (the IR is not changed; `loop` on success).
namespace mlir::gpuopt {
namespace {
FailureOr<scf::ParallelOp> tileOrMatch(scf::ParallelOp loop,
                                       const WorkgroupTileOptions &options,
                                       bool rewrite) {
  if (!loop.getInitVals().empty() || loop->hasAttr(kThreadBlockAttrName))
    return failure();
  FailureOr<LoopBounds> bounds = getLoopBounds(loop);
  if (failed(bounds))
    return failure();
  WrittenBuffers written(loop);
  if (written.unknown)
    return failure();
  FailureOr<Reduction> match = matchReduction(loop);
  if (failed(match))
    return failure();
  Reduction &r = *match;
  unsigned numPar = loop.getNumLoops();
  SmallVector<Value> ivs = llvm::to_vector(loop.getInductionVars());
  llvm::append_range(ivs, r.nestIvs);
  if (ivs.size() > 64)
    return failure();
  uint64_t nestMask = ((uint64_t(1) << r.nestIvs.size()) - 1) << numPar;

  Block *inner = r.accStore->getBlock();
  Recomputable rec(loop, inner, ivs, written);
  // The accumulator is one element per iteration of the loop.
  for (Value v : r.accStore.getIndices()) {
    std::optional<uint64_t> d = rec.deps(v);
    if (!d || (*d & nestMask))
      return failure();
  }
  if (rec.deps(r.accStore.getMemRef()) != uint64_t(0))
    return failure();
  // x: the factor the pixels (the innermost index longer than 1, along
  // which neighbouring threads read and write) do not index.
  Value x = r.mul.getLhs(), y = r.mul.getRhs();
  std::optional<uint64_t> dx = rec.deps(x), dy = rec.deps(y);
  if (!dx || !dy)
    return failure();
  for (int64_t d = numPar - 1; d >= 0; --d) {
    if (bounds->count[d] <= 1)
      continue;
    if (*dx & (uint64_t(1) << d)) {
      std::swap(x, y);
      std::swap(dx, dy);
    }
    break;
  }
  Side sideM, sideN;
  SmallVector<unsigned> single; // indices with one iteration
  for (unsigned d = 0; d < numPar; ++d) {
    Value iv = loop.getInductionVars()[d];
    uint64_t bit = uint64_t(1) << d;
    if (bounds->count[d] == 1) {
      single.push_back(d);
      continue;
    }
    if ((*dx & bit) && (*dy & bit))
      return failure(); // a batch index: not one product
    Side &side = (*dx & bit) ? sideM : sideN;
    side.add(iv, bounds->lower[d], bounds->count[d], bounds->step[d], bit);
  }
  int64_t sizeK = 1;
  for (int64_t c : r.count)
    sizeK *= c;
  // Too few rows or reduction steps to fill a tile: register tiles do
  // better (a depthwise convolution, a classifier's last 1x1 conv).
  if (sideM.size < 16 || sizeK < 8)
    return failure();
  Type elem = r.add.getType();
  if (!elem.isF32())
    return failure();

  llvm::SetVector<Operation *> xOps, yOps, accIdxOps;
  rec.collect(x, xOps);
  rec.collect(y, yOps);
  for (Value v : r.accStore.getIndices())
    rec.collect(v, accIdxOps);
  // Nothing else in the nest may have an effect: it would not run.
  for (Operation &op : inner->without_terminator())
    if (!isPure(&op) && !xOps.contains(&op) && !yOps.contains(&op) &&
        !accIdxOps.contains(&op) && &op != r.accLoad.getOperation() &&
        &op != r.accStore.getOperation())
      return failure();

  if (!rewrite)
    return loop;

  OpBuilder b(loop);
  Location loc = loop.getLoc();
  IRMapping fixed;
  for (unsigned d : single)
    fixed.map(loop.getInductionVars()[d],
              arith::ConstantIndexOp::create(b, loc, bounds->lower[d]));

  gpuopt::WorkgroupTiling tiling = gpuopt::chooseWorkgroupTiling(
      sideM.size, sideN.size, sizeK,
      {options.minBlocks, options.maxThreadOutputs, options.maxSplits});
  TileShape shape = tiling.shape;
  int64_t splits = tiling.splits;
  int64_t numBN = llvm::divideCeil(sideN.size, shape.bn);
  int64_t blocks = llvm::divideCeil(sideM.size, shape.bm) * numBN;
  // Split-K: block `blk` computes part blk / blocks of the reduction (stepK
  // of its sizeK iterations, whole steps) for tile blk % blocks, into a
  // workspace of partial sums that a second loop adds up, in part order,
  // before the ops after the nest.
  int64_t stepK = sizeK / splits;
  int64_t tn = shape.bn / shape.rn;
  // With tensor cores: 8 warps as wm x wn, each an (MI x 16) x (NI x 8)
  // tile of m16n8k8 products; the fragments' rows and columns are again
  // RM x RN outputs per thread.
  int64_t wm = 0, wn = 0;
  if (options.tensorCores) {
    for (int64_t w : {2, 4, 1, 8}) {
      if (shape.bm % (16 * w) == 0 && shape.bn % (8 * (8 / w)) == 0) {
        wm = w;
        wn = 8 / w;
        break;
      }
    }
  }
  bool mma = wm != 0;
  int64_t warpM = mma ? shape.bm / wm : 0, warpN = mma ? shape.bn / wn : 0;
  // Without tensor cores rows are padded by 4, which keeps each thread's
  // RM rows 16-byte aligned for its vector reads. With them each 16-row
  // block of the x tile is stored interleaved, row g + 8h at 2g + h, so
  // that a lane's A fragment elements (rows g and g + 8) are one 8-byte
  // read per k, and the y tile is [k / 8 * 4 + k % 4, column, k % 8 / 4],
  // so that its B fragment (k and k + 4) is one 8-byte read; rows of
  // BM + 8 and BN + 4 (pairs) put the 16 lanes of a half-warp's 8-byte
  // reads (2 t x row + 2 g) on distinct banks.
  int64_t xPad = mma ? 8 : 4, yPad = mma ? 4 : 0;

  MLIRContext *ctx = loop.getContext();
  auto cst = [&](OpBuilder &ob, int64_t v) -> Value {
    return arith::ConstantIndexOp::create(ob, loc, v);
  };
  Value c0 = cst(b, 0), c1 = cst(b, 1);
  Value workspace;
  if (splits > 1)
    workspace = memref::AllocOp::create(
        b, loc, MemRefType::get({splits, sideM.size, sideN.size}, elem));
  auto tiled = scf::ParallelOp::create(
      b, loc, ValueRange{c0, c0},
      ValueRange{cst(b, blocks * splits), cst(b, kThreads)},
      ValueRange{c1, c1});
  tiled->setAttr(kThreadBlockAttrName, UnitAttr::get(ctx));
  OpBuilder tb(tiled.getBody()->getTerminator());
  Value blk = tiled.getInductionVars()[0], tid = tiled.getInductionVars()[1];
  Value part, kBase;
  if (splits > 1) {
    part = arith::DivUIOp::create(tb, loc, blk, cst(tb, blocks));
    kBase = arith::MulIOp::create(tb, loc, part, cst(tb, stepK));
    blk = arith::RemUIOp::create(tb, loc, blk, cst(tb, blocks));
  }

  // A padded row: the x tile is stored along k by neighbouring threads.
  // With several buffers of each, [buffer, k, row]: step t is multiplied
  // from buffer t % S while later steps are stored into the others.
  int64_t numSteps = llvm::divideCeil(stepK, kTileK);
  bool doubleBuffer = options.doubleBuffer && numSteps > 1;
  // With `asyncCopy` an operand whose elements are plain reads of a plan
  // buffer (matchAsyncSource; any vector operand) is copied straight into
  // its tile (nvgpu.device_async_copy, PTX cp.async) when its step's loads
  // are issued: no registers hold it until the step's stores. That needs
  // the destination buffer free at the loads: two buffers, or loads at the
  // step itself (not a step ahead into the buffer being multiplied from).
  // The TF32 tiles round their operands to TF32 once staged: a thread
  // rounds the elements it copied in place, after the wait that completes
  // them and before the barrier that publishes them.
  bool asyncCopy =
      options.asyncCopy && (doubleBuffer || !options.prefetch || numSteps == 1);
  std::optional<AsyncSource> xAsync, yAsync;
  if (asyncCopy) {
    xAsync = matchAsyncSource(x);
    yAsync = matchAsyncSource(y);
  }
  // Buffers of each tile: 1, 2 (doubleBuffer) or, where both operands are
  // copied a step ahead, up to options.stages: the copies of step t + S - 1
  // are in flight while step t multiplies. As many as fit the static
  // workgroup memory and are useful (no more than the steps).
  int64_t stages = doubleBuffer ? 2 : 1;
  if (asyncCopy && xAsync && yAsync && options.prefetch && doubleBuffer) {
    int64_t stageBytes = kTileK * (shape.bm + xPad + shape.bn + yPad) * 4;
    stages =
        std::max<int64_t>(2, std::min({options.stages, numSteps,
                                       kWorkgroupTileMaxBytes / stageBytes}));
  }
  auto wg = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  auto tileType = [&](int64_t width) {
    SmallVector<int64_t> dims;
    if (stages > 1)
      dims.push_back(stages);
    dims.append({kTileK, width});
    return MemRefType::get(dims, elem, MemRefLayoutAttrInterface(), wg);
  };
  // 16-byte aligned (the kernel outlining gives the workgroup attributions
  // that alignment): rows of a multiple of 4 words start aligned.
  auto xTile = memref::AllocaOp::create(tb, loc, tileType(shape.bm + xPad),
                                        b.getI64IntegerAttr(16));
  MemRefType yType = tileType(shape.bn + yPad);
  if (mma) {
    SmallVector<int64_t> dims(yType.getShape());
    dims[dims.size() - 2] = kTileK / 2;
    dims.push_back(2);
    yType = MemRefType::get(dims, elem, MemRefLayoutAttrInterface(), wg);
  }
  auto yTile =
      memref::AllocaOp::create(tb, loc, yType, b.getI64IntegerAttr(16));
  // The indices of element (k, row) of buffer `buf` (null: single buffer).
  auto tileAt = [](Value buf, Value k, Value row) -> SmallVector<Value, 3> {
    if (buf)
      return {buf, k, row};
    return {k, row};
  };

  auto mulc = [&](OpBuilder &ob, Value v, int64_t c) -> Value {
    return arith::MulIOp::create(ob, loc, v, cst(ob, c));
  };
  auto addc = [&](OpBuilder &ob, Value v, int64_t c) -> Value {
    return c == 0 ? v : arith::AddIOp::create(ob, loc, v, cst(ob, c));
  };
  // The indices of element (k, pos) of `tile`, in the tensor cores'
  // layouts (above) with them.
  auto tileIndex = [&](OpBuilder &ob, Value tile, Value buf, Value k,
                       Value pos) -> SmallVector<Value, 4> {
    if (!mma)
      return tileAt(buf, k, pos);
    auto div = [&](Value v, int64_t c) -> Value {
      return arith::DivUIOp::create(ob, loc, v, cst(ob, c));
    };
    auto rem = [&](Value v, int64_t c) -> Value {
      return arith::RemUIOp::create(ob, loc, v, cst(ob, c));
    };
    SmallVector<Value, 4> indices;
    if (buf)
      indices.push_back(buf);
    if (tile == xTile.getResult()) {
      Value in16 = rem(pos, 16);
      Value phys = arith::AddIOp::create(
          ob, loc, mulc(ob, div(pos, 16), 16),
          arith::AddIOp::create(ob, loc, mulc(ob, rem(in16, 8), 2),
                                div(in16, 8)));
      indices.append({k, phys});
      return indices;
    }
    indices.append(
        {arith::AddIOp::create(ob, loc, mulc(ob, div(k, 8), 4), rem(k, 4)), pos,
         rem(div(k, 4), 2)});
    return indices;
  };
  auto lessThan = [&](OpBuilder &ob, Value v, int64_t c) -> Value {
    return arith::CmpIOp::create(ob, loc, arith::CmpIPredicate::ult, v,
                                 cst(ob, c));
  };
  auto zero = [&](OpBuilder &ob) -> Value {
    return arith::ConstantOp::create(ob, loc, ob.getZeroAttr(elem));
  };
  auto cloneAll = [&](OpBuilder &ob, ArrayRef<Operation *> ops,
                      IRMapping &map) {
    for (Operation *op : ops)
      ob.clone(*op, map);
  };

  Value mBase =
      mulc(tb, arith::DivUIOp::create(tb, loc, blk, cst(tb, numBN)), shape.bm);
  Value nBase =
      mulc(tb, arith::RemUIOp::create(tb, loc, blk, cst(tb, numBN)), shape.bn);
  Value ty = arith::DivUIOp::create(tb, loc, tid, cst(tb, tn));
  Value tx = arith::RemUIOp::create(tb, loc, tid, cst(tb, tn));
  // Without tensor cores thread (ty, tx) owns the RM consecutive rows
  // ty * RM + i, read as one vector per step (a warp spans few ty: a
  // broadcast), and columns in pairs, 2 tx + (j mod 2) + (j / 2) * 2 tn, each
  // pair one 8-byte read per step: neighbouring threads read neighbouring
  // pairs (a warp's 16 pairs are one 128-byte wavefront) and write
  // neighbouring outputs. Per step 1 + RN/2 workgroup reads feed RM x RN
  // FMAs. With them, lane (g, t) of warp
  // (wr, wc) owns the accumulator fragments' rows wr * warpM + 16 mi + g
  // (+ 8) and columns wc * warpN + 8 ni + 2 t (+ 1).
  SmallVector<Value> rows, cols, rowOk, colOk, rowInTile, colInTile;
  Value g, t4, aPhysFirst, bColFirst;
  if (mma) {
    Value warp = arith::DivUIOp::create(tb, loc, tid, cst(tb, 32));
    Value lane = arith::RemUIOp::create(tb, loc, tid, cst(tb, 32));
    g = arith::DivUIOp::create(tb, loc, lane, cst(tb, 4));
    t4 = arith::RemUIOp::create(tb, loc, lane, cst(tb, 4));
    Value wr =
        mulc(tb, arith::DivUIOp::create(tb, loc, warp, cst(tb, wn)), warpM);
    Value wc =
        mulc(tb, arith::RemUIOp::create(tb, loc, warp, cst(tb, wn)), warpN);
    Value rowFirst = arith::AddIOp::create(tb, loc, wr, g);
    Value colFirst = arith::AddIOp::create(tb, loc, wc, mulc(tb, t4, 2));
    // Where rows g and g + 8 of the warp's first 16 sit (interleaved), and
    // the column of its first B fragment.
    aPhysFirst = arith::AddIOp::create(tb, loc, wr, mulc(tb, g, 2));
    bColFirst = arith::AddIOp::create(tb, loc, wc, g);
    for (int64_t i = 0; i < warpM / 16; ++i)
      for (int64_t h : {0, 8})
        rowInTile.push_back(addc(tb, rowFirst, 16 * i + h));
    for (int64_t j = 0; j < warpN / 8; ++j)
      for (int64_t e : {0, 1})
        colInTile.push_back(addc(tb, colFirst, 8 * j + e));
  } else {
    Value rowFirst = mulc(tb, ty, shape.rm), colFirst = mulc(tb, tx, 2);
    for (int64_t i = 0; i < shape.rm; ++i)
      rowInTile.push_back(addc(tb, rowFirst, i));
    for (int64_t j = 0; j < shape.rn; ++j)
      colInTile.push_back(addc(tb, colFirst, (j / 2) * 2 * tn + j % 2));
  }
  for (Value v : rowInTile) {
    rows.push_back(arith::AddIOp::create(tb, loc, mBase, v));
    rowOk.push_back(lessThan(tb, rows.back(), sideM.size));
  }
  for (Value v : colInTile) {
    cols.push_back(arith::AddIOp::create(tb, loc, nBase, v));
    colOk.push_back(lessThan(tb, cols.back(), sideN.size));
  }
  int64_t numRows = rows.size(), numCols = cols.size();
  auto outputMap = [&](OpBuilder &ob, int64_t i, int64_t j) {
    IRMapping map = fixed;
    sideM.map(ob, loc, rows[i], map);
    sideN.map(ob, loc, cols[j], map);
    return map;
  };

  // An output's part before the nest (with `map` mapping the loop's
  // indices), then its accumulator's value.
  auto initialValue = [&](OpBuilder &ob, IRMapping &map) {
    cloneAll(ob, r.pre, map);
    cloneAll(ob, accIdxOps.getArrayRef(), map);
    Value v = forwardInitialValue(ob.getBlock(), r.accLoad, map);
    return v ? v : ob.clone(*r.accLoad, map)->getResult(0);
  };
  // Its accumulator's final value `v` stored, then its part after the nest
  // (the accumulator's indices already cloned under `map`).
  auto storeFinal = [&](OpBuilder &ob, IRMapping &map, Value v) {
    map.map(r.add.getResult(), v);
    auto store = cast<memref::StoreOp>(ob.clone(*r.accStore, map));
    cloneAll(ob, r.post, map);
    forwardFinalValue(store);
  };

  // Each output's part before the nest, then its accumulator's value (a
  // part of a split reduction: zero).
  SmallVector<Value> accs;
  for (int64_t i = 0; i < numRows; ++i) {
    for (int64_t j = 0; j < numCols; ++j) {
      if (splits > 1) {
        accs.push_back(zero(tb));
        continue;
      }
      Value ok = arith::AndIOp::create(tb, loc, rowOk[i], colOk[j]);
      auto init = scf::IfOp::create(
          tb, loc, ok,
          [&](OpBuilder &ob, Location) {
            IRMapping map = outputMap(ob, i, j);
            scf::YieldOp::create(ob, loc, initialValue(ob, map));
          },
          [&](OpBuilder &ob, Location) {
            scf::YieldOp::create(ob, loc, zero(ob));
          });
      accs.push_back(init.getResult(0));
    }
  }

  // The operands of the step from `k0`, loaded into registers: each
  // thread's elements of the x and the y tile, zero past M, N and (with
  // `guardK`) K. They are loaded a step ahead (below), so the global loads
  // of the next step are in flight while this one multiplies.
  // A slot is one element of the tile or, with `lanes` 4, 4 consecutive
  // ones along k (`alongK`) or along the positions; `active` (null: all
  // threads) says whether this thread has the slot (fewer vectors than
  // threads in a narrow tile).
  struct Staged {
    Value tile, kk, pos, active;
    int64_t lanes;
    bool alongK;
  };
  SmallVector<Staged> slots;
  auto stageSlots = [&](Value tile, int64_t width, bool kFastest,
                        int64_t lanes) {
    int64_t total = kTileK * width / lanes;
    int64_t fastest = (kFastest ? kTileK : width) / lanes;
    for (int64_t e0 = 0; e0 < total; e0 += kThreads) {
      Value e = addc(tb, tid, e0);
      Value first = arith::RemUIOp::create(tb, loc, e, cst(tb, fastest));
      if (lanes != 1)
        first = mulc(tb, first, lanes);
      Value other = arith::DivUIOp::create(tb, loc, e, cst(tb, fastest));
      Value active;
      if (e0 + kThreads > total)
        active = lessThan(tb, e, total);
      slots.push_back({tile, kFastest ? first : other, kFastest ? other : first,
                       active, lanes, kFastest});
    }
  };
  // An operand loaded 4 elements at a time: its load, leading indices, the
  // group it is contiguous along, and its buffer as [leading..., group].
  struct VectorOperand {
    memref::LoadOp load;
    int64_t lead = 0;
    bool alongK = false;
    Value flat;
  };
  IndexGroup nestGroup{r.nestIvs, r.lower, r.count, r.step, nestMask, sizeK};
  auto sideGroup = [](const Side &side) {
    return IndexGroup{side.ivs,  side.lower, side.count,
                      side.step, side.mask,  side.size};
  };
  // The first of `groups` (along k or not) `v` is contiguous along.
  auto findVector =
      [&](Value v,
          ArrayRef<std::pair<IndexGroup, bool>> groups) -> VectorOperand {
    VectorOperand vec;
    if (!options.vectorLoads)
      return vec;
    for (auto [group, alongK] : groups) {
      vec.load = getContiguousLoad(v, group, loop, rec, vec.lead);
      if (!vec.load)
        continue;
      vec.alongK = alongK;
      Value memref = vec.load.getMemRef();
      auto type = cast<MemRefType>(memref.getType());
      if (type.getRank() == vec.lead + 1) {
        vec.flat = memref;
        return vec;
      }
      SmallVector<ReassociationIndices> dims;
      for (int64_t d = 0; d < vec.lead; ++d)
        dims.push_back({d});
      dims.emplace_back();
      for (int64_t d = vec.lead; d < type.getRank(); ++d)
        dims.back().push_back(d);
      vec.flat = memref::CollapseShapeOp::create(tb, loc, memref, dims);
      return vec;
    }
    return vec;
  };
  // The weights are contiguous along k (OIHW) or, transposed (a transposed
  // convolution's IOHW), along M; the input along the pixels or, a linear's
  // rows, along k. Scalar slots take the same order as the first.
  VectorOperand xVec =
      findVector(x, {{nestGroup, true}, {sideGroup(sideM), false}});
  VectorOperand yVec =
      findVector(y, {{sideGroup(sideN), false}, {nestGroup, true}});
  stageSlots(xTile, shape.bm, !xVec.load || xVec.alongK, xVec.load ? 4 : 1);
  size_t numXSlots = slots.size();
  stageSlots(yTile, shape.bn, yVec.load && yVec.alongK, yVec.load ? 4 : 1);
  // Whether slot n is copied asynchronously: a vector slot's operand is a
  // plain load of a plan buffer; a scalar one's must match one.
  auto isCopied = [&](size_t n) {
    return asyncCopy &&
           (slots[n].lanes != 1 || (n < numXSlots ? xAsync : yAsync));
  };
  // The indices of the elements of slot `slot` in buffer `buf`, with the
  // tensor cores' layouts.
  auto slotElements = [&](OpBuilder &ob, const Staged &slot, Value buf) {
    SmallVector<SmallVector<Value, 4>> elements;
    for (int64_t j = 0; j < slot.lanes; ++j)
      elements.push_back(
          slot.alongK
              ? tileIndex(ob, slot.tile, buf, addc(ob, slot.kk, j), slot.pos)
              : tileIndex(ob, slot.tile, buf, slot.kk, addc(ob, slot.pos, j)));
    return elements;
  };
  // `build` for slot `slot`, under its `active` guard if it has one.
  auto forSlot = [&](OpBuilder &sb, const Staged &slot,
                     function_ref<void(OpBuilder &)> build) {
    if (!slot.active) {
      build(sb);
      return;
    }
    auto guard = scf::IfOp::create(sb, loc, slot.active);
    OpBuilder gb = guard.getThenBodyBuilder();
    build(gb);
  };
  // TF32: the copied elements of this thread in buffer `buf`, complete
  // (after their wait), rounded in place (nobody else reads them before
  // the barrier that follows, nor writes them).
  auto roundCopied = [&](OpBuilder &sb, Value buf) {
    if (!mma)
      return;
    for (size_t n = 0; n < slots.size(); ++n) {
      if (!isCopied(n))
        continue;
      forSlot(sb, slots[n], [&](OpBuilder &ob) {
        for (const SmallVector<Value, 4> &at :
             slotElements(ob, slots[n], buf)) {
          Value v = memref::LoadOp::create(ob, loc, slots[n].tile, at);
          memref::StoreOp::create(ob, loc, roundToTf32(ob, loc, v),
                                  slots[n].tile, at);
        }
      });
    }
  };
  // A step's loads: the staged values of the slots loaded into registers
  // (null for the copied ones), and the group of its copies (null if none).
  struct StepLoads {
    SmallVector<Value> values;
    Value group;
    /// The tokens of its copies issued unguarded (in the step's block).
    SmallVector<Value> tokens;
  };
  // A group of the thread's copies so far (PTX cp.async.commit_group
  // commits every copy not yet committed, those under a guard too, whatever
  // tokens it names). It names `tokens`, else a poison token: the op's
  // custom form cannot print an empty operand list that parses back when
  // a result follows on the next line.
  auto tokenType = nvgpu::DeviceAsyncTokenType::get(ctx);
  auto commitGroup = [&](OpBuilder &ob, ArrayRef<Value> tokens) -> Value {
    SmallVector<Value> named(tokens);
    if (named.empty())
      named.push_back(ub::PoisonOp::create(ob, loc, tokenType));
    return nvgpu::DeviceAsyncCreateGroupOp::create(ob, loc, tokenType, named);
  };
  auto loadStep = [&](OpBuilder &sb, Value k0, bool guardK, Value buf,
                      bool commit = true) {
    StepLoads step;
    if (kBase)
      k0 = arith::AddIOp::create(sb, loc, kBase, k0);
    // (Named, not structured bindings: the lambdas below capture them.)
    for (size_t n = 0; n < slots.size(); ++n) {
      const Staged &slot = slots[n];
      bool isX = n < numXSlots;
      const Side &side = isX ? sideM : sideN;
      Value at = arith::AddIOp::create(sb, loc, isX ? mBase : nBase, slot.pos);
      Value k = arith::AddIOp::create(sb, loc, k0, slot.kk);
      Value ok = lessThan(sb, at, side.size);
      // (A vector's first k or position is a multiple of 4, which divides
      // sizeK or the side's size.)
      if (guardK)
        ok = arith::AndIOp::create(sb, loc, ok, lessThan(sb, k, sizeK));
      auto vectorType = VectorType::get({slot.lanes}, elem);
      VectorOperand vec = isX ? xVec : yVec;
      // The buffer's indices of the vector of the group's elements from k
      // or from `at` (the leading ones independent of the group), with the
      // operand's index ops cloned into `ob` under `map`.
      auto vectorIndices = [&](OpBuilder &ob, Value kAt, Value atAt,
                               IRMapping &map) {
        if (vec.alongK) {
          for (Value iv : r.nestIvs)
            map.map(iv, cst(ob, 0));
        } else {
          mapFlatIndex(ob, loc, kAt, r.nestIvs, r.lower, r.count, r.step, map);
          for (Value iv : side.ivs)
            map.map(iv, cst(ob, 0));
        }
        for (Operation *op : isX ? xOps : yOps)
          if (op != vec.load.getOperation())
            ob.clone(*op, map);
        SmallVector<Value> indices;
        for (Value index : vec.load.getIndices().take_front(vec.lead))
          indices.push_back(map.lookupOrDefault(index));
        indices.push_back(vec.alongK ? kAt : atAt);
        return indices;
      };
      std::optional<AsyncSource> source = isX ? xAsync : yAsync;
      if (isCopied(n)) {
        // Out of M, N or K the copy reads nothing (zero fill) from a
        // valid address: that of position 0, step 0.
        auto copies = [&](OpBuilder &ob) {
          auto pick = [&](Value v) -> Value {
            return arith::SelectOp::create(ob, loc, ok, v, cst(ob, 0));
          };
          Value atC = pick(at), kC = pick(k);
          IRMapping map = fixed;
          side.map(ob, loc, atC, map);
          auto count = [&](Value cond, int64_t n) -> Value {
            return arith::SelectOp::create(ob, loc, cond, cst(ob, n),
                                           cst(ob, 0));
          };
          auto copy = [&](Value src, ValueRange srcIndices,
                          ArrayRef<Value> dstIndices, int64_t n,
                          Value srcElements) {
            auto op = nvgpu::DeviceAsyncCopyOp::create(
                ob, loc, tokenType, slot.tile, dstIndices, src, srcIndices,
                ob.getIndexAttr(n), srcElements,
                n * 4 == 16 ? ob.getUnitAttr() : UnitAttr());
            if (ob.getBlock() == sb.getBlock())
              step.tokens.push_back(op.getAsyncToken());
          };
          if (slot.lanes == 1) {
            mapFlatIndex(ob, loc, kC, r.nestIvs, r.lower, r.count, r.step, map);
            for (Operation *op : isX ? xOps : yOps)
              if (op != source->load.getOperation() && op != source->select)
                ob.clone(*op, map);
            Value read = ok;
            if (source->cond)
              read = arith::AndIOp::create(ob, loc, read,
                                           map.lookupOrDefault(source->cond));
            auto indices =
                llvm::map_to_vector(source->load.getIndices(), [&](Value v) {
                  return map.lookupOrDefault(v);
                });
            copy(map.lookupOrDefault(source->load.getMemRef()), indices,
                 tileIndex(ob, slot.tile, buf, slot.kk, slot.pos), 1,
                 count(read, 1));
            return;
          }
          SmallVector<Value> indices = vectorIndices(ob, kC, atC, map);
          if (!vec.alongK && !mma) {
            // 4 consecutive positions: one 16-byte copy (cp.async.cg).
            copy(vec.flat, indices, tileAt(buf, slot.kk, slot.pos), 4,
                 count(ok, 4));
            return;
          }
          // 4 consecutive k of one position, stored transposed, or 4
          // positions the tensor cores' layouts keep apart: 4 copies.
          Value last = indices.back();
          for (auto [j, at] : llvm::enumerate(slotElements(ob, slot, buf))) {
            indices.back() = addc(ob, last, j);
            copy(vec.flat, indices, at, 1, count(ok, 1));
          }
        };
        forSlot(sb, slot, copies);
        step.values.push_back(Value());
        continue;
      }
      if (slot.active)
        ok = arith::AndIOp::create(sb, loc, ok, slot.active);
      auto load = scf::IfOp::create(
          sb, loc, ok,
          [&](OpBuilder &ob, Location) {
            IRMapping map = fixed;
            side.map(ob, loc, at, map);
            if (slot.lanes == 1) {
              mapFlatIndex(ob, loc, k, r.nestIvs, r.lower, r.count, r.step,
                           map);
              cloneAll(ob, isX ? xOps.getArrayRef() : yOps.getArrayRef(), map);
              scf::YieldOp::create(ob, loc, map.lookupOrDefault(isX ? x : y));
              return;
            }
            SmallVector<Value> indices = vectorIndices(ob, k, at, map);
            Value v = vector::LoadOp::create(ob, loc, vectorType, vec.flat,
                                             indices, /*nontemporal=*/false,
                                             llvm::MaybeAlign(slot.lanes * 4));
            scf::YieldOp::create(ob, loc, v);
          },
          [&](OpBuilder &ob, Location) {
            Value none = slot.lanes == 1
                             ? zero(ob)
                             : arith::ConstantOp::create(
                                   ob, loc,
                                   DenseElementsAttr::get(
                                       vectorType, ob.getZeroAttr(elem)));
            scf::YieldOp::create(ob, loc, none);
          });
      step.values.push_back(load.getResult(0));
    }
    // One group of the step's copies.
    if (commit && llvm::is_contained(step.values, Value()))
      step.group = commitGroup(sb, step.tokens);
    return step;
  };

  // The operands `staged` stored into buffer `buf` of the tiles; then the
  // wait for the step's copies, before the barrier that publishes them.
  auto storeStep = [&](OpBuilder &sb, const StepLoads &step, Value buf) {
    for (size_t n = 0; n < slots.size(); ++n) {
      const Staged &slot = slots[n];
      Value staged = step.values[n];
      if (!staged)
        continue; // copied
      auto store = [&](OpBuilder &ob) {
        // The tensor cores read only the high 19 bits of each operand
        // (truncation): round to TF32 (nearest, ties away, cvt.rna's rule)
        // as the tile is staged, once per element and block.
        Value v = mma ? roundToTf32(ob, loc, staged) : staged;
        if (slot.lanes == 1) {
          memref::StoreOp::create(
              ob, loc, v, slot.tile,
              tileIndex(ob, slot.tile, buf, slot.kk, slot.pos));
          return;
        }
        for (int64_t j = 0; j < slot.lanes; ++j)
          memref::StoreOp::create(
              ob, loc, vector::ExtractOp::create(ob, loc, v, j), slot.tile,
              slot.alongK ? tileIndex(ob, slot.tile, buf, addc(ob, slot.kk, j),
                                      slot.pos)
                          : tileIndex(ob, slot.tile, buf, slot.kk,
                                      addc(ob, slot.pos, j)));
      };
      forSlot(sb, slot, store);
    }
    if (step.group) {
      nvgpu::DeviceAsyncWaitOp::create(sb, loc, step.group, IntegerAttr());
      roundCopied(sb, buf);
    }
  };

  // The multiply-adds of `kc` reduction iterations from buffer `buf` of the
  // tiles, onto the accumulators `in`.
  auto multiplyStep = [&](OpBuilder &sb, Value buf, int64_t kc,
                          ValueRange in) -> SmallVector<Value> {
    if (mma) {
      // Steps of 8 (the rest of a short step is zeros in both tiles).
      auto steps = scf::ForOp::create(
          sb, loc, cst(sb, 0), cst(sb, llvm::divideCeil(kc, 8) * 8), cst(sb, 8),
          in, [&](OpBuilder &lb, Location, Value k8, ValueRange acc) {
            Value kt = arith::AddIOp::create(lb, loc, k8, t4);
            Value kt4 = addc(lb, kt, 4);
            // Two elements along the tile's last dimension, one 8-byte read.
            auto pair = [&](Value tile, ArrayRef<Value> at) {
              SmallVector<Value, 4> indices;
              if (buf)
                indices.push_back(buf);
              indices.append(at.begin(), at.end());
              Value v = vector::LoadOp::create(
                  lb, loc, VectorType::get({2}, elem), tile, indices,
                  /*nontemporal=*/false, llvm::MaybeAlign(8));
              return std::make_pair(vector::ExtractOp::create(lb, loc, v, 0),
                                    vector::ExtractOp::create(lb, loc, v, 1));
            };
            auto vec = [&](ArrayRef<int64_t> shape2, ValueRange parts) {
              return vector::FromElementsOp::create(
                  lb, loc, VectorType::get(shape2, elem), parts);
            };
            SmallVector<Value> a, bf;
            // A: rows g and g + 8 of each 16 (interleaved: adjacent) at k
            // and at k + 4.
            for (int64_t i = 0; i < numRows; i += 2) {
              Value at = addc(lb, aPhysFirst, 8 * i);
              auto [a0, a1] = pair(xTile, {kt, at});
              auto [a2, a3] = pair(xTile, {kt4, at});
              a.push_back(vec({4, 1}, {a0, a1, a2, a3}));
            }
            // B: column g of each 8 at k and k + 4 (the last dimension).
            Value yRow = arith::AddIOp::create(
                lb, loc, arith::DivUIOp::create(lb, loc, k8, cst(lb, 2)), t4);
            for (int64_t j = 0; j < numCols; j += 2) {
              auto [b0, b1] =
                  pair(yTile, {yRow, addc(lb, bColFirst, 4 * j), cst(lb, 0)});
              bf.push_back(vec({2, 1}, {b0, b1}));
            }
            SmallVector<Value> next(acc.begin(), acc.end());
            auto at = [&](int64_t i, int64_t j) -> Value & {
              return next[i * numCols + j];
            };
            for (int64_t i = 0; i < numRows; i += 2) {
              for (int64_t j = 0; j < numCols; j += 2) {
                Value c = vec({2, 2}, {at(i, j), at(i, j + 1), at(i + 1, j),
                                       at(i + 1, j + 1)});
                Value d = nvgpu::MmaSyncOp::create(
                    lb, loc, a[i / 2], bf[j / 2], c,
                    ArrayRef<int64_t>{16, 8, 8}, /*tf32Enabled=*/true);
                auto part = [&](int64_t r0, int64_t c0) -> Value {
                  return vector::ExtractOp::create(lb, loc, d,
                                                   ArrayRef<int64_t>{r0, c0});
                };
                at(i, j) = part(0, 0);
                at(i, j + 1) = part(0, 1);
                at(i + 1, j) = part(1, 0);
                at(i + 1, j + 1) = part(1, 1);
              }
            }
            scf::YieldOp::create(lb, loc, next);
          });
      return SmallVector<Value>(steps.getResults());
    }
    auto steps = scf::ForOp::create(
        sb, loc, cst(sb, 0), cst(sb, kc), cst(sb, 1), in,
        [&](OpBuilder &lb, Location, Value kk, ValueRange acc) {
          SmallVector<Value> a, bv, next;
          // The thread's RM rows, then its column pairs, as aligned vectors
          // (PTX ld.shared.v4 / .v2; 8 rows are 16-byte aligned, read as
          // two v4: rows of BM + 4 words keep no 32-byte alignment).
          auto read = [&](Value tile, Value at, int64_t n,
                          SmallVector<Value> &out) {
            Value v = vector::LoadOp::create(
                lb, loc, VectorType::get({n}, elem), tile, tileAt(buf, kk, at),
                /*nontemporal=*/false,
                llvm::MaybeAlign(std::min<int64_t>(n, 4) * 4));
            for (int64_t e = 0; e < n; ++e)
              out.push_back(vector::ExtractOp::create(lb, loc, v, e));
          };
          read(xTile, rowInTile[0], shape.rm, a);
          for (int64_t j = 0; j < shape.rn; j += 2)
            read(yTile, colInTile[j], 2, bv);
          for (int64_t i = 0; i < shape.rm; ++i) {
            for (int64_t j = 0; j < shape.rn; ++j) {
              IRMapping map;
              map.map(x, a[i]);
              map.map(y, bv[j]);
              map.map(r.accLoad.getResult(), acc[i * shape.rn + j]);
              lb.clone(*r.mul, map);
              next.push_back(lb.clone(*r.add, map)->getResult(0));
            }
          }
          scf::YieldOp::create(lb, loc, next);
        });
    return SmallVector<Value>(steps.getResults());
  };

  // Steps of kTileK, the last one `rest` short. With `prefetch` step t + 1's
  // operands are loaded (or their copies issued) while step t multiplies. With
  // one buffer each step stores its operands, synchronises, multiplies and
  // synchronises again before the next step's stores; with `doubleBuffer` step
  // t + 1's stores go into the other buffer, which nobody reads after the
  // barrier of step t - 1, so one barrier per step suffices.
  int64_t rest = stepK - (numSteps - 1) * kTileK;
  bool guardLast = rest < kTileK;
  // Step t + ahead's operands, into buffer `buf`; only the last step may be
  // short.
  auto loadAt = [&](OpBuilder &lb, Value t, int64_t ahead, Value buf) {
    return loadStep(lb, mulc(lb, addc(lb, t, ahead), kTileK),
                    ahead != 0 && guardLast, buf);
  };
  auto barrier = [&](OpBuilder &ob) { gpu::BarrierOp::create(ob, loc); };
  auto stepLoop =
      [&](int64_t count, ValueRange carried,
          function_ref<SmallVector<Value>(OpBuilder &, Value, ValueRange)> body)
      -> SmallVector<Value> {
    if (count == 0)
      return SmallVector<Value>(carried);
    auto kLoop = scf::ForOp::create(
        tb, loc, cst(tb, 0), cst(tb, count), cst(tb, 1), carried,
        [&](OpBuilder &lb, Location, Value t, ValueRange in) {
          scf::YieldOp::create(lb, loc, body(lb, t, in));
        });
    return SmallVector<Value>(kLoop.getResults());
  };
  Value lastBuf;
  if (stages > 2) {
    // Step s's copies form group s (empty groups past the last step keep
    // the count): steps 0 .. S - 2 before the loop; in the loop, step t
    // issues step t + S - 1 into buffer (t + S - 1) % S, which step t - 1
    // read before the barrier that ended it, multiplies from buffer t % S,
    // then waits until at most S - 2 groups are pending (steps up to
    // t + 1 complete) and meets the barrier that publishes step t + 1.
    auto commit = [&](OpBuilder &ob, ArrayRef<Value> tokens = {}) -> Value {
      return commitGroup(ob, tokens);
    };
    // (`step`: the step the wait completes, for the TF32 rounding.)
    auto waitAndSync = [&](OpBuilder &ob, Value group,
                           function_ref<Value(OpBuilder &)> step) {
      nvgpu::DeviceAsyncWaitOp::create(ob, loc, group,
                                       ob.getI32IntegerAttr(stages - 2));
      if (mma)
        roundCopied(ob,
                    arith::RemUIOp::create(ob, loc, step(ob), cst(ob, stages)));
      barrier(ob);
    };
    // Every operand is copied: the steps' loads leave no register values.
    auto copyStep = [&](OpBuilder &ob, Value k0, bool guardK,
                        Value buf) -> SmallVector<Value> {
      StepLoads step = loadStep(ob, k0, guardK, buf, /*commit=*/false);
      assert(llvm::all_of(step.values, [](Value v) { return !v; }) &&
             "an operand staged through registers in the copy pipeline");
      return step.tokens;
    };
    // (2 < stages <= numSteps: the prologue's steps are whole ones, and
    // the loop's last steps issue nothing.)
    Value group;
    for (int64_t s = 0; s + 1 < stages; ++s) {
      group = commit(
          tb, copyStep(tb, cst(tb, s * kTileK), /*guardK=*/false, cst(tb, s)));
    }
    waitAndSync(tb, group, [&](OpBuilder &ob) { return cst(ob, 0); });
    // Loop steps t <= numSteps - S issue a real step.
    int64_t lastIssuing = numSteps - stages;
    accs = stepLoop(
        numSteps - 1, accs, [&](OpBuilder &lb, Value t, ValueRange in) {
          auto guard = scf::IfOp::create(
              lb, loc,
              arith::CmpIOp::create(lb, loc, arith::CmpIPredicate::ule, t,
                                    cst(lb, lastIssuing)));
          OpBuilder gb = guard.getThenBodyBuilder();
          Value ahead = addc(gb, t, stages - 1);
          copyStep(gb, mulc(gb, ahead, kTileK), guardLast,
                   arith::RemUIOp::create(gb, loc, ahead, cst(gb, stages)));
          Value stepGroup = commit(lb);
          SmallVector<Value> out = multiplyStep(
              lb, arith::RemUIOp::create(lb, loc, t, cst(lb, stages)), kTileK,
              in);
          waitAndSync(lb, stepGroup,
                      [&](OpBuilder &ob) { return addc(ob, t, 1); });
          return out;
        });
    lastBuf = cst(tb, (numSteps - 1) % stages);
  } else if (doubleBuffer) {
    // Buffer t % 2 of step t.
    auto bufOf = [&](OpBuilder &ob, Value t) -> Value {
      return arith::RemUIOp::create(ob, loc, t, cst(ob, 2));
    };
    if (options.prefetch) {
      Value first = cst(tb, 0);
      storeStep(tb, loadStep(tb, first, stepK < kTileK, first), first);
      barrier(tb);
      accs = stepLoop(
          numSteps - 1, accs, [&](OpBuilder &lb, Value t, ValueRange in) {
            Value nextBuf = bufOf(lb, addc(lb, t, 1));
            StepLoads next = loadAt(lb, t, 1, nextBuf);
            SmallVector<Value> out = multiplyStep(lb, bufOf(lb, t), kTileK, in);
            storeStep(lb, next, nextBuf);
            barrier(lb);
            return out;
          });
    } else {
      accs = stepLoop(numSteps - 1, accs,
                      [&](OpBuilder &lb, Value t, ValueRange in) {
                        Value buf = bufOf(lb, t);
                        storeStep(lb, loadAt(lb, t, 0, buf), buf);
                        barrier(lb);
                        return multiplyStep(lb, buf, kTileK, in);
                      });
      Value buf = cst(tb, (numSteps - 1) % 2);
      storeStep(tb,
                loadStep(tb, cst(tb, (numSteps - 1) * kTileK), guardLast, buf),
                buf);
      barrier(tb);
    }
    lastBuf = cst(tb, (numSteps - 1) % 2);
  } else {
    // Store, synchronise, multiply, synchronise before the next stores.
    auto step = [&](OpBuilder &lb, const StepLoads &staged, int64_t kc,
                    ValueRange in) {
      storeStep(lb, staged, Value());
      barrier(lb);
      SmallVector<Value> out = multiplyStep(lb, Value(), kc, in);
      barrier(lb);
      return out;
    };
    StepLoads staged;
    if (options.prefetch) {
      // (Loaded a step ahead into registers: no copies, which would write
      // the buffer being multiplied from, but for a single step.)
      staged = loadStep(tb, cst(tb, 0), stepK < kTileK, Value());
      size_t numAccs = accs.size();
      SmallVector<Value> carried = accs;
      llvm::append_range(carried, staged.values);
      carried = stepLoop(
          numSteps - 1, carried, [&](OpBuilder &lb, Value t, ValueRange in) {
            StepLoads next = loadAt(lb, t, 1, Value());
            StepLoads current{SmallVector<Value>(in.drop_front(numAccs)),
                              Value()};
            SmallVector<Value> out =
                step(lb, current, kTileK, in.take_front(numAccs));
            llvm::append_range(out, next.values);
            return out;
          });
      accs.assign(carried.begin(), carried.begin() + numAccs);
      staged.values.assign(carried.begin() + numAccs, carried.end());
    } else {
      accs = stepLoop(numSteps - 1, accs,
                      [&](OpBuilder &lb, Value t, ValueRange in) {
                        return step(lb, loadAt(lb, t, 0, Value()), kTileK, in);
                      });
      staged =
          loadStep(tb, cst(tb, (numSteps - 1) * kTileK), guardLast, Value());
    }
    storeStep(tb, staged, Value());
    barrier(tb);
  }
  // The last step; no barrier after it.
  accs = multiplyStep(tb, lastBuf, rest, accs);

  // Split-K: each output's partial sum into the workspace; then a loop
  // over the outputs adds the parts, in order, to the value before the
  // nest and runs the part after it.
  if (splits > 1) {
    for (int64_t i = 0; i < numRows; ++i) {
      for (int64_t j = 0; j < numCols; ++j) {
        Value ok = arith::AndIOp::create(tb, loc, rowOk[i], colOk[j]);
        scf::IfOp::create(tb, loc, ok, [&](OpBuilder &ob, Location) {
          memref::StoreOp::create(ob, loc, accs[i * numCols + j], workspace,
                                  ValueRange{part, rows[i], cols[j]});
          scf::YieldOp::create(ob, loc);
        });
      }
    }
    OpBuilder rb(loop);
    scf::ParallelOp::create(
        rb, loc, ValueRange{c0, c0},
        ValueRange{cst(rb, sideM.size), cst(rb, sideN.size)},
        ValueRange{c1, c1}, [&](OpBuilder &ob, Location, ValueRange mn) {
          IRMapping map = fixed;
          sideM.map(ob, loc, mn[0], map);
          sideN.map(ob, loc, mn[1], map);
          Value v = initialValue(ob, map);
          for (int64_t p = 0; p < splits; ++p)
            v = arith::AddFOp::create(
                ob, loc, v,
                memref::LoadOp::create(ob, loc, workspace,
                                       ValueRange{cst(ob, p), mn[0], mn[1]}));
          storeFinal(ob, map, v);
          scf::ReduceOp::create(ob, loc);
        });
  } else {
    // Each output's accumulator stored, then its part after the nest.
    for (int64_t i = 0; i < numRows; ++i) {
      for (int64_t j = 0; j < numCols; ++j) {
        Value ok = arith::AndIOp::create(tb, loc, rowOk[i], colOk[j]);
        scf::IfOp::create(tb, loc, ok, [&](OpBuilder &ob, Location) {
          IRMapping map = outputMap(ob, i, j);
          cloneAll(ob, accIdxOps.getArrayRef(), map);
          storeFinal(ob, map, accs[i * numCols + j]);
          scf::YieldOp::create(ob, loc);
        });
      }
    }
  }
  loop.erase();
  return tiled;
}
} // namespace
} // namespace mlir::gpuopt

FailureOr<scf::ParallelOp> mlir::gpuopt::tileReductionInWorkgroupMemory(
    scf::ParallelOp loop, const WorkgroupTileOptions &options) {
  return tileOrMatch(loop, options, /*rewrite=*/true);
}

bool mlir::gpuopt::canTileReductionInWorkgroupMemory(scf::ParallelOp loop) {
  return succeeded(
      tileOrMatch(loop, WorkgroupTileOptions(), /*rewrite=*/false));
}
