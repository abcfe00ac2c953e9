//===- SegToLinalg.cpp - the --convert-seg-to-linalg pass -----------------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Conversion/SegToLinalg/SegToLinalg.h"

#include "gpuopt/Conversion/Passes.h"
#include "gpuopt/Dialect/Seg/IR/SegOps.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir {
namespace gpuopt {
#define GEN_PASS_DEF_CONVERTSEGTOLINALGPASS
#include "gpuopt/Conversion/Passes.h.inc"
} // namespace gpuopt
} // namespace mlir

using namespace mlir;
namespace seg = mlir::gpuopt::seg;

LogicalResult mlir::gpuopt::convertSegParamsToArguments(ModuleOp module) {
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isExternal())
      continue;
    SmallVector<seg::ParamOp> params;
    func.walk([&](seg::ParamOp p) { params.push_back(p); });
    if (params.empty())
      continue;
    // One argument per distinct name (CSE may not have run).
    llvm::StringMap<BlockArgument> byName;
    Block &entry = func.getBody().front();
    SmallVector<Type> inputs(func.getFunctionType().getInputs());
    for (seg::ParamOp p : params) {
      auto [it, inserted] = byName.try_emplace(p.getName(), BlockArgument());
      if (inserted) {
        it->second = entry.addArgument(p.getType(), p.getLoc());
        inputs.push_back(p.getType());
      } else if (it->second.getType() != p.getType()) {
        return p.emitError("parameter '")
               << p.getName()
               << "' is used with two types: " << it->second.getType()
               << " and " << p.getType();
      }
      p.getResult().replaceAllUsesWith(it->second);
      p.erase();
    }
    func.setType(FunctionType::get(module.getContext(), inputs,
                                   func.getFunctionType().getResults()));
    for (auto &[name, arg] : byName)
      func.setArgAttr(arg.getArgNumber(), "seg.param",
                      StringAttr::get(module.getContext(), name));
  }
  return success();
}

namespace {
struct ConvertSegToLinalgPass
    : mlir::gpuopt::impl::ConvertSegToLinalgPassBase<ConvertSegToLinalgPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (failed(gpuopt::convertSegParamsToArguments(module)))
      return signalPassFailure();
    MLIRContext *ctx = &getContext();
    RewritePatternSet patterns(ctx);
    gpuopt::populateSegConvToLinalgPatterns(patterns, remapConvInputs);
    gpuopt::populateSegElementwiseToLinalgPatterns(patterns);
    gpuopt::populateSegDataMovementToLinalgPatterns(patterns);
    ConversionTarget target(*ctx);
    target.addIllegalDialect<seg::SegDialect>();
    target.addLegalDialect<arith::ArithDialect, linalg::LinalgDialect,
                           math::MathDialect, tensor::TensorDialect,
                           func::FuncDialect>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    if (failed(applyPartialConversion(module, target, std::move(patterns))))
      return signalPassFailure();
  }
};
} // namespace
