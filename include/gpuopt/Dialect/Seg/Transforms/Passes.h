//===- Passes.h - seg transformation passes ---------------------*- C++ -*-===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_DIALECT_SEG_TRANSFORMS_PASSES_H
#define GPUOPT_DIALECT_SEG_TRANSFORMS_PASSES_H

#include "gpuopt/Dialect/Seg/IR/SegOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
namespace gpuopt {
namespace seg {

#define GEN_PASS_DECL
#include "gpuopt/Dialect/Seg/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "gpuopt/Dialect/Seg/Transforms/Passes.h.inc"

} // namespace seg
} // namespace gpuopt
} // namespace mlir

#endif // GPUOPT_DIALECT_SEG_TRANSFORMS_PASSES_H
