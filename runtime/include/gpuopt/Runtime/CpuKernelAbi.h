//===- CpuKernelAbi.h - Codes and signatures of the CPU kernels -*- C++ -*-===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// The contract between `--convert-seg-to-cpu-kernels` and the kernels of
// runtime, written once (no MLIR): the activation codes and flag bits
// the kernels take, and a table of every kernel's name and argument kinds
// made from CpuKernelAbi.def. The lowering checks each call it builds
// against the table; CpuKernels.h declares the prototypes from the same .def.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_RUNTIME_CPUKERNELABI_H
#define GPUOPT_RUNTIME_CPUKERNELABI_H

#include <cstdint>
#include <optional>
#include <string_view>

namespace gpuopt::runtime {

/// The `activation` argument of gpuopt_cpu_conv2d: applied to the
/// convolution plus bias, before the residual is added.
inline constexpr int64_t kActNone = 0;
inline constexpr int64_t kActRelu = 1;
/// x * Phi(x) with erf.
inline constexpr int64_t kActGelu = 2;
/// PyTorch's approximate="tanh".
inline constexpr int64_t kActGeluTanh = 3;

/// The bits of the `flags` argument of gpuopt_cpu_conv2d.
inline constexpr int64_t kConvHasBias = 1;
inline constexpr int64_t kConvHasResidual = 2;
/// Shifted-out pixels read zero (seg.fused_conv2d mode "zero"), not the
/// wrapped-around ones (mode "cyclic").
inline constexpr int64_t kConvZeroMode = 4;

/// The code of the seg activation named `name` ("none", "relu", "gelu",
/// "gelu_tanh"), nullopt for any other.
inline std::optional<int64_t> cpuActivationCode(std::string_view name) {
  if (name == "none")
    return kActNone;
  if (name == "relu")
    return kActRelu;
  if (name == "gelu")
    return kActGelu;
  if (name == "gelu_tanh")
    return kActGeluTanh;
  return std::nullopt;
}

/// The kernels of CpuKernelAbi.def.
enum class CpuKernel {
#define GPUOPT_CPU_KERNEL(NAME, ...) NAME,
#include "gpuopt/Runtime/CpuKernelAbi.def"
};

/// One argument of a kernel: a strided memref (rank >= 1) of f32 or i64, or
/// an int64_t scalar (rank 0).
struct CpuKernelArg {
  int rank;
  bool isF32;
};

/// A kernel's symbol (without the `_mlir_ciface_` prefix) and arguments.
struct CpuKernelSignature {
  const char *name;
  const CpuKernelArg *args;
  int numArgs;
};

namespace cpu_kernel_abi_detail {
#define GPUOPT_CPU_KERNEL_MEMREF(ELT, RANK, ARG)                               \
  { RANK, #ELT[0] == 'F' }
#define GPUOPT_CPU_KERNEL_I64(ARG)                                             \
  { 0, false }
#define GPUOPT_CPU_KERNEL(NAME, ...)                                           \
  inline constexpr CpuKernelArg NAME##Args[] = {__VA_ARGS__};
#include "gpuopt/Runtime/CpuKernelAbi.def"
} // namespace cpu_kernel_abi_detail

/// Every kernel of CpuKernelAbi.def, in CpuKernel order.
inline constexpr CpuKernelSignature kCpuKernelSignatures[] = {
#define GPUOPT_CPU_KERNEL(NAME, ...)                                           \
  {"gpuopt_cpu_" #NAME, cpu_kernel_abi_detail::NAME##Args,                     \
   int(sizeof(cpu_kernel_abi_detail::NAME##Args) / sizeof(CpuKernelArg))},
#include "gpuopt/Runtime/CpuKernelAbi.def"
};

inline constexpr const CpuKernelSignature &
getCpuKernelSignature(CpuKernel kernel) {
  return kCpuKernelSignatures[static_cast<int>(kernel)];
}

} // namespace gpuopt::runtime

#endif // GPUOPT_RUNTIME_CPUKERNELABI_H
