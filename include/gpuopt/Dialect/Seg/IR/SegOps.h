//===- SegOps.h - seg dialect operations ------------------------*- C++ -*-===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_DIALECT_SEG_IR_SEGOPS_H
#define GPUOPT_DIALECT_SEG_IR_SEGOPS_H

#include "gpuopt/Dialect/Seg/IR/SegDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::gpuopt::seg {

/// The most bytes one tensor may occupy: 1 TiB, far above any segmentation
/// network's activations and far below where byte counts overflow int64, so
/// that every size the lowerings and runtimes compute from a verified type
/// (element counts, byte sizes, products of a few of them) fits in int64.
constexpr int64_t kMaxTensorBytes = int64_t(1) << 40;

/// The bytes a statically shaped tensor of `type` occupies, or std::nullopt
/// when that exceeds kMaxTensorBytes (including counts that overflow int64).
/// Types that are not statically shaped ranked tensors occupy 0 bytes here.
std::optional<int64_t> getTensorBytes(Type type);

/// Checks `type` against kMaxTensorBytes; `emit` reports a violation, naming
/// the value as `what` (e.g. "result #0").
LogicalResult verifyTensorSize(Type type, StringRef what,
                               function_ref<InFlightDiagnostic()> emit);

/// Checks every operand and result type of `op` against kMaxTensorBytes.
LogicalResult verifyTensorSizes(Operation *op);

/// Op trait of every seg op: its tensors fit kMaxTensorBytes.
template <typename ConcreteType>
class TensorSizeLimit
    : public OpTrait::TraitBase<ConcreteType, TensorSizeLimit> {
public:
  // A region trait runs after the op's verify(), whose shape diagnostics are
  // more precise for a type that is both wrong and huge.
  static LogicalResult verifyRegionTrait(Operation *op) {
    return verifyTensorSizes(op);
  }
};

} // namespace mlir::gpuopt::seg

// The enums of SegEnums.td (ShiftMode, Activation, GeluApproximation) with
// their stringifyX/symbolizeX, and the attributes that hold them.
#include "gpuopt/Dialect/Seg/IR/SegEnums.h.inc"
#define GET_ATTRDEF_CLASSES
#include "gpuopt/Dialect/Seg/IR/SegAttrs.h.inc"

namespace mlir::gpuopt::seg {

/// The fused-convolution activation that computes `seg.gelu` with
/// `approximate`.
inline Activation geluActivation(GeluApproximation approximate) {
  switch (approximate) {
  case GeluApproximation::None:
    return Activation::Gelu;
  case GeluApproximation::Tanh:
    return Activation::GeluTanh;
  }
  llvm_unreachable("unknown GeluApproximation");
}

} // namespace mlir::gpuopt::seg

#define GET_OP_CLASSES
#include "gpuopt/Dialect/Seg/IR/SegOps.h.inc"

#endif // GPUOPT_DIALECT_SEG_IR_SEGOPS_H
