//===- WorkgroupTiling.cpp - the workgroup tiles' shape choice ------------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Analysis/WorkgroupTiling.h"

#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <cassert>

using namespace mlir::gpuopt;

namespace {

using TileShape = WorkgroupTileShape;

/// Where the 4 x 4 shapes give too few blocks, the 4 x 2 and 2 x 4 ones
/// (half the block) still feed 8 FMAs per thread and step from 1 + 1 (or
/// 1 + 2) workgroup vector reads; 2 x 2 only 4 from 1 + 1, which leaves
/// the FMA units waiting on workgroup memory.
constexpr TileShape kShapes[] = {
    {64, 64, 4, 4},  {128, 32, 4, 4}, {32, 128, 4, 4}, {256, 16, 4, 4},
    {16, 256, 4, 4}, {64, 32, 4, 2},  {32, 64, 2, 4},  {32, 32, 2, 2},
    {64, 16, 2, 2},  {16, 64, 2, 2}};
/// Thread tiles of more than 16 outputs (where maxThreadOutputs allows
/// them): 32 FMAs from 4 workgroup reads per step (8 x 4, 4 x 8) or 64 from
/// 6 (8 x 8, its rows as two vectors of 4), against 16 from 3, and 1.5 or
/// 2 times fewer operand bytes per FMA copied into the block. They hold
/// more registers (ptxas 13.0 for sm_90, UNet at 224²: at most 80 for
/// 8 x 4, as for 4 x 4, and 144 for 8 x 8) and leave fewer blocks to
/// spread over the multiprocessors.
constexpr TileShape kWideShapes[] = {
    {128, 128, 8, 8}, {128, 64, 8, 4}, {64, 128, 4, 8}};

/// The ratio of a shape's outputs to the product's (1: no padding).
double wasteOf(int64_t m, int64_t n, const TileShape &s) {
  return double(getWorkgroupTileBlocks(m, n, s)) * s.bm * s.bn /
         (double(m) * n);
}

/// The shape with the least padding among those of at most
/// min(16, `maxThreadOutputs`) outputs per thread giving at least
/// `minBlocks` blocks (larger thread tiles on a tie), else the one with the
/// most blocks; then a wide shape of at most `maxThreadOutputs` outputs per
/// thread where it is predicted faster (fewer issue slots per output, at
/// most 5% more padding, enough blocks to go round: `timeOf`). Thread tiles
/// of fewer than `minThreadOutputs` outputs are not considered; there must
/// be some (maxThreadOutputs >= max(4, minThreadOutputs)).
TileShape chooseShape(int64_t m, int64_t n, int64_t minBlocks,
                      int64_t maxThreadOutputs, int64_t minThreadOutputs = 1) {
  auto blocksOf = [&](const TileShape &s) {
    return getWorkgroupTileBlocks(m, n, s);
  };
  // Relative time of a shape: each of the minBlocks multiprocessors runs
  // its share of whole tiles, every output at the thread tile's issue cost
  // (RM·RN FMAs plus the step's workgroup reads, per output).
  auto timeOf = [&](const TileShape &s) {
    int64_t reads = llvm::divideCeil(s.rm, 4) + s.rn / 2;
    return double(llvm::divideCeil(blocksOf(s), minBlocks)) * s.bm * s.bn *
           double(s.rm * s.rn + reads) / double(s.rm * s.rn);
  };
  const TileShape *best = nullptr;
  int64_t bestBlocks = 0;
  double bestWaste = 0;
  for (const TileShape &s : kShapes) {
    if (s.rm * s.rn > maxThreadOutputs || s.rm * s.rn < minThreadOutputs)
      continue;
    int64_t blocks = blocksOf(s);
    double waste = wasteOf(m, n, s);
    bool better;
    if (!best) {
      better = true;
    } else if ((blocks >= minBlocks) != (bestBlocks >= minBlocks)) {
      better = blocks >= minBlocks;
    } else if (blocks >= minBlocks) {
      better = waste < bestWaste * 0.95 ||
               (waste <= bestWaste * 1.05 && s.rm * s.rn > best->rm * best->rn);
    } else {
      better =
          blocks > bestBlocks || (blocks == bestBlocks && waste < bestWaste);
    }
    if (better) {
      best = &s;
      bestBlocks = blocks;
      bestWaste = waste;
    }
  }
  assert(best && "no tile shape within the thread output bounds");
  double bestTime = timeOf(*best);
  double baseWaste = bestWaste;
  for (const TileShape &s : kWideShapes) {
    if (s.rm * s.rn > maxThreadOutputs || blocksOf(s) < minBlocks ||
        wasteOf(m, n, s) > baseWaste * 1.05 || timeOf(s) >= bestTime)
      continue;
    best = &s;
    bestTime = timeOf(s);
  }
  return *best;
}

/// Reductions of at least this many steps may be split (split-K), into
/// parts of at least kSplitMinSteps steps each.
constexpr int64_t kSplitMinTotalSteps = 64;
constexpr int64_t kSplitMinSteps = 16;

} // namespace

int64_t mlir::gpuopt::getWorkgroupTileBlocks(int64_t m, int64_t n,
                                             const WorkgroupTileShape &shape) {
  return static_cast<int64_t>(llvm::divideCeil(m, shape.bm) *
                              llvm::divideCeil(n, shape.bn));
}

WorkgroupTiling
mlir::gpuopt::chooseWorkgroupTiling(int64_t m, int64_t n, int64_t sizeK,
                                    const WorkgroupTilingLimits &limits) {
  WorkgroupTiling base{
      chooseShape(m, n, limits.minBlocks, limits.maxThreadOutputs)};
  auto blocksOf = [&](const TileShape &s) {
    return getWorkgroupTileBlocks(m, n, s);
  };
  double maxWaste = std::max(1.25, wasteOf(m, n, base.shape) * 1.05);
  int64_t numSteps = llvm::divideCeil(sizeK, kWorkgroupTileK);
  if (limits.maxSplits < 2 || sizeK % kWorkgroupTileK != 0 ||
      numSteps < kSplitMinTotalSteps ||
      (blocksOf(base.shape) >= limits.minBlocks &&
       base.shape.rm * base.shape.rn > 4))
    return base;
  // (Where the base fills the machine with 2 x 2 thread tiles, only wider
  // ones are worth a split.)
  for (int64_t minOutputs : {8, 1}) {
    if (minOutputs > limits.maxThreadOutputs ||
        (minOutputs == 1 && blocksOf(base.shape) >= limits.minBlocks))
      continue;
    for (int64_t splits = 2;
         splits <= limits.maxSplits && numSteps % splits == 0 &&
         numSteps / splits >= kSplitMinSteps;
         splits *= 2) {
      int64_t need = llvm::divideCeil(limits.minBlocks, splits);
      TileShape shape =
          chooseShape(m, n, need, limits.maxThreadOutputs, minOutputs);
      if (blocksOf(shape) >= need && wasteOf(m, n, shape) <= maxWaste)
        return {shape, splits};
    }
  }
  return base;
}

double mlir::gpuopt::getWorkgroupTilingUtilization(
    int64_t m, int64_t n, const WorkgroupTiling &tiling, int64_t units) {
  if (m <= 0 || n <= 0 || units <= 0 || tiling.splits <= 0)
    return 1.0;
  const WorkgroupTileShape &s = tiling.shape;
  int64_t waves =
      llvm::divideCeil(getWorkgroupTileBlocks(m, n, s) * tiling.splits, units);
  return double(m) * n * tiling.splits / (double(waves) * units * s.bm * s.bn);
}
