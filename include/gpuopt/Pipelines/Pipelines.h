//===- Pipelines.h - gpuopt pass pipelines ----------------------*- C++ -*-===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_PIPELINES_PIPELINES_H
#define GPUOPT_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"

#include "llvm/Support/Error.h"

#include <functional>

namespace llvm {
class Module;
class TargetMachine;
} // namespace llvm

namespace mlir {
namespace gpuopt {

/// Options of --gpuopt-optimize.
struct OptimizeOptions : public PassPipelineOptions<OptimizeOptions> {
  Option<bool> fuseRoll{*this, "fuse-roll",
                        llvm::cl::desc("Fold roll groups into conv/linear "
                                       "addressing (--fuse-roll)"),
                        llvm::cl::init(true)};
  Option<bool> deformConv{
      *this, "deform-conv",
      llvm::cl::desc("Express roll+conv as deformable convolutions "
                     "(--roll-to-deform-conv) instead of --fuse-roll"),
      llvm::cl::init(false)};
  Option<bool> simplifyTokenLayout{
      *this, "simplify-token-layout",
      llvm::cl::desc("Turn token linears into 1x1 convolutions and cancel "
                     "layout round trips (--simplify-token-layout)"),
      llvm::cl::init(true)};
  Option<bool> report{
      *this, "report",
      llvm::cl::desc("Have the passes emit their statistics as remarks"),
      llvm::cl::init(false)};
  Option<bool> fuseConvBnRelu{
      *this, "fuse-conv-bn-relu",
      llvm::cl::desc("Fold BatchNorm and fuse activations/residuals into "
                     "convolutions (--fuse-conv-bn-relu)"),
      llvm::cl::init(true)};
};

/// Adds gpuopt's graph optimizations, in order, to a module-level `pm`:
/// --fuse-roll (or --roll-to-deform-conv), --simplify-token-layout,
/// --fuse-conv-bn-relu on every function, then canonicalization and CSE.
void buildOptimizePipeline(OpPassManager &pm, const OptimizeOptions &options);

/// Options of --gpuopt-cpu-lowering.
struct CpuLoweringOptions : public PassPipelineOptions<CpuLoweringOptions> {
  Option<bool> kernels{
      *this, "kernels",
      llvm::cl::desc("Lower convolutions and linear layers to gpuopt's "
                     "vectorised CPU kernels (--convert-seg-to-cpu-kernels); "
                     "off: everything through linalg loops"),
      llvm::cl::init(true)};
};

/// Adds the CPU lowering to a module-level `pm`: --convert-seg-to-cpu-kernels
/// (unless options.kernels is false), --convert-seg-to-linalg,
/// bufferization (results become out-parameters), linalg to loops, and the
/// conversions to the LLVM dialect. Every function gets a C interface
/// (`_mlir_ciface_<name>`) taking pointers to memref descriptors. The passes
/// are created directly (no pass registration needed); cannot fail today,
/// the result is for options that may.
LogicalResult buildCpuLoweringPipeline(OpPassManager &pm,
                                       const CpuLoweringOptions &options = {});

/// Returns LLVM's -O3 module pipeline tuned for `targetMachine` (loop and SLP
/// vectorization and unrolling on, as mlir::makeOptimizingTransformer sets
/// them), which, unlike that one, honours `optnone`: the CPU lowering leaves
/// a graph's glue function optnone (--outline-linalg-ops) because LLVM's
/// function passes are quadratic in the size of its one block.
std::function<llvm::Error(llvm::Module *)>
makeLlvmOptimizer(llvm::TargetMachine *targetMachine);

/// The bufferization both lowerings share: One-Shot Bufferize across function
/// boundaries (identity layouts; `copyBeforeWrite` for the CPU lowering),
/// unique return buffers, results as out-parameters with static allocations
/// hoisted to the caller.
void addBufferizationPasses(OpPassManager &pm, bool copyBeforeWrite);

/// What a pipeline registered with registerCheckedPipeline reports an error
/// through: the pass-pipeline parser's handler, which prints the message
/// (gpuopt-opt then exits non-zero) and returns failure.
using PipelineErrorHandler = function_ref<LogicalResult(const Twine &)>;

/// Registers the pass pipeline `arg`, like mlir::PassPipelineRegistration,
/// except that `build` returns a LogicalResult that is not discarded: a
/// failure, with the message `build` passes to its error handler, fails the
/// pipeline parse (an option that does not parse fails it too).
template <typename Options>
void registerCheckedPipeline(
    StringRef arg, StringRef description,
    std::function<LogicalResult(OpPassManager &, const Options &,
                                PipelineErrorHandler)>
        build) {
  registerPassPipeline(
      arg, description,
      [build](OpPassManager &pm, StringRef text,
              PipelineErrorHandler error) -> LogicalResult {
        Options options;
        if (failed(options.parseFromString(text)))
          return failure();
        return build(pm, options, error);
      },
      [](function_ref<void(const detail::PassOptions &)> optHandler) {
        optHandler(Options());
      });
}

/// Registers --gpuopt-optimize and --gpuopt-cpu-lowering.
void registerPipelines();

} // namespace gpuopt
} // namespace mlir

#endif // GPUOPT_PIPELINES_PIPELINES_H
