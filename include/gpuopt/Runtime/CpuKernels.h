//===- CpuKernels.h - Kernels called by CPU-compiled gpuopt code -*- C++
//-*-===//
//
// `--convert-seg-to-cpu-kernels` rewrites the contraction-heavy seg ops
// (conv2d, fused_conv2d, conv_transpose2d, linear) into calls to these
// functions; everything else is generated loops. They are C functions taking
// MLIR strided memref descriptors (the `llvm.emit_c_interface` convention:
// `_mlir_ciface_<name>`), linked into the JIT (gpuopt-run --backend=cpu) and
// into every compiled model library (gpuopt-compile --target=cpu). No MLIR.
//
//===----------------------------------------------------------------------===//
#ifndef GPUOPT_RUNTIME_CPUKERNELS_H
#define GPUOPT_RUNTIME_CPUKERNELS_H

#include <cstdint>

namespace gpuopt::runtime {

/// MLIR's ranked strided memref descriptor.
template <typename T, int Rank> struct MemRefDesc {
  T *allocated;
  T *aligned;
  int64_t offset;
  int64_t sizes[Rank];
  int64_t strides[Rank];
};

using MemRef1F = MemRefDesc<float, 1>;
using MemRef1I = MemRefDesc<int64_t, 1>;
using MemRef2F = MemRefDesc<float, 2>;
using MemRef4F = MemRefDesc<float, 4>;

/// One symbol the generated code calls, for registration with a JIT.
struct KernelSymbol {
  const char *name;
  void *address;
};
/// The kernels' `_mlir_ciface_` symbols (null-terminated array).
const KernelSymbol *getCpuKernelSymbols();

} // namespace gpuopt::runtime

#endif // GPUOPT_RUNTIME_CPUKERNELS_H
