//===- Interpreter.h - LibTorch reference backend ---------------*- C++ -*-===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// The reference backend executes a seg graph op by op with ATen on the CPU. It
// is the executable definition of every seg op: later backends (CPU, CUDA)
// and every optimization pass are tested against it.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_REFERENCE_INTERPRETER_H
#define GPUOPT_REFERENCE_INTERPRETER_H

#include "gpuopt/Execution/RunOptions.h"
#include "gpuopt/Runtime/Safetensors.h"
#include "gpuopt/Runtime/Tensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Support/LLVM.h"

namespace mlir {
namespace gpuopt {
namespace reference {

/// Runs `func` on `inputs` (one per argument, shapes checked against the
/// argument types), binding every `seg.param` to the tensor of the same name
/// in `weights` (converted to the declared element type when they differ).
/// Results are returned as float32 host tensors. Every failure is reported as
/// a diagnostic located at the offending op (or at `func` for bad inputs) and
/// yields failure; no exception escapes.
///
/// Ops computed from parameters only (`seg.param`, `seg.fold_batch_norm` of
/// parameters, ...) are load-time computations: they run once, before the
/// first inference, however many `options.runs` there are.
LogicalResult
runReference(func::FuncOp func,
             const ::gpuopt::runtime::SafetensorsFile &weights,
             ArrayRef<::gpuopt::runtime::HostTensor> inputs,
             SmallVectorImpl<::gpuopt::runtime::HostTensor> &outputs,
             const RunOptions &options = {});

/// Names in `weights` that no `seg.param` in `func` uses.
SmallVector<std::string>
unusedWeights(func::FuncOp func,
              const ::gpuopt::runtime::SafetensorsFile &weights);

} // namespace reference
} // namespace gpuopt
} // namespace mlir

#endif // GPUOPT_REFERENCE_INTERPRETER_H
