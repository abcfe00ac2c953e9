//===- MarkKernelArgumentsNoAlias.cpp - noalias kernel arguments ----------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// Implements --mark-kernel-arguments-noalias: llvm.noalias (and
// llvm.readonly for arguments never written) on the memref arguments of
// gpu.func kernels, for the NVVM lowering. Sound because the CUDA runtime's
// plan checks refuse a launch whose written argument overlaps another
// argument, unless both are the same buffer and both are in place
// (Passes.td, docs/CUDABackend.md).
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir {
namespace gpuopt {
#define GEN_PASS_DEF_MARKKERNELARGUMENTSNOALIASPASS
#include "gpuopt/Conversion/Passes.h.inc"
} // namespace gpuopt
} // namespace mlir

using namespace mlir;

namespace {

/// Whether a use of `v` (or of a view of it) may read and may write the
/// memory; any use this does not know counts as both.
void classify(Value v, bool &read, bool &write) {
  for (OpOperand &use : v.getUses()) {
    Operation *user = use.getOwner();
    if (isa<memref::LoadOp, vector::LoadOp>(user)) {
      read = true;
    } else if (auto store = dyn_cast<memref::StoreOp>(user)) {
      if (use.get() == store.getMemRef())
        write = true;
      else
        read = write = true; // the memref itself stored: unknown
    } else if (auto copy = dyn_cast<nvgpu::DeviceAsyncCopyOp>(user)) {
      (use.get() == copy.getSrc() ? read : write) = true;
    } else if (isa<memref::DimOp>(user)) {
      continue;
    } else if (isa<ViewLikeOpInterface, memref::CastOp>(user)) {
      for (Value r : user->getResults())
        classify(r, read, write);
    } else {
      read = write = true;
    }
  }
}

struct MarkKernelArgumentsNoAliasPass
    : public gpuopt::impl::MarkKernelArgumentsNoAliasPassBase<
          MarkKernelArgumentsNoAliasPass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    StringRef noalias = LLVM::LLVMDialect::getNoAliasAttrName();
    StringRef readonly = LLVM::LLVMDialect::getReadonlyAttrName();
    for (auto kernel : getOperation().getOps<gpu::GPUFuncOp>()) {
      if (!kernel.isKernel())
        continue;
      SmallVector<unsigned> memrefs, inPlace;
      SmallVector<bool> written(kernel.getNumArguments(), false);
      // The function's arguments only: the body's block arguments after them
      // are its workgroup and private attributions, which are no pointers
      // the launch passes.
      for (unsigned i = 0, e = kernel.getNumArguments(); i < e; ++i) {
        BlockArgument arg = kernel.getArgument(i);
        if (!isa<MemRefType>(arg.getType()))
          continue;
        bool read = false, write = false;
        classify(arg, read, write);
        memrefs.push_back(arg.getArgNumber());
        written[arg.getArgNumber()] = write;
        if (read && write)
          inPlace.push_back(arg.getArgNumber());
      }
      for (unsigned i : memrefs) {
        // Two arguments in place may be one buffer (the plan allows it).
        if (inPlace.size() > 1 && llvm::is_contained(inPlace, i))
          continue;
        kernel.setArgAttr(i, noalias, UnitAttr::get(ctx));
        if (!written[i])
          kernel.setArgAttr(i, readonly, UnitAttr::get(ctx));
      }
    }
  }
};

} // namespace
