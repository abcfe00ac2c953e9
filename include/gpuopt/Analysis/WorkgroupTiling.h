//===- WorkgroupTiling.h - the workgroup tiles' shape choice ----*- C++ -*-===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// How --convert-parallel-loops-to-kernels' workgroup tiling cuts an M x N
// matrix product with a reduction of K steps into thread blocks: the block
// and thread tile shape and the number of parts a deep reduction is split
// into (split-K). The code generator (WorkgroupTile.cpp) and the cost model
// (the generated convolutions of --seg-cost-report and of
// --convert-seg-to-cuda-library's select=auto) make the same choice from
// this one function.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_ANALYSIS_WORKGROUPTILING_H
#define GPUOPT_ANALYSIS_WORKGROUPTILING_H

#include <cstdint>

namespace mlir {
namespace gpuopt {

/// Threads of a block of a workgroup-tiled loop.
constexpr int64_t kWorkgroupTileThreads = 256;
/// Reduction steps per operand tile.
constexpr int64_t kWorkgroupTileK = 16;

/// A block tile of bm x bn outputs, rm x rn per thread
/// (kWorkgroupTileThreads threads).
struct WorkgroupTileShape {
  int64_t bm, bn, rm, rn;
};

/// What limits the choice (WorkgroupTileOptions' fields of the same names).
struct WorkgroupTilingLimits {
  /// Blocks the tiles should give at least (the multiprocessors to fill).
  int64_t minBlocks = 132;
  /// Outputs a thread may compute (at least 4).
  int64_t maxThreadOutputs = 16;
  /// Parts a deep reduction may be split into (a power of two; 1: never).
  int64_t maxSplits = 1;
};

/// A tile shape and the number of parts its reduction is split into.
struct WorkgroupTiling {
  WorkgroupTileShape shape;
  int64_t splits = 1;
};

/// Blocks of `shape` over an `m` x `n` product (one part of the reduction).
int64_t getWorkgroupTileBlocks(int64_t m, int64_t n,
                               const WorkgroupTileShape &shape);

/// The tiling of an `m` x `n` product (M: the rows the blocks split by BM,
/// the operand independent of the pixels; N: the rest) with a reduction of
/// `sizeK` iterations:
/// - the shape: the one with the least padding among those of at most
///   min(16, maxThreadOutputs) outputs per thread giving at least minBlocks
///   blocks (larger thread tiles on a tie), else the one with the most
///   blocks; then an 8 x 4, 4 x 8 or 8 x 8 thread tile where it is
///   predicted faster (fewer issue slots per output, at most 5% more
///   padding, enough blocks to go round);
/// - split-K: where that shape leaves multiprocessors idle (fewer than
///   minBlocks blocks) or runs 2 x 2 thread tiles on a deep reduction (at
///   least 64 steps of kWorkgroupTileK, a multiple of it), the fewest parts
///   (a power of two up to maxSplits dividing the steps, 16 steps or more
///   each) whose blocks, a part each, fill minBlocks with thread tiles of
///   more than 4 outputs, else (where the unsplit shape gives fewer than
///   minBlocks blocks) with any, padding the product by at most a quarter
///   (or 5% more than the unsplit shape).
WorkgroupTiling chooseWorkgroupTiling(int64_t m, int64_t n, int64_t sizeK,
                                      const WorkgroupTilingLimits &limits);

/// The fraction of the block slots `tiling` of an `m` x `n` product fills
/// on `units` multiprocessors, one block each per wave: every block runs
/// 1 / splits of the reduction, so
/// m·n·splits / (waves · units · BM · BN) with
/// waves = ⌈blocks · splits / units⌉ (1 for a non-positive argument).
double getWorkgroupTilingUtilization(int64_t m, int64_t n,
                                     const WorkgroupTiling &tiling,
                                     int64_t units);

} // namespace gpuopt
} // namespace mlir

#endif // GPUOPT_ANALYSIS_WORKGROUPTILING_H
