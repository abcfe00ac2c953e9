//===- DeduplicateKernels.cpp - one kernel per distinct body --------------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// Implements --deduplicate-gpu-kernels: kernels of a gpu.module that are
// identical but for their name are merged into the first of them, and every
// gpu.launch_func is pointed at the one kept. A graph repeats its blocks, so
// most of its kernels are copies (the same layer norm on other buffers); the
// NVPTX back end and ptxas then compile each distinct kernel once. The
// merge ignores locations: before it, each launch's location is fused with
// those of its kernel's body, so that every launch still records the source
// ops it computes (the CUDA launch plan's step sources).
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/OperationSupport.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir {
namespace gpuopt {
#define GEN_PASS_DEF_DEDUPLICATEGPUKERNELSPASS
#include "gpuopt/Conversion/Passes.h.inc"
} // namespace gpuopt
} // namespace mlir

using namespace mlir;

namespace {

/// The kernel's generic form without its name: equal keys, equal kernels.
/// Never with locations (--mlir-print-debuginfo sets the default flags).
std::string bodyKey(gpu::GPUFuncOp kernel) {
  std::string text;
  llvm::raw_string_ostream os(text);
  kernel->print(
      os,
      OpPrintingFlags().printGenericOpForm().useLocalScope().enableDebugInfo(
          false));
  std::string quoted = ("\"" + kernel.getName() + "\"").str();
  if (size_t at = text.find(quoted); at != std::string::npos)
    text.erase(at, quoted.size());
  return text;
}

struct DeduplicateGpuKernelsPass
    : public gpuopt::impl::DeduplicateGpuKernelsPassBase<
          DeduplicateGpuKernelsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // (module, kernel) -> the locations of the kernel's body.
    llvm::DenseMap<SymbolRefAttr, Location> bodyLocs;
    for (auto gpuModule : module.getOps<gpu::GPUModuleOp>())
      for (auto kernel : gpuModule.getOps<gpu::GPUFuncOp>()) {
        llvm::SetVector<Location> locs;
        kernel.walk([&](Operation *op) { locs.insert(op->getLoc()); });
        bodyLocs.try_emplace(
            SymbolRefAttr::get(gpuModule.getNameAttr(),
                               {FlatSymbolRefAttr::get(kernel.getNameAttr())}),
            FusedLoc::get(&getContext(), locs.takeVector()));
      }
    module.walk([&](gpu::LaunchFuncOp launch) {
      auto it = bodyLocs.find(launch.getKernel());
      if (it != bodyLocs.end())
        launch->setLoc(
            FusedLoc::get(&getContext(), {launch->getLoc(), it->second}));
    });
    // (module, duplicate kernel) -> kernel kept.
    llvm::DenseMap<SymbolRefAttr, SymbolRefAttr> replacement;
    SmallVector<Operation *> duplicates;
    for (auto gpuModule : module.getOps<gpu::GPUModuleOp>()) {
      llvm::StringMap<StringAttr> kept;
      for (auto kernel : gpuModule.getOps<gpu::GPUFuncOp>()) {
        if (!kernel.isKernel())
          continue;
        auto [it, inserted] =
            kept.try_emplace(bodyKey(kernel), kernel.getNameAttr());
        if (inserted)
          continue;
        auto ref = [&](StringAttr name) {
          return SymbolRefAttr::get(gpuModule.getNameAttr(),
                                    {FlatSymbolRefAttr::get(name)});
        };
        replacement[ref(kernel.getNameAttr())] = ref(it->second);
        duplicates.push_back(kernel);
      }
    }
    if (duplicates.empty())
      return;
    module.walk([&](gpu::LaunchFuncOp launch) {
      if (SymbolRefAttr kept = replacement.lookup(launch.getKernel()))
        launch.setKernelAttr(kept);
    });
    for (Operation *kernel : duplicates)
      kernel->erase();
    numMerged += duplicates.size();
  }
};

} // namespace
