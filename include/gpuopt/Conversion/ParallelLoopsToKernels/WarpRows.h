//===- WarpRows.h - row reductions mapped to warp lanes ---------*- C++ -*-===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// The warp mapping of --convert-parallel-loops-to-kernels (`warp-rows`): a
// row kernel after row fusion (a LayerNorm's statistics and normalisation)
// becomes a loop over the lanes of warps, several lanes per row.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_CONVERSION_PARALLELLOOPSTOKERNELS_WARPROWS_H
#define GPUOPT_CONVERSION_PARALLELLOOPSTOKERNELS_WARPROWS_H

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Support/LLVM.h"

namespace mlir {
namespace gpuopt {

/// Rewrites `loop`, one iteration per row whose body is a sequence of
/// `scf.for` loops over the row (at least one sum into a per-row element, and
/// after it a loop writing one element per iteration that reads the sums),
/// into a one-dimensional `scf.parallel` over the threads of whole warps:
/// `lanesPerRow` lanes (a power of two up to 32; 0: 32 when the loops' first
/// load runs along the innermost dimension longer than 1, else 4, so that
/// the 8 rows of a warp read 32 contiguous bytes) share a row, each striding
/// the row's loops by `lanesPerRow`; the partial sums stay in registers and
/// meet in a `gpu.shuffle xor` butterfly, after which every lane holds the
/// row's sum.
/// Rows past the end get their last row's indices and loops that do not run,
/// so that every lane of a warp reaches every shuffle. Per-row results are
/// stored once, by the row's first lane, unless the buffer is a local
/// allocation nothing outside the loop uses. Expects a warp-aligned block
/// size. Returns the new loop, or failure (IR unchanged) when `loop` is not
/// such a row kernel.
FailureOr<scf::ParallelOp> mapRowReductionsToWarps(scf::ParallelOp loop,
                                                   int64_t lanesPerRow);

} // namespace gpuopt
} // namespace mlir

#endif // GPUOPT_CONVERSION_PARALLELLOOPSTOKERNELS_WARPROWS_H
