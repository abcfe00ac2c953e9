//===- CudaTarget.h - compile a seg graph for NVIDIA GPUs -------*- C++ -*-===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// `gpuopt-compile --target=cuda`: lowers a seg module with the NVPTX pipeline
// (--gpuopt-gpu-lowering) and writes one artifact file that the CUDA runtime
// (runtime/cuda, no MLIR) loads: the kernel image (cubin or PTX) and a
// launch plan extracted from the host function. The file format is
// documented in runtime/include/gpuopt/Runtime/CudaArtifact.h.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_TARGET_CUDA_CUDATARGET_H
#define GPUOPT_TARGET_CUDA_CUDATARGET_H

#include "gpuopt/Pipelines/GpuPipeline.h"

#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace mlir {
namespace gpuopt {

/// What compileForCuda does.
struct CudaCompileOptions {
  /// The function to compile.
  std::string entry = "forward";
  /// A textual pass pipeline run first (e.g. "gpuopt-optimize"); empty for
  /// none.
  std::string pipeline;
  /// Where the artifact goes.
  std::string outputPath;
  /// What the NVPTX back end generates (defaults: CudaTargetOptions).
  CudaTargetOptions target;
  /// Also embed the kernels built for the host CPU (a HostSo image, run by
  /// the CUDA emulator; docs/CUDABackend.md, "Emulation on the host").
  bool hostImage = true;
  /// When set, the gpu.module @kernels the host image is built from (after
  /// outlining and deduplication) is written to this file as MLIR.
  std::string writeKernels;
  /// When set, the host image is built from this file's gpu.module @kernels
  /// instead of the compiled one: a debugging aid (emulate hand-edited
  /// kernels with this compile's plan), e.g. to see that a bug in a kernel
  /// is caught by the emulator.
  std::string hostKernels;
};

/// Compiles `module` (consumed: it is lowered in place) into a CUDA artifact
/// at `options.outputPath`. Failures are diagnostics located at the module
/// or the offending op (a host op the launch plan cannot express included).
LogicalResult compileForCuda(ModuleOp module,
                             const CudaCompileOptions &options);

/// Registers `gpuopt-compile --target=cuda` (Target/TargetRegistry.h).
void registerCudaTarget();

} // namespace gpuopt
} // namespace mlir

#endif // GPUOPT_TARGET_CUDA_CUDATARGET_H
