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
// Parses and verifies the graph, runs the optional pipeline, and hands the
// module to the chosen target: cpu writes a shared library implementing
// include/gpuopt/Runtime/ModelAbi.h, cuda an artifact for the CUDA runtime
// (include/gpuopt/Runtime/CudaArtifact.h). Every failure is a located
// message on stderr and exit code 1.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/InitAll.h"
#include "gpuopt/MlirSource.h"
#include "gpuopt/Runtime/FileIO.h"
#include "gpuopt/Target/Cpu/CpuTarget.h"
#include "gpuopt/Target/Cuda/CudaTarget.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <csignal>

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

llvm::cl::opt<std::string>
    target("target",
           llvm::cl::desc("what to compile for: cpu (the host CPU) or cuda "
                          "(NVIDIA GPUs)"),
           llvm::cl::init("cpu"), llvm::cl::cat(category));

llvm::cl::opt<std::string>
    cpu("cpu",
        llvm::cl::desc("--target=cpu: the CPUs the generated code runs on: "
                       "native (this one), or x86-64, x86-64-v2, x86-64-v3 "
                       "(AVX2, FMA), x86-64-v4 (AVX-512) for every CPU of "
                       "that level"),
        llvm::cl::init("native"), llvm::cl::cat(category));

llvm::cl::opt<std::string>
    emit("emit",
         llvm::cl::desc("--target=cpu: what -o receives: lib (the model "
                        "library) or asm (the generated code's assembly, "
                        "without the runtime)"),
         llvm::cl::init("lib"), llvm::cl::cat(category));

llvm::cl::opt<std::string>
    cudaArch("cuda-arch",
             llvm::cl::desc("--target=cuda: GPU architectures, sm_NN[,sm_MM] "
                            "(sm_90: H100/H200, sm_86: RTX 30xx/A10); one "
                            "kernel image each"),
             llvm::cl::init("sm_90"), llvm::cl::cat(category));

llvm::cl::opt<std::string>
    cudaFormat("cuda-format",
               llvm::cl::desc("--target=cuda: kernel images, fatbin (cubin "
                              "and PTX), cubin (assembled by ptxas now) or "
                              "ptx (compiled by the driver at load)"),
               llvm::cl::init("fatbin"), llvm::cl::cat(category));

llvm::cl::opt<std::string>
    cudaToolkit("cuda-toolkit",
                llvm::cl::desc("--target=cuda: CUDA toolkit root (ptxas, "
                               "libdevice)"),
                llvm::cl::init("/usr/local/cuda"), llvm::cl::cat(category));

llvm::cl::opt<int64_t> cudaBlockSize(
    "cuda-block-size",
    llvm::cl::desc("--target=cuda: threads per block of the kernels"),
    llvm::cl::init(256), llvm::cl::cat(category));

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
  if (target == "cuda" && cpu.getNumOccurrences())
    return fail("--cpu applies to --target=cpu, not --target=cuda");
  if (target == "cuda" && emit.getNumOccurrences())
    return fail("--emit applies to --target=cpu, not --target=cuda");
  if (emit != "lib" && emit != "asm")
    return fail("--emit must be lib or asm, got '" + emit + "'");
  if (std::string error;
      target == "cpu" && failed(mlir::gpuopt::getCpuLevelTarget(cpu, error)))
    return fail(error);
  if (target == "cuda") {
    llvm::SmallVector<llvm::StringRef> archs;
    llvm::StringRef(cudaArch).split(archs, ',');
    for (llvm::StringRef arch : archs) {
      unsigned sm = 0;
      if (!arch.consume_front("sm_") || arch.getAsInteger(10, sm) || sm < 50)
        return fail("--cuda-arch must be sm_NN[,sm_MM...] with NN >= 50, got "
                    "'" +
                    cudaArch + "'");
    }
    if (cudaFormat != "fatbin" && cudaFormat != "cubin" && cudaFormat != "ptx")
      return fail("--cuda-format must be fatbin, cubin or ptx, got '" +
                  cudaFormat + "'");
  }

  if (rt::Status s = rt::checkOutputIsNotInput({"-o", outputFile},
                                               {{"the input", inputFile}});
      !s)
    return fail(s.message());

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

  if (target == "cuda") {
    mlir::gpuopt::CudaCompileOptions options;
    options.entry = entry;
    options.pipeline = pipeline;
    options.outputPath = output.inner();
    options.chip = cudaArch;
    // PTX ISA 8.0 (CUDA 12.0) covers sm_50 to sm_90.
    options.features = "+ptx80";
    options.format = cudaFormat == "cubin" ? "bin"
                     : cudaFormat == "ptx" ? "isa"
                                           : "fatbin";
    options.toolkit = cudaToolkit;
    options.blockSize = cudaBlockSize;
    return commit(mlir::gpuopt::compileForCuda(*module, options));
  }

  mlir::gpuopt::CpuCompileOptions options;
  options.entry = entry;
  options.pipeline = pipeline;
  options.outputPath = output.inner();
  options.cpu = cpu;
  options.emitAssembly = emit == "asm";
  return commit(mlir::gpuopt::compileForCpu(*module, options));
}
} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  // InitLLVM treats SIGXFSZ as a crash; ignored, a write beyond the file size
  // limit fails with EFBIG instead, which the writers report as an error.
  std::signal(SIGXFSZ, SIG_IGN);
  llvm::cl::HideUnrelatedOptions(category);
  llvm::cl::ParseCommandLineOptions(
      argc, argv,
      "gpuopt-compile: compile a seg graph into a model library\n\n"
      "  gpuopt-compile MODEL.mlir --target=cpu -o model.so "
      "[--cpu=x86-64-v3] [--pipeline=gpuopt-optimize]\n"
      "  gpuopt-compile MODEL.mlir --target=cuda --cuda-arch=sm_90 "
      "-o model.gpuopt\n");
  return compileMain();
}
