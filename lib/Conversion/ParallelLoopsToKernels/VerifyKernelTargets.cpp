//===- VerifyKernelTargets.cpp - kernels the target chips can run ---------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// Implements --verify-kernel-targets: an op of a gpu.module's kernels that
// one of the module's NVVM targets does not have is an error located at the
// op, naming the chip, before the NVPTX back end would stop with a fatal
// "Cannot select" (TF32 nvgpu.mma.sync and the asynchronous copies,
// cp.async, need sm_80).
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"

namespace mlir {
namespace gpuopt {
#define GEN_PASS_DEF_VERIFYKERNELTARGETSPASS
#include "gpuopt/Conversion/Passes.h.inc"
} // namespace gpuopt
} // namespace mlir

using namespace mlir;

namespace {

/// The NN of chip "sm_NN" or "sm_NNa"; 0 when it is not one.
unsigned smVersion(StringRef chip) {
  unsigned sm = 0;
  if (!chip.consume_front("sm_"))
    return 0;
  chip.consume_back("a");
  if (chip.getAsInteger(10, sm))
    return 0;
  return sm;
}

struct VerifyKernelTargetsPass
    : gpuopt::impl::VerifyKernelTargetsPassBase<VerifyKernelTargetsPass> {
  void runOnOperation() override {
    gpu::GPUModuleOp module = getOperation();
    ArrayAttr targets = module.getTargetsAttr();
    if (!targets)
      return;
    bool failed = false;
    for (Attribute a : targets) {
      auto target = dyn_cast<NVVM::NVVMTargetAttr>(a);
      if (!target)
        continue;
      if (smVersion(target.getChip()) >= 80)
        continue;
      module.walk([&](Operation *op) {
        StringRef what;
        if (isa<nvgpu::MmaSyncOp>(op))
          what = "tensor cores with TF32 and m16n8k* shapes";
        else if (isa<nvgpu::DeviceAsyncCopyOp, nvgpu::DeviceAsyncCreateGroupOp,
                     nvgpu::DeviceAsyncWaitOp>(op))
          what = "cp.async, asynchronous copies to workgroup memory";
        else
          return;
        op->emitOpError("needs sm_80 or newer (")
            << what << "), but the kernels are also built for "
            << target.getChip();
        failed = true;
      });
    }
    if (failed)
      signalPassFailure();
  }
};

} // namespace
