//===- SegToCudaLibrary.cpp - the --convert-seg-to-cuda-library pass ------===//
//
// Part of the gpuopt project.
//
// Rewrites the convolutions and linear layers of the CUDA library route
// (Passes.td: which are eligible and why the others are not) into calls of
// their CpuKernelAbi.def routines, through the call builder of
// KernelCalls.h; the CUDA target makes each call a Library step. With
// `select=auto` the cost model chooses per op between the library and the
// generated kernel.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Analysis/CostModel.h"
#include "gpuopt/Conversion/Passes.h"
#include "gpuopt/Conversion/SegToCpuKernels/KernelCalls.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"

#include <memory>

namespace mlir {
namespace gpuopt {
#define GEN_PASS_DEF_CONVERTSEGTOCUDALIBRARYPASS
#include "gpuopt/Conversion/Passes.h.inc"
} // namespace gpuopt
} // namespace mlir

using namespace mlir;
using namespace mlir::gpuopt;

namespace {

/// The cost model's choice between the two routes of an eligible op
/// (Passes.td, `select=auto`).
class RouteChooser {
public:
  RouteChooser(ModuleOp module, const DeviceModel &device, StringRef precision,
               const WorkgroupTilingLimits &limits)
      : device(device), model(device, precision) {
    model.setConvRoute(ConvRoute::Auto, limits);
    module.walk([&](func::FuncOp func) {
      if (func.isExternal())
        return;
      analyses.push_back(std::make_unique<SegCostAnalysis>(func));
      for (const OpCost &cost : analyses.back()->getOps())
        costs[cost.op] = &cost;
    });
  }

