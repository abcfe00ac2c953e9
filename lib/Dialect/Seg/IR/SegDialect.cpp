//===- SegDialect.cpp - seg dialect registration --------------------------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// The seg dialect: registration, inliner interface, and the per-tensor size
// limit every op verifier applies. The ops' verifiers and shape functions are
// in SegOps.cpp, their folders in SegFolds.cpp.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Dialect/Seg/IR/SegOps.h"

#include "mlir/Transforms/InliningUtils.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::gpuopt::seg;

#include "gpuopt/Dialect/Seg/IR/SegOpsDialect.cpp.inc"

namespace {
/// Every seg op is a function of its operands and attributes, legal to
/// inline anywhere: the lowering pipelines inline every call first.
struct SegInlinerInterface : DialectInlinerInterface {
  using DialectInlinerInterface::DialectInlinerInterface;
  bool isLegalToInline(Operation *, Region *, bool, IRMapping &) const final {
    return true;
  }
};
} // namespace

void SegDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "gpuopt/Dialect/Seg/IR/SegOps.cpp.inc"
      >();
  addInterfaces<SegInlinerInterface>();
}

//===----------------------------------------------------------------------===//
// Tensor size limit
//===----------------------------------------------------------------------===//

std::optional<int64_t> mlir::gpuopt::seg::getTensorBytes(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape())
    return 0;
  Type elt = tensor.getElementType();
  // Index, complex or opaque elements do not occur in seg IR; count them as
  // 8 bytes rather than skip them.
  int64_t bits = elt.isIntOrFloat() ? elt.getIntOrFloatBitWidth() : 64;
  if (llvm::is_contained(tensor.getShape(), 0))
    return 0;
  // The running product stays below 2^40 * 2^63 < 2^127: no overflow in 128
  // bits, and it only grows (every dim is at least 1 here).
  __int128 bitCount = bits;
  for (int64_t dim : tensor.getShape()) {
    bitCount *= dim;
    if (bitCount > static_cast<__int128>(kMaxTensorBytes) * 8)
      return std::nullopt;
  }
  return static_cast<int64_t>((bitCount + 7) / 8);
}

LogicalResult
mlir::gpuopt::seg::verifyTensorSize(Type type, StringRef what,
                                    function_ref<InFlightDiagnostic()> emit) {
  if (getTensorBytes(type))
    return success();
  return emit() << what << " of type " << type << " exceeds the limit of "
                << kMaxTensorBytes << " bytes (1 TiB) per tensor";
}

LogicalResult mlir::gpuopt::seg::verifyTensorSizes(Operation *op) {
  auto emit = [&] { return op->emitOpError(); };
  for (auto [i, type] : llvm::enumerate(op->getOperandTypes()))
    if (failed(verifyTensorSize(type, "operand #" + std::to_string(i), emit)))
      return failure();
  for (auto [i, type] : llvm::enumerate(op->getResultTypes()))
    if (failed(verifyTensorSize(type, "result #" + std::to_string(i), emit)))
      return failure();
  return success();
}
