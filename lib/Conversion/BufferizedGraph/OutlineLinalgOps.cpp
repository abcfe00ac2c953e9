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
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
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

/// What a memref value views: an allocation (the result of it), an argument
/// of the enclosing function (a block argument: two of them may be the same
/// buffer, the caller decides) or, when it cannot be told, null.
Value viewedBuffer(Value value) {
  while (Operation *def = value.getDefiningOp()) {
    if (isa<memref::AllocOp, memref::AllocaOp>(def))
      return value;
    auto view = dyn_cast<ViewLikeOpInterface>(def);
    if (!view)
      return nullptr;
    value = view.getViewSource();
  }
  return value;
}

/// Whether two viewed buffers (viewedBuffer) may overlap: a fresh
/// allocation overlaps nothing but itself.
bool mayOverlap(Value a, Value b) {
  if (!a || !b || a == b)
    return true;
  return isa<BlockArgument>(a) && isa<BlockArgument>(b);
}

/// Marks the memref arguments of `callee` that `llvm.noalias` may describe
/// at this call: LLVM then knows that the loops' stores do not feed their
/// loads and vectorises them. An argument qualifies when no other argument
/// may share its memory while one of the two is written. (The attribute is part
/// of the body's printed form, so calls with another aliasing share nothing.)
void markNoAlias(linalg::LinalgOp op, ArrayRef<Value> arguments,
                 func::FuncOp callee) {
  SmallVector<Value> roots;
  SmallVector<bool> written;
  for (Value argument : arguments) {
    roots.push_back(isa<MemRefType>(argument.getType()) ? viewedBuffer(argument)
                                                        : Value());
    written.push_back(llvm::any_of(
        op.getDpsInits(), [&](Value init) { return init == argument; }));
  }
  auto mayShare = [&](unsigned i, unsigned j) {
    return mayOverlap(roots[i], roots[j]);
  };
  // The LLVM conversion drops an argument attribute of a memref it expands
  // into a descriptor; with the bare-pointer convention (`llvm.bareptr`,
  // for memrefs whose layout is fully static) the memref is one pointer and
  // keeps it.
  auto isStatic = [](Value value) {
    auto type = dyn_cast<MemRefType>(value.getType());
    if (!type)
      return true;
    SmallVector<int64_t> strides;
    int64_t offset;
    return type.hasStaticShape() &&
           succeeded(type.getStridesAndOffset(strides, offset)) &&
           !ShapedType::isDynamic(offset) &&
           llvm::none_of(strides, ShapedType::isDynamic);
  };
  if (!llvm::all_of(arguments, isStatic))
    return;
  Builder builder(op.getContext());
  callee->setAttr("llvm.bareptr", builder.getUnitAttr());
  for (unsigned i = 0; i < arguments.size(); ++i) {
    if (!isa<MemRefType>(arguments[i].getType()))
      continue;
    bool exclusive = true;
    for (unsigned j = 0; j < arguments.size() && exclusive; ++j)
      if (j != i && isa<MemRefType>(arguments[j].getType()) &&
          (written[i] || written[j]) && mayShare(i, j))
        exclusive = false;
    if (exclusive)
      callee.setArgAttr(i, LLVM::LLVMDialect::getNoAliasAttrName(),
                        builder.getUnitAttr());
  }
}

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

  markNoAlias(op, arguments, callee);

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
