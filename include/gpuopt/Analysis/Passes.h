//===- Passes.h - gpuopt analysis passes ------------------------*- C++ -*-===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_ANALYSIS_PASSES_H
#define GPUOPT_ANALYSIS_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
namespace gpuopt {

#define GEN_PASS_DECL
#include "gpuopt/Analysis/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "gpuopt/Analysis/Passes.h.inc"

} // namespace gpuopt
} // namespace mlir

#endif // GPUOPT_ANALYSIS_PASSES_H
