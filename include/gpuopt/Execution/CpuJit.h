//===- CpuJit.h - run a seg graph compiled for the host CPU -----*- C++ -*-===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// `gpuopt-run --backend=cpu`: lowers the module with the CPU pipeline
// (--gpuopt-cpu-lowering), JIT-compiles it with MLIR's ExecutionEngine and
// calls the entry function's C interface with memref descriptors over the
// inputs, the weights (bound by their seg.param names) and the outputs.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_EXECUTION_CPUJIT_H
#define GPUOPT_EXECUTION_CPUJIT_H

#include "gpuopt/Execution/RunOptions.h"
#include "gpuopt/Runtime/Safetensors.h"
#include "gpuopt/Runtime/Tensor.h"

#include "mlir/IR/BuiltinOps.h"

namespace mlir {
namespace gpuopt {

/// Compiles `module` for the host and runs its function `entry` (consumes
/// the module: it is lowered in place). Inputs, weights and outputs are
/// float32; failures are located diagnostics.
LogicalResult runCpuJit(ModuleOp module, StringRef entry,
                        const ::gpuopt::runtime::SafetensorsFile &weights,
                        ArrayRef<::gpuopt::runtime::HostTensor> inputs,
                        SmallVectorImpl<::gpuopt::runtime::HostTensor> &outputs,
                        const RunOptions &options = {});

} // namespace gpuopt
} // namespace mlir

#endif // GPUOPT_EXECUTION_CPUJIT_H
