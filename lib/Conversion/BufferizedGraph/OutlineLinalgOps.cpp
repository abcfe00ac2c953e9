//===- OutlineLinalgOps.cpp - one function per linalg op ------------------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// Implements --outline-linalg-ops: each linalg op on buffers in the body of a
// function moves into a private no_inline function and is replaced by a
// call, so that the loop lowering and LLVM see small functions whatever the
// size of the graph.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Conversion/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/RegionUtils.h"

#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir {
namespace gpuopt {
#define GEN_PASS_DEF_OUTLINELINALGOPSPASS
#include "gpuopt/Conversion/Passes.h.inc"
} // namespace gpuopt
} // namespace mlir

using namespace mlir;

namespace {

/// Moves `op` into a private function and replaces it with a call. The
/// function is new (inserted in `symbols` after `after`, which becomes it)
/// unless `outlined` holds one with the same body: a graph repeats its
/// blocks, and one copy of each distinct op halves what LLVM optimizes.
void outline(linalg::LinalgOp op, func::FuncOp parent, unsigned index,
             SymbolTable &symbols, Operation *&after,
             llvm::StringMap<func::FuncOp> &outlined) {
  // Arguments: the operands and what the regions capture, except constants,
  // which are cloned so that the loops keep static bounds and values.
  llvm::SetVector<Value> captured(op->operand_begin(), op->operand_end());
  getUsedValuesDefinedAbove(op->getRegions(), captured);
  SmallVector<Value> arguments;
  SmallVector<Operation *> constants;
  for (Value value : captured) {
    Operation *def = value.getDefiningOp();
    if (def && def->getNumOperands() == 0 && matchPattern(def, m_Constant()))
      constants.push_back(def);
    else
      arguments.push_back(value);
  }

  // No insertion point: the symbol table places the function and makes its
  // name unique.
  OpBuilder builder(op.getContext());
  auto type = builder.getFunctionType(ValueRange(arguments).getTypes(), {});
  // Named once its body is known to be new; the key is its generic form.
  auto callee = func::FuncOp::create(builder, op.getLoc(), "", type);
  callee.setPrivate();
  // LLVM would inline a private function called once straight back; the
  // LLVM conversion carries `passthrough` over to LLVM IR function attributes.
  callee->setAttr("passthrough",
                  builder.getArrayAttr({builder.getStringAttr("noinline")}));

  Block *body = callee.addEntryBlock();
  IRMapping mapping;
  mapping.map(arguments, body->getArguments());
  builder.setInsertionPointToStart(body);
  for (Operation *constant : constants)
    builder.clone(*constant, mapping);
  builder.clone(*op, mapping);
  func::ReturnOp::create(builder, op.getLoc());

  std::string key;
  llvm::raw_string_ostream os(key);
  callee->print(os, OpPrintingFlags().printGenericOpForm().useLocalScope());
  auto [it, inserted] = outlined.try_emplace(key, callee);
  if (inserted) {
    callee.setName((parent.getSymName() + "_op" + Twine(index)).str());
    symbols.insert(callee, std::next(Block::iterator(after)));
    after = callee;
  } else {
    callee->erase();
    callee = it->second;
  }

  builder.setInsertionPoint(op);
  func::CallOp::create(builder, op.getLoc(), callee, arguments);
  op->erase();
}

/// What is left of a graph function is glue: allocations, views, copies and
/// calls, one block of them. LLVM's function passes renumber a block per
/// insertion (BasicBlock::renumberInstructions was the top of the profile
/// at 4,000 ops), which is quadratic in the block, and gain nothing on glue:
/// `optnone` leaves the function to the fast instruction selector and
/// register allocator, linear in its size. (optnone requires noinline.)
void markOptNone(func::FuncOp function) {
  Builder builder(function.getContext());
  SmallVector<Attribute> passthrough;
  if (auto existing = function->getAttrOfType<ArrayAttr>("passthrough"))
    llvm::append_range(passthrough, existing);
  for (StringRef name : {"noinline", "optnone"})
    if (!llvm::is_contained(passthrough, builder.getStringAttr(name)))
      passthrough.push_back(builder.getStringAttr(name));
  function->setAttr("passthrough", builder.getArrayAttr(passthrough));
}

struct OutlineLinalgOpsPass
    : public gpuopt::impl::OutlineLinalgOpsPassBase<OutlineLinalgOpsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    llvm::StringMap<func::FuncOp> outlined;
    SmallVector<func::FuncOp> functions(module.getOps<func::FuncOp>());
    for (func::FuncOp function : functions) {
      if (function.isExternal())
        continue;
      SmallVector<linalg::LinalgOp> ops;
      for (Operation &op : function.front())
        if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
          if (linalgOp.hasPureBufferSemantics())
            ops.push_back(linalgOp);
      Operation *after = function;
      for (auto [index, op] : llvm::enumerate(ops))
        outline(op, function, index, symbols, after, outlined);
      numOutlined += ops.size();
      if (!ops.empty())
        markOptNone(function);
    }
  }
};

} // namespace
