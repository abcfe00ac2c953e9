//===- GpuKernelsToHost.cpp - GPU kernels as host functions of a thread ---===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// Implements --convert-gpu-kernels-to-host: every gpu.func kernel of a
// gpu.module becomes a func.func that runs one thread of it, given the block
// id, thread id, block size and grid size as leading index arguments. Only
// kernels whose threads cannot communicate are accepted (no barriers,
// shuffles or workgroup memory), so running the threads one after another,
// in any order, computes what the GPU computes.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Conversion/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir {
namespace gpuopt {
#define GEN_PASS_DEF_CONVERTGPUKERNELSTOHOSTPASS
#include "gpuopt/Conversion/Passes.h.inc"
} // namespace gpuopt
} // namespace mlir

using namespace mlir;

namespace {

/// The leading index arguments of a host kernel, in order: block id, thread
/// id, block size, grid size, each (x, y, z).
enum HostKernelArg : unsigned {
  kBlockId = 0,
  kThreadId = 3,
  kBlockDim = 6,
  kGridDim = 9,
  kNumIdArgs = 12
};

/// Whether `type` (or, for a memref, its memory space) can live in host
/// memory shared by every thread.
bool isHostType(Type type) {
  auto memref = dyn_cast<BaseMemRefType>(type);
  return !memref || !memref.getMemorySpace();
}

/// Checks that `op`, inside a kernel, runs the same on the host when the
/// threads run one at a time; emits a located error otherwise.
LogicalResult checkHostOp(Operation *op) {
  for (Type t :
       llvm::concat<const Type>(op->getOperandTypes(), op->getResultTypes()))
    if (!isHostType(t))
      return op->emitOpError("uses ")
             << t
             << " in a non-default memory space (workgroup or private "
                "memory), which the host emulation does not provide";
  if (isa<gpu::BlockIdOp, gpu::ThreadIdOp, gpu::BlockDimOp, gpu::GridDimOp,
          gpu::GlobalIdOp, gpu::ReturnOp>(op))
    return success();
  if (isa<gpu::GPUDialect>(op->getDialect()))
    return op->emitOpError("cannot run on the host emulation: only "
                           "independent threads are emulated (no barriers, "
                           "shuffles or other GPU operations)");
  if (isa<arith::ArithDialect, math::MathDialect, memref::MemRefDialect,
          scf::SCFDialect, cf::ControlFlowDialect, affine::AffineDialect,
          index::IndexDialect, ub::UBDialect>(op->getDialect()))
    return success();
  return op->emitOpError("cannot run on the host emulation (ops of the ")
         << op->getDialect()->getNamespace() << " dialect are not emulated)";
}

/// Replaces `kernel` by a host function of one thread, inserted before
/// `module`'s gpu.module `at`.
LogicalResult convertKernel(gpu::GPUFuncOp kernel, OpBuilder &builder) {
  if (kernel.getNumWorkgroupAttributions() ||
      kernel.getNumPrivateAttributions())
    return kernel.emitOpError("has workgroup or private memory "
                              "attributions, which the host emulation does "
                              "not provide");
  for (Type t : kernel.getArgumentTypes())
    if (!isa<MemRefType>(t) || !isHostType(t))
      return kernel.emitOpError("takes an argument of type ")
             << t << "; the host emulation passes memrefs in host memory";
  WalkResult checked = kernel.getBody().walk([](Operation *op) {
    return failed(checkHostOp(op)) ? WalkResult::interrupt()
                                   : WalkResult::advance();
  });
  if (checked.wasInterrupted())
    return failure();

  MLIRContext *ctx = kernel.getContext();
  Location loc = kernel.getLoc();
  SmallVector<Type> inputs(kNumIdArgs, builder.getIndexType());
  llvm::append_range(inputs, kernel.getArgumentTypes());
  auto fn = func::FuncOp::create(builder, loc, kernel.getName(),
                                 FunctionType::get(ctx, inputs, {}));
  fn->setAttr("gpuopt.host_kernel", UnitAttr::get(ctx));
  fn.getBody().takeBody(kernel.getBody());
  Block &entry = fn.getBody().front();
  SmallVector<Value> ids;
  for (unsigned i = 0; i < kNumIdArgs; ++i)
    ids.push_back(entry.insertArgument(i, builder.getIndexType(), loc));

  auto idArg = [&](unsigned base, gpu::Dimension dim) {
    return ids[base + static_cast<unsigned>(dim)];
  };
  SmallVector<Operation *> gpuOps;
  fn.getBody().walk([&](Operation *op) {
    if (isa<gpu::GPUDialect>(op->getDialect()))
      gpuOps.push_back(op);
  });
  for (Operation *op : gpuOps) {
    OpBuilder b(op);
    Value replacement;
    if (auto id = dyn_cast<gpu::BlockIdOp>(op)) {
      replacement = idArg(kBlockId, id.getDimension());
    } else if (auto id = dyn_cast<gpu::ThreadIdOp>(op)) {
      replacement = idArg(kThreadId, id.getDimension());
    } else if (auto dim = dyn_cast<gpu::BlockDimOp>(op)) {
      replacement = idArg(kBlockDim, dim.getDimension());
    } else if (auto dim = dyn_cast<gpu::GridDimOp>(op)) {
      replacement = idArg(kGridDim, dim.getDimension());
    } else if (auto id = dyn_cast<gpu::GlobalIdOp>(op)) {
      gpu::Dimension d = id.getDimension();
      Value scaled = arith::MulIOp::create(b, op->getLoc(), idArg(kBlockId, d),
                                           idArg(kBlockDim, d));
      replacement =
          arith::AddIOp::create(b, op->getLoc(), scaled, idArg(kThreadId, d));
    } else if (auto ret = dyn_cast<gpu::ReturnOp>(op)) {
      func::ReturnOp::create(b, ret.getLoc(), ret.getOperands());
      ret.erase();
      continue;
    } else {
      return op->emitOpError("is not emulated"); // checkHostOp refused it
    }
    op->getResult(0).replaceAllUsesWith(replacement);
    op->erase();
  }
  kernel.erase();
  return success();
}

struct ConvertGpuKernelsToHostPass
    : public gpuopt::impl::ConvertGpuKernelsToHostPassBase<
          ConvertGpuKernelsToHostPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    WalkResult launched = module.walk([](gpu::LaunchFuncOp launch) {
      launch.emitOpError("launches a kernel of the module: "
                         "--convert-gpu-kernels-to-host takes a copy of the "
                         "kernels that nothing launches");
      return WalkResult::interrupt();
    });
    if (launched.wasInterrupted())
      return signalPassFailure();
    SmallVector<gpu::GPUModuleOp> gpuModules(module.getOps<gpu::GPUModuleOp>());
    for (gpu::GPUModuleOp gpuModule : gpuModules) {
      OpBuilder builder(gpuModule);
      for (Operation &op :
           llvm::make_early_inc_range(gpuModule.getBody()->getOperations())) {
        if (auto kernel = dyn_cast<gpu::GPUFuncOp>(op)) {
          if (!kernel.isKernel()) {
            kernel.emitOpError("is not a kernel; the host emulation converts "
                               "kernels only");
            return signalPassFailure();
          }
          if (module.lookupSymbol(kernel.getName())) {
            kernel.emitOpError("has the name of a symbol of the module");
            return signalPassFailure();
          }
          if (failed(convertKernel(kernel, builder)))
            return signalPassFailure();
          ++numKernels;
          continue;
        }
        if (auto global = dyn_cast<memref::GlobalOp>(op)) {
          if (!isHostType(global.getType())) {
            global.emitOpError("is in a non-default memory space, which the "
                               "host emulation does not provide");
            return signalPassFailure();
          }
          if (module.lookupSymbol(global.getSymName())) {
            global.emitOpError("has the name of a symbol of the module");
            return signalPassFailure();
          }
          global->moveBefore(gpuModule);
          continue;
        }
        op.emitOpError("in a gpu.module cannot run on the host emulation");
        return signalPassFailure();
      }
      gpuModule.erase();
    }
    module->removeAttr(gpu::GPUDialect::getContainerModuleAttrName());
  }
};

} // namespace
