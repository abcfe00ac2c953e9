//===- Passes.h - gpuopt conversion passes ----------------------*- C++ -*-===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_CONVERSION_PASSES_H
#define GPUOPT_CONVERSION_PASSES_H

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
namespace gpuopt {

#define GEN_PASS_DECL
#include "gpuopt/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "gpuopt/Conversion/Passes.h.inc"

} // namespace gpuopt
} // namespace mlir

#endif // GPUOPT_CONVERSION_PASSES_H
