//===- gpuopt-opt.cpp - gpuopt's mlir-opt -------------------------------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// An mlir-opt-compatible driver with the seg dialect, gpuopt's passes and the
// upstream dialects and passes the project's pipelines use.
//
// The command line is mlir-opt's, but the files are gpuopt's: the input is
// read through gpuopt's bounded reader (regular files, or standard input up
// to a limit) and its nesting checked before MLIR parses it, and `-o FILE`
// is written to a temporary file renamed over FILE only on success, so a
// failing pipeline leaves FILE as it was. An output that is the input is
// refused before anything is read.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/InitAll.h"
#include "gpuopt/MlirSource.h"
#include "gpuopt/Runtime/FileIO.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <csignal>

namespace rt = ::gpuopt::runtime;

static int fail(const std::string &msg) {
  llvm::errs() << "gpuopt-opt: error: " << msg << "\n";
  return EXIT_FAILURE;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  // InitLLVM treats SIGXFSZ as a crash; ignored, a write beyond the file size
  // limit fails with EFBIG instead, which the writers report as an error.
  std::signal(SIGXFSZ, SIG_IGN);
  mlir::DialectRegistry registry;
  mlir::gpuopt::registerAllDialects(registry);
  mlir::gpuopt::registerAllPasses();
  auto [inputFile, outputFile] = mlir::registerAndParseCLIOptions(
      argc, argv, "gpuopt optimizer driver\n", registry);
  // mlir-opt follows every diagnostic on an operation with the operation in
  // generic form; for an error on a function of an exported network that is
  // thousands of lines after the one that matters. gpuopt-opt prints the
  // located message alone unless --mlir-print-op-on-diagnostic asks for the
  // dump (the option is read when the context is created, below).
  if (llvm::cl::Option *printOp = llvm::cl::getRegisteredOptions().lookup(
          "mlir-print-op-on-diagnostic");
      printOp && !printOp->getNumOccurrences())
    printOp->addOccurrence(0, printOp->ArgStr, "false");
  mlir::MlirOptMainConfig config =
      mlir::MlirOptMainConfig::createFromCLOptions();
  // What mlir-opt's own main does for these two before reading any input.
  if (config.shouldShowDialects()) {
    llvm::outs() << "Available Dialects: ";
    llvm::interleave(registry.getDialectNames(), llvm::outs(), ",");
    llvm::outs() << "\n";
    return EXIT_SUCCESS;
  }
  if (config.shouldListPasses()) {
    mlir::printRegisteredPasses();
    return EXIT_SUCCESS;
  }

  if (rt::Status s = rt::checkOutputIsNotInput({"-o", outputFile},
                                               {{"the input", inputFile}});
      !s)
    return fail(s.message());
  std::unique_ptr<llvm::MemoryBuffer> buffer;
  if (rt::Status s = mlir::gpuopt::readMlirBuffer(inputFile, buffer); !s)
    return fail(s.message());

  if (outputFile == "-")
    return mlir::asMainReturnCode(
        mlir::MlirOptMain(llvm::outs(), std::move(buffer), registry, config));

  // The result is collected in memory (it is the size of the IR) so that the
  // destination is touched only once the whole pipeline has succeeded.
  std::string result;
  llvm::raw_string_ostream os(result);
  if (mlir::failed(mlir::MlirOptMain(os, std::move(buffer), registry, config)))
    return EXIT_FAILURE;
  if (rt::Status s = rt::writeFileBytes(
          outputFile, reinterpret_cast<const uint8_t *>(result.data()),
          result.size());
      !s)
    return fail(s.message());
  return EXIT_SUCCESS;
}
