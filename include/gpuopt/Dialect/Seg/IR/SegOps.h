//===- SegOps.h - seg dialect operations ------------------------*- C++ -*-===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_DIALECT_SEG_IR_SEGOPS_H
#define GPUOPT_DIALECT_SEG_IR_SEGOPS_H

#include "gpuopt/Dialect/Seg/IR/SegDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "gpuopt/Dialect/Seg/IR/SegOps.h.inc"

#endif // GPUOPT_DIALECT_SEG_IR_SEGOPS_H
