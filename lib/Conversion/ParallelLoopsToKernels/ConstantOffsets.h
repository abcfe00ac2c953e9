//===- ConstantOffsets.h - indices that provably differ ---------*- C++ -*-===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// Shared by the kernel passes of this directory (not a public header): a
// register tile's accumulators sit at %o, %o + 1, ... of one buffer, which
// these helpers prove distinct.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_LIB_CONVERSION_PARALLELLOOPSTOKERNELS_CONSTANTOFFSETS_H
#define GPUOPT_LIB_CONVERSION_PARALLELLOOPSTOKERNELS_CONSTANTOFFSETS_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

#include "llvm/ADT/STLExtras.h"

#include <utility>

namespace mlir {
namespace gpuopt {

/// `v` as a base value plus a constant (a null base for a constant),
/// through additions of constants.
inline std::pair<Value, int64_t> splitConstantOffset(Value v) {
  int64_t offset = 0;
  while (true) {
    if (std::optional<int64_t> c = getConstantIntValue(v))
      return {Value(), offset + *c};
    auto add = v.getDefiningOp<arith::AddIOp>();
    if (!add)
      return {v, offset};
    if (std::optional<int64_t> c = getConstantIntValue(add.getRhs())) {
      offset += *c;
      v = add.getLhs();
    } else if (std::optional<int64_t> c = getConstantIntValue(add.getLhs())) {
      offset += *c;
      v = add.getRhs();
    } else {
      return {v, offset};
    }
  }
}

/// Whether index lists `a` and `b` (of one memref) provably name different
/// elements: in some dimension both are one base plus different constants.
inline bool areDistinctIndices(ValueRange a, ValueRange b) {
  return a.size() == b.size() && llvm::any_of(llvm::zip(a, b), [](auto pair) {
           auto [x, y] = pair;
           std::pair<Value, int64_t> sx = splitConstantOffset(x);
           std::pair<Value, int64_t> sy = splitConstantOffset(y);
           return sx.first == sy.first && sx.second != sy.second;
         });
}

} // namespace gpuopt
} // namespace mlir

#endif // GPUOPT_LIB_CONVERSION_PARALLELLOOPSTOKERNELS_CONSTANTOFFSETS_H
