//===- SegDialect.h - seg dialect -------------------------------*- C++ -*-===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_DIALECT_SEG_IR_SEGDIALECT_H
#define GPUOPT_DIALECT_SEG_IR_SEGDIALECT_H

#include "mlir/IR/Dialect.h"

#include "gpuopt/Dialect/Seg/IR/SegOpsDialect.h.inc"

#endif // GPUOPT_DIALECT_SEG_IR_SEGDIALECT_H
