//===- SegToCpuKernels.cpp - the --convert-seg-to-cpu-kernels pass --------===//
//
// Part of the gpuopt project.
//
// Rewrites convolutions and linear layers into calls of the kernels of
// runtime/cpu/CpuKernels.cpp, through the call builder of KernelCalls.h.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Conversion/Passes.h"
#include "gpuopt/Conversion/SegToCpuKernels/KernelCalls.h"

#include "llvm/ADT/TypeSwitch.h"

namespace mlir {
namespace gpuopt {
#define GEN_PASS_DEF_CONVERTSEGTOCPUKERNELSPASS
#include "gpuopt/Conversion/Passes.h.inc"
} // namespace gpuopt
} // namespace mlir

using namespace mlir;
using namespace mlir::gpuopt;

namespace {

struct ConvertSegToCpuKernelsPass
    : mlir::gpuopt::impl::ConvertSegToCpuKernelsPassBase<
          ConvertSegToCpuKernelsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (failed(checkReservedKernelSymbols(module)))
      return signalPassFailure();
    SmallVector<Operation *> ops;
    module.walk([&](Operation *op) {
      if (isa<seg::Conv2dOp, seg::FusedConv2dOp, seg::ConvTranspose2dOp,
              seg::LinearOp, seg::UpsampleBilinearOp, seg::DeformConv2dOp>(op))
        ops.push_back(op);
    });
    // Ops the kernels do not cover stay for --convert-seg-to-linalg.
    for (Operation *op : ops)
      (void)TypeSwitch<Operation *, LogicalResult>(op)
          .Case<seg::Conv2dOp, seg::FusedConv2dOp, seg::ConvTranspose2dOp,
                seg::LinearOp, seg::UpsampleBilinearOp, seg::DeformConv2dOp>(
              [&](auto typed) { return lowerToKernelCall(module, typed); })
          .Default([](Operation *) { return failure(); });
  }
};

} // namespace
