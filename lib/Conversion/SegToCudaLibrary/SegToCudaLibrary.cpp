//===- SegToCudaLibrary.cpp - the --convert-seg-to-cuda-library pass ------===//
//
// Part of the gpuopt project.
//
// Rewrites the convolutions and linear layers of the CUDA library route
// (Passes.td: which are eligible and why the others are not) into calls of
// their CpuKernelAbi.def routines, through the call builder of
// KernelCalls.h; the CUDA target makes each call a Library step.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Conversion/Passes.h"
#include "gpuopt/Conversion/SegToCpuKernels/KernelCalls.h"

#include "llvm/ADT/TypeSwitch.h"

namespace mlir {
namespace gpuopt {
#define GEN_PASS_DEF_CONVERTSEGTOCUDALIBRARYPASS
#include "gpuopt/Conversion/Passes.h.inc"
} // namespace gpuopt
} // namespace mlir

using namespace mlir;
using namespace mlir::gpuopt;

namespace {

/// Whether the CUDA runtime's subset of conv2d covers `op`: no shift, and
/// activation none (residual allowed) or relu (no residual).
LogicalResult checkLibraryConv(seg::FusedConv2dOp op) {
  auto isZero = [](ArrayRef<int64_t> a) {
    return llvm::all_of(a, [](int64_t v) { return v == 0; });
  };
  if (!isZero(op.getOffsetsH()) || !isZero(op.getOffsetsW()) ||
      op.getFrameShiftAttr())
    return failure();
  seg::Activation act = op.getActivation();
  if (act == seg::Activation::None)
    return success();
  return success(act == seg::Activation::Relu && !op.getResidual());
}

struct ConvertSegToCudaLibraryPass
    : mlir::gpuopt::impl::ConvertSegToCudaLibraryPassBase<
          ConvertSegToCudaLibraryPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (failed(checkReservedKernelSymbols(module)))
      return signalPassFailure();
    SmallVector<Operation *> ops;
    module.walk([&](Operation *op) {
      if (isa<seg::Conv2dOp, seg::FusedConv2dOp, seg::ConvTranspose2dOp,
              seg::LinearOp>(op))
        ops.push_back(op);
    });
    KernelCallOptions options;
    options.contiguousWeights = true;
    options.dropZeroShifts = true;
    for (Operation *op : ops) {
      LogicalResult lowered =
          TypeSwitch<Operation *, LogicalResult>(op)
              .Case([&](seg::FusedConv2dOp fused) {
                if (failed(checkLibraryConv(fused)))
                  return failure();
                return lowerToKernelCall(module, fused, options);
              })
              .Case<seg::Conv2dOp, seg::ConvTranspose2dOp, seg::LinearOp>(
                  [&](auto typed) {
                    return lowerToKernelCall(module, typed, options);
                  })
              .Default([](Operation *) { return failure(); });
      // The others stay for --convert-seg-to-linalg.
      if (succeeded(lowered))
        ++numLibraryCalls;
      else
        ++numGenerated;
    }
  }
};

} // namespace
