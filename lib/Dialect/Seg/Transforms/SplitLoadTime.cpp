//===- SplitLoadTime.cpp - hoist load-time ops into an initializer --------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// Splits @<entry> into @<entry>_init (ops computed from parameters only, run
// once per loaded checkpoint) and @<entry> (per inference), so that compiled
// models do not recompute e.g. seg.fold_batch_norm at every call.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Dialect/Seg/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"

namespace mlir {
namespace gpuopt {
namespace seg {
#define GEN_PASS_DEF_SPLITLOADTIMEPASS
#include "gpuopt/Dialect/Seg/Transforms/Passes.h.inc"
} // namespace seg
} // namespace gpuopt
} // namespace mlir

using namespace mlir;
using namespace mlir::gpuopt::seg;

namespace {
struct SplitLoadTimePass
    : mlir::gpuopt::seg::impl::SplitLoadTimePassBase<SplitLoadTimePass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto func = module.lookupSymbol<func::FuncOp>(entry);
    if (!func || func.isExternal()) {
      module.emitError("no function body named @") << entry << " to split";
      return signalPassFailure();
    }
    std::string initName = entry + "_init";
    if (Operation *existing = module.lookupSymbol(initName)) {
      existing->emitError("@")
          << initName << " already exists: @" << entry << " was split before";
      return signalPassFailure();
    }
    if (!func.getBody().hasOneBlock()) {
      func.emitError("@") << entry << " has more than one block";
      return signalPassFailure();
    }

    // Same classification as the reference backend (lib/Reference): roots
    // are parameters and shift tables; ops whose operands are all load-time
    // values are load-time too.
    Block &body = func.getBody().front();
    llvm::DenseSet<Value> loadTimeValues;
    SmallVector<Operation *> hoisted;
    for (Operation &op : body) {
      bool root = isa<ParamOp, ShiftOffsetsOp>(op);
      bool fromParams =
          root || (op.getNumOperands() > 0 && op.getNumResults() > 0 &&
                   op.getNumRegions() == 0 &&
                   llvm::all_of(op.getOperands(), [&](Value v) {
                     return loadTimeValues.contains(v);
                   }));
      if (!fromParams)
        continue;
      loadTimeValues.insert(op.getResults().begin(), op.getResults().end());
      if (!isa<ParamOp>(op))
        hoisted.push_back(&op);
    }
    llvm::DenseSet<Operation *> hoistedSet(hoisted.begin(), hoisted.end());

    // Values the per-inference part needs from the initializer.
    llvm::SetVector<Value> derived;
    for (Operation *op : hoisted)
      for (Value result : op->getResults())
        for (Operation *user : result.getUsers())
          if (!hoistedSet.contains(user))
            derived.insert(result);

    // @<entry>_init: the hoisted ops and the parameters they read.
    OpBuilder builder(func);
    SmallVector<Type> derivedTypes;
    for (Value v : derived)
      derivedTypes.push_back(v.getType());
    auto init = func::FuncOp::create(builder, func.getLoc(), initName,
                                     builder.getFunctionType({}, derivedTypes));
    builder.setInsertionPointToStart(init.addEntryBlock());
    IRMapping mapping;
    for (Operation *op : hoisted)
      for (Value operand : op->getOperands())
        if (auto param = operand.getDefiningOp<ParamOp>();
            param && !mapping.contains(operand))
          builder.clone(*param, mapping);
    for (Operation *op : hoisted)
      builder.clone(*op, mapping);
    SmallVector<Value> returned;
    for (Value v : derived)
      returned.push_back(mapping.lookup(v));
    func::ReturnOp::create(builder, func.getLoc(), returned);

    // @<entry>: derived values become trailing arguments.
    for (auto [index, value] : llvm::enumerate(derived)) {
      Value v = value;
      unsigned argNumber = func.getNumArguments();
      auto attrs = builder.getDictionaryAttr(builder.getNamedAttr(
          "seg.derived", builder.getI64IntegerAttr(index)));
      if (failed(
              func.insertArgument(argNumber, v.getType(), attrs, v.getLoc())))
        return signalPassFailure();
      v.replaceUsesWithIf(func.getArgument(argNumber), [&](OpOperand &use) {
        return !hoistedSet.contains(use.getOwner());
      });
    }
    for (Operation *op : llvm::reverse(hoisted))
      op->erase();
    for (ParamOp param : llvm::make_early_inc_range(body.getOps<ParamOp>()))
      if (param->use_empty())
        param->erase();
    numHoisted = hoisted.size();
    numDerived = derived.size();
  }
};
} // namespace
