//===- gpuopt-compile.cpp - compile a seg graph into a model library ------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
//   gpuopt-compile MODEL.mlir --target=cpu [--cpu=x86-64-v3] -o model.so
//   gpuopt-compile MODEL.mlir --target=cuda --cuda-arch=sm_90 -o model.gpuopt
//                  [--pipeline=gpuopt-optimize] [--entry=forward]
//
// Parses and verifies the graph and hands the module to the target --target
// names in the registry of include/gpuopt/Target/TargetRegistry.h (each
// target adds its own flags): cpu writes a shared library implementing
// runtime/include/gpuopt/Runtime/ModelAbi.h, cuda an artifact for the CUDA
// runtime (runtime/include/gpuopt/Runtime/CudaArtifact.h). Every failure is a
// located message on stderr and exit code 1.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/CommandLine.h"
#include "gpuopt/InitAll.h"
#include "gpuopt/MlirSource.h"
#include "gpuopt/Runtime/FileIO.h"
#include "gpuopt/Target/TargetRegistry.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <csignal>
#include <memory>
#include <string>
#include <vector>

using namespace mlir;
namespace rt = ::gpuopt::runtime;

namespace {
llvm::cl::OptionCategory category("gpuopt-compile options");

llvm::cl::opt<std::string> inputFile(llvm::cl::Positional,
                                     llvm::cl::desc("<model.mlir>"),
                                     llvm::cl::init("-"),
                                     llvm::cl::cat(category));

llvm::cl::opt<std::string>
    outputFile("o",
               llvm::cl::desc("the library (cpu) or artifact (cuda) to write"),
               llvm::cl::value_desc("model.so"), llvm::cl::cat(category));

llvm::cl::opt<std::string> target("target", llvm::cl::init("cpu"),
                                  llvm::cl::cat(category));

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

/// The registered targets, each with its flags, created before the command
/// line is parsed.
struct Targets {
  std::vector<const mlir::gpuopt::TargetRegistration *> registrations;
  std::vector<std::unique_ptr<mlir::gpuopt::CompileTarget>> instances;
  /// "cpu, cuda".
  std::string names() const {
    std::string list;
    for (const auto *r : registrations)
      list += (list.empty() ? "" : ", ") + r->name;
    return list;
  }
};

int compileMain(Targets &targets) {
  if (outputFile.empty())
    return fail("no output file: pass -o MODEL.so");
  mlir::gpuopt::CompileTarget *selected = nullptr;
  for (auto [reg, instance] :
       llvm::zip_equal(targets.registrations, targets.instances))
    if (reg->name == target)
      selected = instance.get();
  if (!selected)
    return fail("unknown target '" + target + "' (targets: " + targets.names() +
                ")");
  // Another target's flag would be ignored: refuse it.
  for (auto [reg, instance] :
       llvm::zip_equal(targets.registrations, targets.instances))
    if (instance.get() != selected)
      for (llvm::cl::Option *flag : instance->flags())
        if (flag->getNumOccurrences())
          return fail("--" + flag->ArgStr + " applies to --target=" +
                      reg->name + ", not --target=" + target);
  if (std::string error; failed(selected->validateFlags(error)))
    return fail(error);

  // No output may overwrite an input or another output.
  std::vector<rt::NamedPath> inputs = {{"the input", inputFile}};
  SmallVector<mlir::gpuopt::CompileTarget::FlagFile> flagFiles =
      selected->getFlagFiles();
  for (const auto &file : flagFiles)
    if (!file.written)
      inputs.push_back({file.flag, file.path});
  if (rt::Status s = rt::checkOutputIsNotInput({"-o", outputFile}, inputs); !s)
    return fail(s.message());
  for (const auto &file : flagFiles) {
    if (!file.written)
      continue;
    if (rt::Status s =
            rt::checkOutputIsNotInput({file.flag, file.path}, inputs);
        !s)
      return fail(s.message());
    // (Neither need exist yet: compared as absolute paths too.)
    auto absolute = [](StringRef path) {
      SmallString<256> full(path);
      llvm::sys::fs::make_absolute(full);
      llvm::sys::path::remove_dots(full, /*remove_dot_dot=*/true);
      return std::string(full);
    };
    if (llvm::sys::fs::equivalent(file.path, outputFile) ||
        absolute(file.path) == absolute(outputFile))
      return fail(file.flag + " " + file.path + " is also -o " + outputFile +
                  ": two outputs in one file");
  }

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
  rt::Status read;
  OwningOpRef<ModuleOp> module =
      mlir::gpuopt::parseMlirSource(inputFile, sourceMgr, &context, read);
  if (!read)
    return fail(read.message());
  if (!module)
    return 1;

  // The target writes (the linker links) into a fresh directory next to the
  // output, renamed over it only on success: a failure leaves an existing
  // library or artifact as it was.
  rt::AtomicOutputDir output;
  if (rt::Status s = output.open(outputFile); !s)
    return fail(s.message());
  auto commit = [&](LogicalResult compiled) {
    if (failed(compiled))
      return 1;
    if (rt::Status s = output.commit(); !s)
      return fail(s.message());
    return 0;
  };

  mlir::gpuopt::TargetCompileRequest request;
  request.entry = entry;
  request.pipeline = pipeline;
  request.outputPath = output.inner();
  return commit(selected->compile(*module, request));
}
} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  // InitLLVM treats SIGXFSZ as a crash; ignored, a write beyond the file size
  // limit fails with EFBIG instead, which the writers report as an error.
  std::signal(SIGXFSZ, SIG_IGN);
  mlir::gpuopt::registerAllTargets();
  Targets targets;
  std::string targetHelp = "what to compile for:";
  for (const mlir::gpuopt::TargetRegistration &reg :
       mlir::gpuopt::getRegisteredTargets()) {
    targets.registrations.push_back(&reg);
    targets.instances.push_back(reg.create(category));
    targetHelp += (targets.instances.size() > 1 ? ", " : " ") + reg.name +
                  " (" + reg.description + ")";
  }
  target.setDescription(targetHelp);
  llvm::cl::HideUnrelatedOptions(category);
  llvm::cl::ParseCommandLineOptions(
      argc, argv,
      "gpuopt-compile: compile a seg graph into a model library\n\n"
      "  gpuopt-compile MODEL.mlir --target=cpu -o model.so "
      "[--cpu=x86-64-v3] [--pipeline=gpuopt-optimize]\n"
      "  gpuopt-compile MODEL.mlir --target=cuda --cuda-arch=sm_90 "
      "-o model.gpuopt\n");
  if (!mlir::gpuopt::checkNoRepeatedOptions("gpuopt-compile"))
    return 1;
  return compileMain(targets);
}
