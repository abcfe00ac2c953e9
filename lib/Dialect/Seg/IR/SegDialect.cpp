//===- SegDialect.cpp - seg dialect registration --------------------------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// The seg dialect: registration (ops and enum attributes), inliner
// interface, and the per-tensor size limit every op verifier applies. The ops'
// verifiers and shape functions are in SegOps.cpp, their folders in
// SegFolds.cpp.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Dialect/Seg/IR/SegOps.h"

#include "mlir/IR/DialectImplementation.h"
#include "mlir/Transforms/InliningUtils.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::gpuopt::seg;

#include "gpuopt/Dialect/Seg/IR/SegOpsDialect.cpp.inc"

#include "gpuopt/Dialect/Seg/IR/SegEnums.cpp.inc"
#define GET_ATTRDEF_CLASSES
#include "gpuopt/Dialect/Seg/IR/SegAttrs.cpp.inc"

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

//===----------------------------------------------------------------------===//
// Enum attributes
//===----------------------------------------------------------------------===//

/// Parses the keyword (or string) of an enum case; an unknown one is a single
/// error at it naming `what` and the `count` valid cases.
template <typename EnumT>
static FailureOr<EnumT>
parseEnumCase(AsmParser &parser, StringRef what, uint64_t count,
              std::optional<EnumT> (*symbolize)(StringRef),
              StringRef (*stringify)(EnumT)) {
  SMLoc loc = parser.getCurrentLocation();
  std::string keyword;
  if (failed(parser.parseKeywordOrString(&keyword)))
    return failure();
  if (std::optional<EnumT> value = symbolize(keyword))
    return *value;
  InFlightDiagnostic diag = parser.emitError(loc)
                            << "unknown " << what << " \"" << keyword
                            << "\", expected one of: ";
  for (uint64_t i = 0; i < count; ++i)
    diag << (i ? ", " : "") << stringify(static_cast<EnumT>(i));
  return diag;
}

#define SEG_ENUM_ATTR_ASM(Enum, what)                                          \
  Attribute Enum##Attr::parse(AsmParser &parser, Type) {                       \
    FailureOr<Enum> value =                                                    \
        parseEnumCase<Enum>(parser, what, getMaxEnumValFor##Enum() + 1,        \
                            symbolize##Enum, stringify##Enum);                 \
    if (failed(value))                                                         \
      return {};                                                               \
    return Enum##Attr::get(parser.getContext(), *value);                       \
  }                                                                            \
  void Enum##Attr::print(AsmPrinter &printer) const {                          \
    printer << ' ' << stringify##Enum(getValue());                             \
  }

SEG_ENUM_ATTR_ASM(ShiftMode, "shift mode")
SEG_ENUM_ATTR_ASM(Activation, "activation")
SEG_ENUM_ATTR_ASM(GeluApproximation, "GELU approximation")

#undef SEG_ENUM_ATTR_ASM

//===----------------------------------------------------------------------===//
// Dialect
//===----------------------------------------------------------------------===//

void SegDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "gpuopt/Dialect/Seg/IR/SegOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "gpuopt/Dialect/Seg/IR/SegAttrs.cpp.inc"
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
