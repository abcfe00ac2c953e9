//===- MemRefRoot.h - the buffer a memref view is of ------------*- C++ -*-===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// Shared by the kernel-mapping passes of this directory (not a public
// header).
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_LIB_CONVERSION_PARALLELLOOPSTOKERNELS_MEMREFROOT_H
#define GPUOPT_LIB_CONVERSION_PARALLELLOOPSTOKERNELS_MEMREFROOT_H

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir {
namespace gpuopt {

/// The buffer a memref value is a view of: a block argument or the result of
/// a non-view op (memref.alloc, memref.get_global), through casts and views.
inline Value getMemRefRoot(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (auto cast = dyn_cast<memref::CastOp>(def)) {
      v = cast.getSource();
      continue;
    }
    auto view = dyn_cast<ViewLikeOpInterface>(def);
    if (!view)
      break;
    v = view.getViewSource();
  }
  return v;
}

} // namespace gpuopt
} // namespace mlir

#endif // GPUOPT_LIB_CONVERSION_PARALLELLOOPSTOKERNELS_MEMREFROOT_H
