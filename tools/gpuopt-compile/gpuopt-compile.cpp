//===- gpuopt-compile.cpp - compile a seg graph into a model library ------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
//   gpuopt-compile MODEL.mlir --target=cpu -o model.so
//                  [--pipeline=gpuopt-optimize] [--entry=forward]
//
// Parses and verifies the graph, runs the optional pipeline, and hands the
// module to the chosen target, which writes a shared library implementing
// include/gpuopt/Runtime/ModelAbi.h. Every failure is a located message on
// stderr and exit code 1.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/InitAll.h"
#include "gpuopt/Target/Cpu/CpuTarget.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace {
llvm::cl::OptionCategory category("gpuopt-compile options");

llvm::cl::opt<std::string> inputFile(llvm::cl::Positional,
                                     llvm::cl::desc("<model.mlir>"),
                                     llvm::cl::init("-"),
                                     llvm::cl::cat(category));

llvm::cl::opt<std::string> outputFile("o",
                                      llvm::cl::desc("the library to write"),
                                      llvm::cl::value_desc("model.so"),
                                      llvm::cl::cat(category));

llvm::cl::opt<std::string>
    target("target", llvm::cl::desc("what to compile for: cpu (the host CPU)"),
           llvm::cl::init("cpu"), llvm::cl::cat(category));

llvm::cl::opt<std::string> pipeline(
    "pipeline",
    llvm::cl::desc("gpuopt-opt pass pipeline to run first, in textual form "
                   "(e.g. gpuopt-optimize)"),
    llvm::cl::init(""), llvm::cl::cat(category));

llvm::cl::opt<std::string> entry("entry",
                                 llvm::cl::desc("the function to compile"),
                                 llvm::cl::init("forward"),
                                 llvm::cl::cat(category));

/// Prints `msg` as a gpuopt-compile error and returns the failing exit code.
int fail(const llvm::Twine &msg) {
  llvm::errs() << "gpuopt-compile: error: " << msg << "\n";
  return 1;
}

int compileMain() {
  if (outputFile.empty())
    return fail("no output file: pass -o MODEL.so");
  if (target != "cpu" && target != "cuda")
    return fail("unknown target '" + target + "' (targets: cpu, cuda)");
  if (target == "cuda")
    return fail("--target=cuda is not available in this build");

  DialectRegistry registry;
  mlir::gpuopt::registerAllDialects(registry);
  mlir::gpuopt::registerAllPasses();
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  // The messages locate the problem; a dump of the (lowered) module would
  // bury them.
  context.printOpOnDiagnostic(false);

  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagHandler(sourceMgr, &context);
  std::string err;
  auto buffer = openInputFile(inputFile, &err);
  if (!buffer)
    return fail(err);
  sourceMgr.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return 1;

  mlir::gpuopt::CpuCompileOptions options;
  options.entry = entry;
  options.pipeline = pipeline;
  options.outputPath = outputFile;
  return failed(mlir::gpuopt::compileForCpu(*module, options)) ? 1 : 0;
}
} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  llvm::cl::HideUnrelatedOptions(category);
  llvm::cl::ParseCommandLineOptions(
      argc, argv,
      "gpuopt-compile: compile a seg graph into a model library\n\n"
      "  gpuopt-compile MODEL.mlir --target=cpu -o model.so "
      "[--pipeline=gpuopt-optimize]\n");
  return compileMain();
}
