//===- RegisterAllTargets.cpp - every backend of gpuopt-compile -----------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// One line per folder of lib/Target (its header declares its register
// function), in the order gpuopt-compile lists them.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Target/TargetRegistry.h"

#include "gpuopt/Target/Cpu/CpuTarget.h"
#include "gpuopt/Target/Cuda/CudaTarget.h"

void mlir::gpuopt::registerAllTargets() {
  registerCpuTarget();
  registerCudaTarget();
}
