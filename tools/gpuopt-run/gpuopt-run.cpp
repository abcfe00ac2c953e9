//===- gpuopt-run.cpp - run a seg graph ----------------------------------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
//   gpuopt-run MODEL.mlir --weights=W.safetensors --input=@x.npy
//              [--input=@x2.npy ...] --output=@y.npy --backend=reference|cpu
//              [--cpu=native|x86-64-v3|...]
//              [--strict-weights] [--max-header-bytes=N] [--max-tensors=N]
//              [--max-rank=N]
//   gpuopt-run MODEL.so|MODEL.gpuopt --weights=W.safetensors --input=@x.npy
//              --output=@y.npy [--runs=N] [--strict-weights]
//              [--device=N|emulate]
//   gpuopt-run --dump MODEL.so|MODEL.gpuopt
//
// Parses and verifies the graph, binds the weights, reads the inputs, runs the
// entry function on the chosen backend and writes the outputs. An artifact of
// gpuopt-compile (a CPU model library or a CUDA artifact) runs through the
// model runtime instead (RunCompiled.cpp, no MLIR). --dump prints the artifact
// of a compiled model of any target (runtime/include/gpuopt/Runtime/
// Artifact.h) as text, after verifying it, without loading or running
// anything. Every failure is a located message on stderr and exit code 1.
//
//===----------------------------------------------------------------------===//

#include "RunCompiled.h"

#include "gpuopt/CommandLine.h"

#include "gpuopt/Dialect/Seg/IR/SegOps.h"
#include "gpuopt/Execution/CpuJit.h"
#include "gpuopt/InitAll.h"
#include "gpuopt/MlirSource.h"
#include "gpuopt/Reference/Interpreter.h"
#include "gpuopt/Runtime/Artifact.h"
#include "gpuopt/Runtime/CpuKernels.h"
#include "gpuopt/Runtime/FileIO.h"
#include "gpuopt/Runtime/ModelAbi.h"
#include "gpuopt/Runtime/Npy.h"
#include "gpuopt/Runtime/Safetensors.h"
#include "gpuopt/Target/Cpu/CpuTarget.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <csignal>

using namespace mlir;
namespace rt = ::gpuopt::runtime;

