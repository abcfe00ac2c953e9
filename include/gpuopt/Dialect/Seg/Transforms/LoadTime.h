//===- LoadTime.h - the one definition of load-time work --------*- C++ -*-===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// Which ops of a seg function are load-time work (computed once per loaded
// checkpoint) and the split of @<entry> into @<entry>_init and @<entry>.
// Every consumer decides with these functions: --seg-split-load-time, the
// reference interpreter, the CPU JIT, gpuopt-compile (CPU and CUDA) and the
// cost model. There is no other classification.
//
// The rule: seg.param and seg.shift_offsets are load-time, and so is an
// argument of a split @<entry> marked {seg.derived = N} (computed by
// @<entry>_init). An op with at least one operand, at least one result and
// no regions is load-time when all its operands are load-time values. So a
// seg.fold_batch_norm of parameters is load-time; one that reads a runtime
// input runs per inference.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_DIALECT_SEG_TRANSFORMS_LOADTIME_H
#define GPUOPT_DIALECT_SEG_TRANSFORMS_LOADTIME_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

namespace mlir {
namespace gpuopt {
namespace seg {

/// The argument attribute that marks a value @<entry>_init computed: its
/// integer is the index of the initializer's result.
inline constexpr llvm::StringLiteral kDerivedAttrName = "seg.derived";

/// The load-time values and ops of one block.
class LoadTimeSet {
public:
  /// Classifies the ops of `block` in program order.
  explicit LoadTimeSet(Block &block);

  bool isLoadTime(Value v) const { return values.contains(v); }
  bool isLoadTime(Operation *op) const { return ops.contains(op); }
  /// The load-time ops, in program order (seg.param included).
  ArrayRef<Operation *> getOps() const { return ops.getArrayRef(); }

private:
  llvm::DenseSet<Value> values;
  llvm::SetVector<Operation *> ops;
};

/// Whether `op`, whose operands are classified by `isLoadTimeValue`, is
/// load-time work (the rule above; the single place it is written).
bool isLoadTimeOp(Operation *op,
                  llvm::function_ref<bool(Value)> isLoadTimeValue);

/// What splitLoadTime moved.
struct SplitLoadTimeResult {
  func::FuncOp init, entry;
  /// Ops moved into the initializer (seg.param excluded).
  int64_t numHoisted = 0;
  /// Values the initializer returns and @<entry> takes as arguments.
  int64_t numDerived = 0;
};

/// Splits @`entry` of `module` into @`entry`_init (the load-time ops and
/// the parameters they read; it returns the values the rest needs) and
/// @`entry` (per inference; those values become trailing arguments marked
/// {seg.derived = N}). An empty initializer is still created. Failures
/// (no such function, already split, several blocks) are located errors.
FailureOr<SplitLoadTimeResult> splitLoadTime(ModuleOp module, StringRef entry);

} // namespace seg
} // namespace gpuopt
} // namespace mlir

#endif // GPUOPT_DIALECT_SEG_TRANSFORMS_LOADTIME_H