  /// Whether `op` should be a library call; with `explain`, a remark says
  /// why. Failure (reported) when the device has no peak for the op.
  FailureOr<bool> choose(Operation *op, bool explain) const {
    const OpCost *cost = costs.lookup(op);
    // Computed once at load time (from parameters only): as select=all.
    if (cost && cost->loadTime) {
      if (explain)
        op->emitRemark("library call: computed at load time");
      return true;
    }
    if (!cost || cost->compiled.size() != 1)
      return op->emitOpError("convert-seg-to-cuda-library: the cost model "
                             "has no single kernel for this op");
    if (device.getPeakFlops(model.getPrecision(*cost)) <= 0)
      return op->emitOpError("convert-seg-to-cuda-library: device '")
             << device.id << "' has no peak for '" << model.getPrecision(*cost)
             << "'";
    const KernelCost &k = cost->compiled.front();
    double library = model.predictLibraryCall(*cost, k).split.getSeconds();
    ConvPrediction generatedKernel = model.predictGenerated(*cost, k);
    double generated = generatedKernel.split.getSeconds();
    bool useLibrary = library < generated;
    if (!explain)
      return useLibrary;
    InFlightDiagnostic remark = op->emitRemark();
    remark << llvm::formatv(
        "{0}: predicted {1:F1} us, {2:F1} us as {3} ({4}, {5})",
        useLibrary ? "library call" : "generated kernel",
        (useLibrary ? library : generated) * 1e6,
        (useLibrary ? generated : library) * 1e6,
        useLibrary ? "a generated kernel" : "a library call", device.id,
        model.getPrecision(*cost));
    if (const std::optional<WorkgroupTiling> &t = generatedKernel.tiling) {
      remark << llvm::formatv("; generated: {0} x {1} tiles, {2} x {3} per "
                              "thread",
                              t->shape.bm, t->shape.bn, t->shape.rm,
                              t->shape.rn);
      if (t->splits > 1)
        remark << ", reduction split in " << t->splits << " parts";
    }
    return useLibrary;
  }

private:
  const DeviceModel &device;
  LatencyModel model;
  SmallVector<std::unique_ptr<SegCostAnalysis>> analyses;
  DenseMap<Operation *, const OpCost *> costs;
};

struct ConvertSegToCudaLibraryPass
    : mlir::gpuopt::impl::ConvertSegToCudaLibraryPassBase<
          ConvertSegToCudaLibraryPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Option errors at the first function, as --seg-cost-report's.
    Location loc = module.getLoc();
    if (auto funcs = module.getOps<func::FuncOp>(); !funcs.empty())
      loc = (*funcs.begin()).getLoc();
    auto fail = [&](const Twine &message) {
      emitError(loc) << "convert-seg-to-cuda-library: " << message;
      signalPassFailure();
    };
    if (select != "all" && select != "auto")
      return fail("select must be all or auto, got '" + select + "'");
    if (precision != "fp32" && precision != "tf32")
      return fail("precision must be fp32 or tf32, got '" + precision + "'");
    if (workgroupTileMinBlocks < 1)
      return fail("workgroup-tile-min-blocks must be at least 1, got " +
                  Twine(static_cast<int64_t>(workgroupTileMinBlocks)));
    if (workgroupTileMaxThreadOutputs < 4)
      return fail("workgroup-tile-max-thread-outputs must be at least 4, got " +
                  Twine(static_cast<int64_t>(workgroupTileMaxThreadOutputs)));
    if (workgroupTileSplitK < 1 || !llvm::isPowerOf2_64(workgroupTileSplitK))
      return fail("workgroup-tile-split-k must be a power of two, got " +
                  Twine(static_cast<int64_t>(workgroupTileSplitK)));
    if (failed(checkReservedKernelSymbols(module)))
      return signalPassFailure();
    SmallVector<Operation *> ops;
    module.walk([&](Operation *op) {
      if (isa<seg::Conv2dOp, seg::FusedConv2dOp, seg::ConvTranspose2dOp,
              seg::LinearOp>(op))
        ops.push_back(op);
    });
    // The ops to lower, all chosen before any is rewritten.
    SmallVector<Operation *> chosen;
    std::optional<DeviceModel> deviceModel;
    std::unique_ptr<RouteChooser> chooser;
    if (select == "auto") {
      std::string path =
          devices.empty() ? getDefaultDeviceFile().str() : std::string(devices);
      llvm::Expected<DeviceModel> loaded = loadDeviceModel(path, device);
      if (!loaded)
        return fail(llvm::toString(loaded.takeError()));
      if (loaded->kind != "gpu")
        return fail("device '" + device + "' is a " + loaded->kind +
                    ", not a GPU: it has no library route to predict");
      deviceModel = std::move(*loaded);
      chooser = std::make_unique<RouteChooser>(
          module, *deviceModel, precision,
          WorkgroupTilingLimits{workgroupTileMinBlocks,
                                workgroupTileMaxThreadOutputs,
                                workgroupTileSplitK});
    }
    for (Operation *op : ops) {
      if (!isCudaLibraryEligible(op)) {
        ++numGenerated;
        continue;
      }
      if (chooser) {
        FailureOr<bool> useLibrary = chooser->choose(op, explain);
        if (failed(useLibrary))
          return signalPassFailure();
        if (!*useLibrary) {
          ++numGenerated;
          ++numPredictedFaster;
          continue;
        }
      }
      chosen.push_back(op);
    }
    KernelCallOptions options;
    options.contiguousWeights = true;
    options.dropZeroShifts = true;
    for (Operation *op : chosen) {
      LogicalResult lowered =
          TypeSwitch<Operation *, LogicalResult>(op)
              .Case<seg::FusedConv2dOp, seg::Conv2dOp, seg::ConvTranspose2dOp,
                    seg::LinearOp>([&](auto typed) {
                return lowerToKernelCall(module, typed, options);
              })
              .Default([](Operation *) { return failure(); });
      // What the call builder refuses stays for --convert-seg-to-linalg.
      if (succeeded(lowered))
        ++numLibraryCalls;
      else
        ++numGenerated;
    }
  }
};

} // namespace