namespace {
llvm::cl::OptionCategory category("gpuopt-run options");

llvm::cl::opt<std::string> inputFile(llvm::cl::Positional,
                                     llvm::cl::desc("<model.mlir>"),
                                     llvm::cl::init("-"),
                                     llvm::cl::cat(category));

llvm::cl::opt<std::string>
    weightsFile("weights",
                llvm::cl::desc("safetensors file binding every seg.param by "
                               "name (needed when the graph has parameters)"),
                llvm::cl::value_desc("file"), llvm::cl::cat(category));

llvm::cl::list<std::string> inputArgs(
    "input",
    llvm::cl::desc("@file.npy for the next argument of the entry "
                   "function (float32, C order); repeat per argument"),
    llvm::cl::value_desc("@file.npy"), llvm::cl::cat(category));

llvm::cl::list<std::string>
    outputArgs("output",
               llvm::cl::desc("@file.npy receiving the next result; repeat "
                              "per result (none: only print a summary)"),
               llvm::cl::value_desc("@file.npy"), llvm::cl::cat(category));

llvm::cl::opt<std::string>
    backend("backend",
            llvm::cl::desc("execution backend: reference (LibTorch/ATen on "
                           "the CPU, op by op) or cpu (compiled through "
                           "linalg and LLVM, JIT)"),
            llvm::cl::init("reference"), llvm::cl::cat(category));

llvm::cl::opt<std::string>
    cpu("cpu",
        llvm::cl::desc("--backend=cpu: the CPU level to generate code for: "
                       "native, x86-64, x86-64-v2, x86-64-v3 or x86-64-v4 "
                       "(e.g. x86-64-v3 runs the code an AVX2 machine runs)"),
        llvm::cl::init("native"), llvm::cl::cat(category));

llvm::cl::opt<std::string>
    entry("entry",
          llvm::cl::desc("function to run (default: @forward, or the only "
                         "function in the module)"),
          llvm::cl::init(""), llvm::cl::cat(category));

llvm::cl::opt<unsigned>
    runs("runs",
         llvm::cl::desc("inferences to run; load-time computations (weight "
                        "folding) run once; prints the median time"),
         llvm::cl::init(1), llvm::cl::cat(category));

llvm::cl::opt<bool> quiet("quiet",
                          llvm::cl::desc("do not print the run summary "
                                         "(warnings are still printed)"),
                          llvm::cl::init(false), llvm::cl::cat(category));

llvm::cl::opt<bool> strictWeights(
    "strict-weights",
    llvm::cl::desc("reject a weights file holding tensors that the graph does "
                   "not use (default: a warning)"),
    llvm::cl::init(false), llvm::cl::cat(category));

// Limits of the safetensors reader; the defaults are SafetensorsLimits'.
llvm::cl::opt<uint64_t> maxHeaderBytes(
    "max-header-bytes",
    llvm::cl::desc("largest safetensors JSON header to read, in bytes"),
    llvm::cl::init(rt::SafetensorsLimits().maxHeaderBytes),
    llvm::cl::cat(category));

llvm::cl::opt<uint64_t>
    maxTensors("max-tensors",
               llvm::cl::desc("most tensors a safetensors file may hold"),
               llvm::cl::init(rt::SafetensorsLimits().maxTensors),
               llvm::cl::cat(category));

llvm::cl::opt<uint64_t>
    maxRank("max-rank",
            llvm::cl::desc("highest rank of a tensor in a safetensors file"),
            llvm::cl::init(rt::SafetensorsLimits().maxRank),
            llvm::cl::cat(category));

llvm::cl::opt<std::string>
    device("device",
           llvm::cl::desc("CUDA artifacts: the ordinal of the GPU to run on, "
                          "or 'emulate' to run the artifact's host image and "
                          "launch plan on this CPU (no GPU needed)"),
           llvm::cl::value_desc("N|emulate"), llvm::cl::init("0"),
           llvm::cl::cat(category));
llvm::cl::opt<bool>
    dump("dump",
         llvm::cl::desc("print the artifact of a compiled model (a library of "
                        "--target=cpu or a .gpuopt file of --target=cuda) as "
                        "text, after verifying it; runs nothing"),
         llvm::cl::init(false), llvm::cl::cat(category));

/// Prints `msg` as a gpuopt-run error and returns the failing exit code.
int fail(const llvm::Twine &msg) {
  llvm::errs() << "gpuopt-run: error: " << msg << "\n";
  return 1;
}

/// Strips the mandatory `@` of a file argument.
FailureOr<std::string> filePath(StringRef flag, StringRef arg) {
  if (!arg.starts_with("@") || arg.size() < 2) {
    llvm::errs() << "gpuopt-run: error: --" << flag << "=" << arg
                 << ": expected @FILE.npy\n";
    return failure();
  }
  return arg.drop_front().str();
}

/// Finds the entry function.
FailureOr<func::FuncOp> findEntry(ModuleOp module) {
  if (!entry.empty()) {
    if (auto fn = module.lookupSymbol<func::FuncOp>(entry))
      return fn;
    module.emitError("no function named @") << entry << " in the module";
    return failure();
  }
  if (auto fn = module.lookupSymbol<func::FuncOp>("forward"))
    return fn;
  auto fns = llvm::to_vector(module.getOps<func::FuncOp>());
  if (fns.size() == 1)
    return fns.front();
  module.emitError("cannot choose the entry function: no @forward and ")
      << fns.size() << " functions; pass --entry=NAME";
  return failure();
}

/// Runs an artifact made by gpuopt-compile.
int runCompiled(::gpuopt::CompiledKind kind) {
  bool cuda = kind == ::gpuopt::CompiledKind::Cuda;
  std::string what =
      cuda ? " is a compiled CUDA model" : " is a compiled model library";
  if (backend.getNumOccurrences() && (cuda || backend != "cpu"))
    return fail(inputFile + what + "; --backend=" + backend +
                " does not apply");
  if (cpu.getNumOccurrences())
    return fail(inputFile + what + "; --cpu applies to gpuopt-compile");
  if (device.getNumOccurrences() && !cuda)
    return fail(inputFile + what + "; --device applies to CUDA artifacts");
  int deviceOrdinal = 0;
  if (device == "emulate") {
    deviceOrdinal = GPUOPT_DEVICE_EMULATE;
  } else if (llvm::StringRef(device).getAsInteger(10, deviceOrdinal) ||
             deviceOrdinal < 0) {
    return fail("--device must be a GPU ordinal (0, 1, ...) or 'emulate', "
                "got '" +
                device + "'");
  }
  ::gpuopt::CompiledRunArgs args;
  args.library = inputFile;
  args.weights = weightsFile;
  args.runs = runs;
  args.strictWeights = strictWeights;
  args.quiet = quiet;
  args.limits.maxHeaderBytes = maxHeaderBytes;
  args.limits.maxTensors = maxTensors;
  args.limits.maxRank = maxRank;
  args.device = deviceOrdinal;
  for (const std::string &arg : inputArgs) {
    FailureOr<std::string> path = filePath("input", arg);
    if (failed(path))
      return 1;
    args.inputs.push_back(*path);
  }
  for (const std::string &arg : outputArgs) {
    FailureOr<std::string> path = filePath("output", arg);
    if (failed(path))
      return 1;
    args.outputs.push_back(*path);
  }
  if (runs < 1)
    return fail("--runs must be at least 1");
  return ::gpuopt::runCompiledModel(args);
}

/// Refuses, before any file is read, an output that is one of the inputs.
/// (Each reader refuses a file that is not a regular one: the library
/// loader, readMlirSource, readSafetensors and readNpy.)
int checkFiles() {
  std::vector<rt::NamedPath> sources = {{"the model", inputFile},
                                        {"--weights", weightsFile}};
  for (const std::string &arg : inputArgs)
    sources.push_back({"--input", StringRef(arg).drop_front().str()});
  for (const std::string &arg : outputArgs) {
    FailureOr<std::string> path = filePath("output", arg);
    if (failed(path))
      return 1;
    if (rt::Status s = rt::checkOutputIsNotInput({"--output", *path}, sources);
        !s)
      return fail(s.message());
  }
  return 0;
}

/// --dump: reads, verifies and prints the artifact of `inputFile`.
int dumpArtifactFile() {
  if (weightsFile.getNumOccurrences() || !inputArgs.empty() ||
      !outputArgs.empty() || backend.getNumOccurrences() ||
      cpu.getNumOccurrences() || runs.getNumOccurrences() ||
      device.getNumOccurrences())
    return fail("--dump prints the artifact and runs nothing; it takes no "
                "--weights, --input, --output, --backend, --cpu, --runs or "
                "--device");
  std::vector<uint8_t> bytes;
  if (rt::Status s = rt::readArtifactFile(inputFile, bytes); !s)
    return fail(s.message());
  const ::gpuopt::artifact::Model *model = nullptr;
  if (rt::Status s =
          rt::verifyArtifact(bytes.data(), bytes.size(), inputFile, model);
      !s)
    return fail(s.message());
  llvm::outs() << rt::dumpArtifact(bytes.data());
  return 0;
}

int runMain() {
  if (dump)
    return dumpArtifactFile();
  if (int rc = checkFiles())
    return rc;
  if (::gpuopt::CompiledKind kind = ::gpuopt::getCompiledKind(inputFile);
      kind != ::gpuopt::CompiledKind::None)
    return runCompiled(kind);
  if (device.getNumOccurrences())
    return fail("--device applies to CUDA artifacts");
  if (backend != "reference" && backend != "cpu")
    return fail("backend '" + backend +
                "' is not available in this build (available: reference, cpu)");
  if (cpu.getNumOccurrences() && backend != "cpu")
    return fail("--cpu applies to --backend=cpu");
  if (std::string error;
      backend == "cpu" && failed(mlir::gpuopt::getCpuLevelTarget(cpu, error)))
    return fail(error);

  DialectRegistry registry;
  mlir::gpuopt::registerAllDialects(registry);
  mlir::gpuopt::registerAllPasses(); // the CPU pipeline names upstream passes
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  // Every message names its location; a note with the operation in generic
  // form (the whole function, for an error on the entry) would bury it.
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

  FailureOr<func::FuncOp> fn = findEntry(*module);
  if (failed(fn))
    return 1;

  rt::SafetensorsFile weights;
  bool hasParams = false;
  fn->walk([&](mlir::gpuopt::seg::ParamOp) { hasParams = true; });
  if (!weightsFile.empty()) {
    rt::SafetensorsLimits limits;
    limits.maxHeaderBytes = maxHeaderBytes;
    limits.maxTensors = maxTensors;
    limits.maxRank = maxRank;
    if (rt::Status s = rt::readSafetensors(weightsFile, weights, limits); !s)
      return fail(s.message());
  } else if (hasParams) {
    return fail("the graph has seg.param ops; pass --weights=FILE.safetensors");
  }

  std::vector<rt::HostTensor> inputs;
  for (const std::string &arg : inputArgs) {
    FailureOr<std::string> path = filePath("input", arg);
    if (failed(path))
      return 1;
    rt::HostTensor t;
    if (rt::Status s = rt::readNpy(*path, t); !s)
      return fail(s.message());
    inputs.push_back(std::move(t));
  }
  unsigned numArgs = fn->getNumArguments();
  if (inputs.size() != numArgs)
    return fail("@" + fn->getSymName() + " takes " + llvm::Twine(numArgs) +
                " input(s) but " + llvm::Twine(inputs.size()) +
                " --input given");
  unsigned numResults = fn->getNumResults();
  if (!outputArgs.empty() && outputArgs.size() != numResults)
    return fail("@" + fn->getSymName() + " returns " + llvm::Twine(numResults) +
                " result(s) but " + llvm::Twine(outputArgs.size()) +
                " --output given");

  if (runs < 1)
    return fail("--runs must be at least 1");

  // Extra tensors usually mean a checkpoint of another model or version.
  SmallVector<std::string> unused =
      mlir::gpuopt::reference::unusedWeights(*fn, weights);
  if (!unused.empty()) {
    std::string names;
    for (const std::string &name : ArrayRef(unused).take_front(3))
      names += (names.empty() ? "'" : ", '") + rt::escapeName(name) + "'";
    if (unused.size() > 3)
      names += ", ...";
    std::string msg = std::to_string(unused.size()) + " tensor(s) in " +
                      weightsFile + " are not used by the graph (" + names +
                      ")";
    if (strictWeights)
      return fail(msg + "; --strict-weights rejects them");
    // --quiet silences the summary, never a warning.
    llvm::errs() << "gpuopt-run: warning: " << msg << "\n";
  }
  SmallVector<rt::HostTensor> outputs;
  double loadMs = 0;
  SmallVector<double> runMs;
  mlir::gpuopt::RunOptions options;
  options.runs = runs;
  options.loadMs = &loadMs;
  options.runMs = &runMs;
  options.cpu = cpu;
  LogicalResult ran =
      backend == "cpu"
          ? mlir::gpuopt::runCpuJit(*module, fn->getSymName(), weights, inputs,
                                    outputs, options)
          : mlir::gpuopt::reference::runReference(*fn, weights, inputs, outputs,
                                                  options);
  if (failed(ran))
    return 1;

  for (auto [i, out] : llvm::enumerate(outputs)) {
    std::string dest = "(not written)";
    if (!outputArgs.empty()) {
      FailureOr<std::string> path = filePath("output", outputArgs[i]);
      if (failed(path))
        return 1;
      if (rt::Status s = rt::writeNpy(*path, out); !s)
        return fail(s.message());
      dest = *path;
    }
    if (!quiet)
      llvm::outs() << "output " << i << ": " << rt::formatShape(out.shape)
                   << " f32 -> " << dest << "\n";
  }
  if (!quiet) {
    llvm::sort(runMs);
    const char *isa = rt::getCpuIsaName();
    std::string kernels =
        backend == "cpu" && isa ? std::string(" (") + isa + " kernels)" : "";
    // One call is not an inference time: it includes the first touch of the
    // weights and buffers (and the thread pool's start).
    if (runs == 1)
      llvm::outs() << llvm::format("backend %s%s: load-time %.1f ms, first "
                                   "call (includes warm-up) %.1f ms\n",
                                   backend.c_str(), kernels.c_str(), loadMs,
                                   runMs.front());
    else
      llvm::outs() << llvm::format("backend %s%s: load-time %.1f ms, inference "
                                   "%.1f ms (median of %u)\n",
                                   backend.c_str(), kernels.c_str(), loadMs,
                                   runMs[runMs.size() / 2], unsigned(runs));
  }
  return 0;
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
      "gpuopt-run: execute a seg graph\n\n"
      "  gpuopt-run MODEL.mlir --weights=W.safetensors --input=@x.npy "
      "--output=@y.npy --backend=reference\n"
      "  gpuopt-run MODEL.so|MODEL.gpuopt --weights=W.safetensors "
      "--input=@x.npy --output=@y.npy\n"
      "  gpuopt-run --dump MODEL.so|MODEL.gpuopt\n");
  if (!mlir::gpuopt::checkNoRepeatedOptions("gpuopt-run"))
    return 1;
  return runMain();
}
