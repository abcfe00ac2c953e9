//===- gpuopt-opt.cpp - gpuopt's mlir-opt -------------------------------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// An mlir-opt-compatible driver with the seg dialect, gpuopt's passes and the
// upstream dialects and passes the project's pipelines use.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::gpuopt::registerAllDialects(registry);
  mlir::gpuopt::registerAllPasses();
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "gpuopt optimizer driver\n", registry));
}
