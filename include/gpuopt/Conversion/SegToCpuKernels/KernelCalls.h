//===- KernelCalls.h - seg ops as CpuKernelAbi calls -----------*- C++ -*-===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// The one builder of calls of the routines of CpuKernelAbi.def on
// tensors-made-buffers, shared by --convert-seg-to-cpu-kernels (the CPU path
// links the kernels) and --convert-seg-to-cuda-library (the CUDA target
// turns each call into a Library step of its launch plan). Every call is
// checked against the .def table.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_CONVERSION_SEGTOCPUKERNELS_KERNELCALLS_H
#define GPUOPT_CONVERSION_SEGTOCPUKERNELS_KERNELCALLS_H

#include "gpuopt/Conversion/SegToCpuKernels/KernelCallRoutine.h"
#include "gpuopt/Dialect/Seg/IR/SegOps.h"

#include "mlir/IR/BuiltinOps.h"

namespace mlir {
namespace gpuopt {

/// How the calls are built.
struct KernelCallOptions {
  /// Pass every weight operand as a buffer of identity layout: bufferization
  /// copies a weight whose buffer is a strided view into a dense one (the
  /// CUDA libraries take packed weights).
  bool contiguousWeights = false;
  /// Pass a shift whose offsets are all zero as no shift (empty operands),
  /// which it is in both modes.
  bool dropZeroShifts = false;
};

/// Emits an error on, and fails for, a symbol of `module` named like a
/// routine of CpuKernelAbi.def that the call builder did not declare: it
/// would be called with the routine's arguments.
LogicalResult checkReservedKernelSymbols(ModuleOp module);

/// Each rewrites the op into a call of its routine (replacing its result)
/// and succeeds, or fails leaving it untouched where the routine does not
/// cover it (dynamic shapes, non-f32 types, geometries outside the routine's
/// domain, scratch beyond the per-tensor limit).
LogicalResult lowerToKernelCall(ModuleOp module, seg::Conv2dOp op,
                                const KernelCallOptions &options = {});
LogicalResult lowerToKernelCall(ModuleOp module, seg::FusedConv2dOp op,
                                const KernelCallOptions &options = {});
LogicalResult lowerToKernelCall(ModuleOp module, seg::ConvTranspose2dOp op,
                                const KernelCallOptions &options = {});
LogicalResult lowerToKernelCall(ModuleOp module, seg::LinearOp op,
                                const KernelCallOptions &options = {});
LogicalResult lowerToKernelCall(ModuleOp module, seg::UpsampleBilinearOp op,
                                const KernelCallOptions &options = {});
LogicalResult lowerToKernelCall(ModuleOp module, seg::DeformConv2dOp op,
                                const KernelCallOptions &options = {});

} // namespace gpuopt
} // namespace mlir

#endif // GPUOPT_CONVERSION_SEGTOCPUKERNELS_KERNELCALLS_H
