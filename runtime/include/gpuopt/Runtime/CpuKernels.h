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

#include "gpuopt/Runtime/CpuKernelAbi.h"
#include "gpuopt/Runtime/MemRef.h"

#include <cstdint>
#include <string>

namespace gpuopt::runtime {

/// One symbol the generated code calls, for registration with a JIT.
struct KernelSymbol {
  const char *name;
  void *address;
};
/// The kernels' `_mlir_ciface_` symbols (null-terminated array).
const KernelSymbol *getCpuKernelSymbols();

/// The instruction sets the kernels are compiled for, best first. Each has
/// its own micro-tile sized to its register file (docs/CPUBackend.md).
enum class CpuIsa { Avx512, Avx2, Generic };
inline constexpr CpuIsa kCpuIsas[] = {CpuIsa::Avx512, CpuIsa::Avx2,
                                      CpuIsa::Generic};
/// "avx512", "avx2", "generic": the values of GPUOPT_CPU_ISA.
const char *cpuIsaName(CpuIsa isa);
/// The first CPU feature the `isa` kernels need that this CPU lacks (e.g.
/// "avx512f"), or nullptr when it can run them.
const char *cpuIsaMissingFeature(CpuIsa isa);

/// Whether the kernels can run: false, with a message, when GPUOPT_CPU_ISA
/// names an unknown path or one this CPU cannot run (every kernel call then
/// fails with that message instead of executing an illegal instruction).
/// Unset GPUOPT_CPU_ISA means the best path the CPU has.
bool checkCpuIsa(std::string &error);
/// Makes every later kernel call of this process use `isa` (tests); false,
/// with a message, when this CPU cannot run it.
bool setCpuIsa(CpuIsa isa, std::string &error);
/// The path the kernels run ("avx2", ...), nullptr when checkCpuIsa fails.
const char *getCpuIsaName();
/// Rows and columns of the running path's micro-tile (0, 0 as above).
void getCpuMicroTile(int &mr, int &nr);
/// x[i] = erf(x[i]) for i < n with the running path's vectorised erf, the
/// one of the GELU epilogue (tests); false, doing nothing, as above.
bool cpuErf(float *x, int64_t n);

} // namespace gpuopt::runtime

// The kernels' C interfaces, as --convert-seg-to-cpu-kernels calls them
// (CpuKernelAbi.def lists them; runtime/cpu/CpuKernelsEntryPoints.cpp defines
// them; the kernel benchmark and the unit test call them directly).
namespace gpuopt::runtime::cpu_kernel_abi_detail {
using F32 = float;
using I64 = int64_t;
} // namespace gpuopt::runtime::cpu_kernel_abi_detail
extern "C" {
#define GPUOPT_CPU_KERNEL_MEMREF(ELT, RANK, ARG)                               \
  gpuopt::runtime::MemRefDesc<gpuopt::runtime::cpu_kernel_abi_detail::ELT,     \
                              RANK> *ARG
#define GPUOPT_CPU_KERNEL_I64(ARG) int64_t ARG
#define GPUOPT_CPU_KERNEL(NAME, ...)                                           \
  void _mlir_ciface_gpuopt_cpu_##NAME(__VA_ARGS__);
#include "gpuopt/Runtime/CpuKernelAbi.def"
}

#endif // GPUOPT_RUNTIME_CPUKERNELS_H
