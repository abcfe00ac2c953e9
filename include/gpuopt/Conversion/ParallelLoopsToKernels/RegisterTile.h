//===- RegisterTile.h - several outputs of a reduction per thread -*- C++ -*-=//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// The register tiling of --convert-parallel-loops-to-kernels
// (`register-tile`): a convolution's or linear layer's loop nest computes
// several outputs per iteration, so that an operand they share is loaded
// once for all of them.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_CONVERSION_PARALLELLOOPSTOKERNELS_REGISTERTILE_H
#define GPUOPT_CONVERSION_PARALLELLOOPSTOKERNELS_REGISTERTILE_H

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Support/LLVM.h"

namespace mlir {
namespace gpuopt {

/// Rewrites `loop`, whose body accumulates into an element (a load and a
/// store at indices its enclosing `scf.for` does not change) inside a nest of
/// `scf.for` loops that also loads one operand whose indices do not depend on
/// a parallel index `d` and one whose indices do, so that each iteration
/// computes `tile` consecutive values of `d` (fewer when `d` has fewer):
/// the bodies of those iterations are interleaved op by op, their `scf.for`
/// loops become one loop, and the loads that do not depend on `d` (from a
/// buffer the loop does not write) and pure ops on them are emitted once for
/// all of them. `d` is the outermost such index that is not the innermost
/// one longer than 1 (consecutive threads keep reading consecutive
/// elements), else the innermost. When `tile` does not divide `d`'s trip
/// count the last iteration of `d`'s new range runs the remaining values one
/// after the other with the original body. Returns the new loop, or failure
/// (IR unchanged) when `loop` has no such index or `tile` < 2.
FailureOr<scf::ParallelOp> tileReductionInRegisters(scf::ParallelOp loop,
                                                    int64_t tile);

} // namespace gpuopt
} // namespace mlir

#endif // GPUOPT_CONVERSION_PARALLELLOOPSTOKERNELS_REGISTERTILE_H
