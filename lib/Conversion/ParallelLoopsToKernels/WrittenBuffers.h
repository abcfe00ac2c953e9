//===- WrittenBuffers.h - the buffers a parallel loop writes ----*- C++ -*-===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// The root buffers the body of an scf.parallel stores to, for the tilings of
// --convert-parallel-loops-to-kernels: a load from a buffer the loop does
// not write may be shared among iterations or staged ahead of its use.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_LIB_CONVERSION_PARALLELLOOPSTOKERNELS_WRITTENBUFFERS_H
#define GPUOPT_LIB_CONVERSION_PARALLELLOOPSTOKERNELS_WRITTENBUFFERS_H

#include "MemRefRoot.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "llvm/ADT/DenseSet.h"

namespace mlir {
namespace gpuopt {

/// The memory effects `op` declares into `effects`; false (nothing added)
/// when it has no MemoryEffectOpInterface: its footprint is unknown.
inline bool
getDeclaredEffects(Operation *op,
                   SmallVectorImpl<MemoryEffects::EffectInstance> &effects) {
  auto iface = dyn_cast<MemoryEffectOpInterface>(op);
  if (!iface)
    return false;
  iface.getEffects(effects);
  return true;
}

/// The buffers the body of `loop` writes; `unknown` when an op writes
/// memory it does not name.
struct WrittenBuffers {
  llvm::DenseSet<Value> roots;
  bool unknown = false;

  explicit WrittenBuffers(scf::ParallelOp loop) {
    loop.getBody()->walk([&](Operation *op) {
      if (auto store = dyn_cast<memref::StoreOp>(op)) {
        roots.insert(getMemRefRoot(store.getMemRef()));
        return;
      }
      if (isa<memref::LoadOp>(op) ||
          op->hasTrait<OpTrait::HasRecursiveMemoryEffects>())
        return;
      SmallVector<MemoryEffects::EffectInstance> effects;
      if (!getDeclaredEffects(op, effects)) {
        unknown = true;
        return;
      }
      for (const MemoryEffects::EffectInstance &effect : effects) {
        if (!isa<MemoryEffects::Write>(effect.getEffect()))
          continue;
        if (Value value = effect.getValue())
          roots.insert(getMemRefRoot(value));
        else
          unknown = true;
      }
    });
  }

  bool mayWrite(Value memref) const {
    return unknown || roots.contains(getMemRefRoot(memref));
  }
};

} // namespace gpuopt
} // namespace mlir

#endif // GPUOPT_LIB_CONVERSION_PARALLELLOOPSTOKERNELS_WRITTENBUFFERS_H
