//===- KernelCallRoutine.h - which routine a kernel call calls --*- C++ -*-===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// The calls KernelCalls.h builds, recognised by the passes and targets that
// treat them specially (no seg dialect needed): the CUDA kernel mapping
// leaves them on the host, the CUDA target makes them Library steps.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_CONVERSION_SEGTOCPUKERNELS_KERNELCALLROUTINE_H
#define GPUOPT_CONVERSION_SEGTOCPUKERNELS_KERNELCALLROUTINE_H

#include "gpuopt/Runtime/CpuKernelAbi.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/STLExtras.h"

#include <optional>

namespace mlir {
namespace gpuopt {

/// Marks the declarations of the routines the call builder creates.
constexpr StringLiteral kCpuKernelAttrName = "gpuopt.cpu_kernel";

/// The routine `call` calls when its callee is a declaration the call
/// builder made, none otherwise.
inline std::optional<::gpuopt::runtime::CpuKernel>
getKernelCallRoutine(func::CallOp call) {
  auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
      call, call.getCalleeAttr());
  if (!callee || !callee->hasAttr(kCpuKernelAttrName))
    return std::nullopt;
  for (auto [index, sig] :
       llvm::enumerate(::gpuopt::runtime::kCpuKernelSignatures))
    if (callee.getSymName() == sig.name)
      return static_cast<::gpuopt::runtime::CpuKernel>(index);
  return std::nullopt;
}

} // namespace gpuopt
} // namespace mlir

#endif // GPUOPT_CONVERSION_SEGTOCPUKERNELS_KERNELCALLROUTINE_H
