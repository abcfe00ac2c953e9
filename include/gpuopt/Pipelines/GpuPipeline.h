//===- GpuPipeline.h - the NVPTX lowering pipeline --------------*- C++ -*-===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_PIPELINES_GPUPIPELINE_H
#define GPUOPT_PIPELINES_GPUPIPELINE_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir {
namespace gpuopt {

/// Options of --gpuopt-gpu-lowering.
struct GpuLoweringOptions : public PassPipelineOptions<GpuLoweringOptions> {
  Option<std::string> chip{
      *this, "chip",
      llvm::cl::desc("NVPTX target chips, comma-separated (sm_90,sm_86): "
                     "one kernel object per chip"),
      llvm::cl::init("sm_90")};
  Option<std::string> features{
      *this, "features",
      llvm::cl::desc("NVPTX target features; sm_90 needs +ptx80 or newer"),
      llvm::cl::init("+ptx80")};
  Option<std::string> format{
      *this, "format",
      llvm::cl::desc("Kernel object format: bin (cubin, through ptxas), isa "
                     "(PTX), fatbin (cubin and PTX) or llvm"),
      llvm::cl::init("bin")};
  Option<std::string> toolkit{
      *this, "toolkit",
      llvm::cl::desc("CUDA toolkit root holding bin/ptxas and libdevice"),
      llvm::cl::init("/usr/local/cuda")};
  Option<int64_t> blockSize{
      *this, "block-size",
      llvm::cl::desc("Threads per block of the elementwise-mapped kernels"),
      llvm::cl::init(256)};
  Option<bool> serialize{
      *this, "serialize",
      llvm::cl::desc("Serialize the kernels into a gpu.binary; false stops "
                     "at the NVVM/LLVM dialects, for inspection"),
      llvm::cl::init(true)};
  Option<int> optLevel{*this, "opt-level",
                       llvm::cl::desc("LLVM optimization level of the kernels"),
                       llvm::cl::init(3)};
};

/// Adds the first half of the NVPTX lowering to a module-level `pm`:
/// --convert-seg-to-linalg, elementwise fusion, bufferization (results become
/// out-parameters), linalg to parallel loops and
/// --convert-parallel-loops-to-kernels. The host functions then only allocate
/// buffers and launch the kernels of one gpu.module.
LogicalResult buildGpuKernelPipeline(OpPassManager &pm,
                                     const GpuLoweringOptions &options);

/// The chips of options.chip: comma-separated, blanks trimmed, empty entries
/// dropped.
SmallVector<std::string> splitGpuChips(const GpuLoweringOptions &options);

/// Adds the second half: attaches the NVVM target, lowers the gpu.module to
/// the NVVM/LLVM dialects (kernel memrefs as bare pointers) and, with
/// options.serialize, serializes it into a gpu.binary in options.format.
/// Host functions stay at memref level. Fails when options.chip names no
/// chip.
LogicalResult buildGpuBinaryPipeline(OpPassManager &pm,
                                     const GpuLoweringOptions &options);

/// Registers --gpuopt-gpu-lowering (both halves).
void registerGpuPipelines();

} // namespace gpuopt
} // namespace mlir

#endif // GPUOPT_PIPELINES_GPUPIPELINE_H
