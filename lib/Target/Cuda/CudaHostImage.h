//===- CudaHostImage.h - host build of the CUDA kernels ---------*- C++ -*-===//
//-*-===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// The HostSo image of a CUDA artifact (Artifact.fbs): the kernels of the
// gpu.module, before NVVM, built for the host CPU so that the CUDA emulator
// (runtime/include/gpuopt/Runtime/CudaEmulator.h) runs the artifact's own
// plan without a GPU. Each kernel K gets the exported entry point
//
//   void gpuopt_host_K(const int64_t ids[12], void *const *args);
//
// which runs one thread: ids are the block id, thread id, block size and
// grid size (x, y, z each), args the kernel's buffers in order, the
// violation record and the block's workgroup memory; beside it,
// gpuopt_hostinfo_K (the workgroup bytes, whether the threads synchronize)
// and, once per image, gpuopt_host_hooks, the emulator's barrier and shuffle
// (runtime/include/gpuopt/Runtime/CudaArtifact.h).
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_LIB_TARGET_CUDA_CUDAHOSTIMAGE_H
#define GPUOPT_LIB_TARGET_CUDA_CUDAHOSTIMAGE_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Support/LLVM.h"

#include <string>

namespace mlir {
namespace gpuopt {

/// Builds the shared object of `kernels` (left unchanged: a copy is
/// lowered) exporting the entry point of each of `names`. `chip` receives
/// the image's chip, "host-<arch>" (host-x86_64). Failures are diagnostics
/// located at the kernel or the gpu.module.
FailureOr<std::string> buildCudaHostImage(gpu::GPUModuleOp kernels,
                                          ArrayRef<std::string> names,
                                          std::string &chip);

} // namespace gpuopt
} // namespace mlir

#endif // GPUOPT_LIB_TARGET_CUDA_CUDAHOSTIMAGE_H
