//===- LoadTime.cpp - the one definition of load-time work ----------------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Dialect/Seg/Transforms/LoadTime.h"
#include "gpuopt/Dialect/Seg/IR/SegOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace mlir::gpuopt::seg;

bool mlir::gpuopt::seg::isLoadTimeOp(
    Operation *op, llvm::function_ref<bool(Value)> isLoadTimeValue) {
  if (isa<ParamOp, ShiftOffsetsOp>(op))
    return true;
  return op->getNumOperands() > 0 && op->getNumResults() > 0 &&
         op->getNumRegions() == 0 &&
         llvm::all_of(op->getOperands(), isLoadTimeValue);
}

LoadTimeSet::LoadTimeSet(Block &block) {
  if (auto func = dyn_cast_or_null<func::FuncOp>(block.getParentOp());
      func && &block == &func.getBody().front())
    for (BlockArgument arg : block.getArguments())
      if (func.getArgAttr(arg.getArgNumber(), kDerivedAttrName))
        values.insert(arg);
  auto isValue = [&](Value v) { return values.contains(v); };
  for (Operation &op : block) {
    if (!isLoadTimeOp(&op, isValue))
      continue;
    values.insert(op.getResults().begin(), op.getResults().end());
    ops.insert(&op);
  }
}

FailureOr<SplitLoadTimeResult>
mlir::gpuopt::seg::splitLoadTime(ModuleOp module, StringRef entry) {
  auto func = module.lookupSymbol<func::FuncOp>(entry);
  if (!func || func.isExternal())
    return module.emitError("no function body named @") << entry << " to split";
  std::string initName = (entry + "_init").str();
  if (Operation *existing = module.lookupSymbol(initName))
    return existing->emitError("@")
           << initName << " already exists: @" << entry << " was split before";
  if (!func.getBody().hasOneBlock())
    return func.emitError("@") << entry << " has more than one block";

  Block &body = func.getBody().front();
  LoadTimeSet loadTime(body);
  SmallVector<Operation *> hoisted;
  for (Operation *op : loadTime.getOps())
    if (!isa<ParamOp>(op))
      hoisted.push_back(op);
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
        kDerivedAttrName, builder.getI64IntegerAttr(index)));
    if (failed(func.insertArgument(argNumber, v.getType(), attrs, v.getLoc())))
      return failure();
    v.replaceUsesWithIf(func.getArgument(argNumber), [&](OpOperand &use) {
      return !hoistedSet.contains(use.getOwner());
    });
  }
  for (Operation *op : llvm::reverse(hoisted))
    op->erase();
  for (ParamOp param : llvm::make_early_inc_range(body.getOps<ParamOp>()))
    if (param->use_empty())
      param->erase();
  SplitLoadTimeResult result;
  result.init = init;
  result.entry = func;
  result.numHoisted = hoisted.size();
  result.numDerived = derived.size();
  return result;
}
