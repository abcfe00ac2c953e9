//===- CpuJit.cpp - run a seg graph compiled for the host CPU -------------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Execution/CpuJit.h"

#include "gpuopt/Conversion/SegToLinalg/SegToLinalg.h"
#include "gpuopt/Pipelines/Pipelines.h"
#include "gpuopt/Runtime/Allocator.h"
#include "gpuopt/Runtime/CpuFeatures.h"
#include "gpuopt/Runtime/CpuKernels.h"
#include "gpuopt/Runtime/MemRef.h"
#include "gpuopt/Target/Cpu/CpuTarget.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/Mangling.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/TargetParser/Host.h"

#include <chrono>
#include <cstring>

using namespace mlir;
namespace rt = ::gpuopt::runtime;

namespace {

/// The float32 values of a host tensor, in place: weights stay in their
/// mapped file instead of being copied. The readers align every tensor to
/// its element size.
FailureOr<float *> asFloat32(const rt::HostTensor &t) {
  if (t.dtype != rt::DType::F32)
    return failure();
  return reinterpret_cast<float *>(const_cast<uint8_t *>(t.data.data()));
}

std::vector<int64_t> toVector(ArrayRef<int64_t> a) {
  return {a.begin(), a.end()};
}

} // namespace

LogicalResult mlir::gpuopt::runCpuJit(ModuleOp module, StringRef entry,
                                      const rt::SafetensorsFile &weights,
                                      ArrayRef<rt::HostTensor> inputs,
                                      SmallVectorImpl<rt::HostTensor> &outputs,
                                      const RunOptions &options) {
  auto func = module.lookupSymbol<func::FuncOp>(entry);
  if (!func)
    return module.emitError("no function named @") << entry;
  // A GPUOPT_CPU_ISA the kernels cannot run is refused before compiling.
  if (std::string error; !rt::checkCpuIsa(error))
    return emitError(func.getLoc(), error);
  if (failed(convertSegParamsToArguments(module)))
    return failure();
  // Code for a level this CPU lacks would die with SIGILL.
  std::string cpuError;
  FailureOr<CpuLevelTarget> cpu = getCpuLevelTarget(options.cpu, cpuError);
  if (failed(cpu))
    return func.emitError(cpuError);
  std::vector<std::string> missing = rt::missingCpuFeatures(cpu->required);
  if (!missing.empty())
    return func.emitError("--cpu=")
           << cpu->level << " needs " << rt::joinCpuFeatures(cpu->required)
           << "; this CPU lacks " << rt::joinCpuFeatures(missing) << ": use "
           << rt::cpuLevelsForThisCpu();

  // Bind every argument before lowering: inputs first, then parameters.
  FunctionType type = func.getFunctionType();
  // Arguments point at the caller's tensors, results at `results`.
  std::vector<float *> buffers;
  std::vector<std::vector<float>> results;
  std::vector<std::vector<int64_t>> shapes;
  for (auto [i, argType] : llvm::enumerate(type.getInputs())) {
    auto tensor = dyn_cast<RankedTensorType>(argType);
    if (!tensor || !tensor.hasStaticShape() || !tensor.getElementType().isF32())
      return func.emitError("the CPU backend takes statically shaped f32 "
                            "tensors; argument ")
             << i << " is " << argType;
    std::vector<int64_t> shape = toVector(tensor.getShape());
    const rt::HostTensor *host = nullptr;
    std::string what;
    if (auto name = func.getArgAttrOfType<StringAttr>(i, "seg.param")) {
      auto it = weights.tensors.find(name.str());
      if (it == weights.tensors.end())
        return func.emitError("parameter '")
               << name.getValue() << "' is not in the weights file";
      host = &it->second;
      what = "parameter '" + name.str() + "'";
    } else {
      if (i >= inputs.size())
        return func.emitError("@") << entry << " takes more inputs than given";
      host = &inputs[i];
      what = "input " + std::to_string(i);
    }
    if (host->shape != shape)
      return func.emitError()
             << what << " has shape " << rt::formatShape(host->shape)
             << ", but @" << entry << " expects " << tensor;
    FailureOr<float *> values = asFloat32(*host);
    if (failed(values))
      return func.emitError() << what << " is " << rt::dtypeName(host->dtype)
                              << "; the CPU backend takes F32";
    buffers.push_back(*values);
    shapes.push_back(shape);
  }
  size_t numInputs = buffers.size();
  // Bound: the names are not needed any more (and LLVM does not know them).
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    func.removeArgAttr(i, "seg.param");

  // The lowering replaces `func`: diagnostics after it use its location.
  Location funcLoc = func.getLoc();
  // Lower and JIT.
  auto clock = [] { return std::chrono::steady_clock::now(); };
  auto ms = [](auto d) {
    return std::chrono::duration<double, std::milli>(d).count();
  };
  auto start = clock();
  PassManager pm(module.getContext());
  if (failed(buildCpuLoweringPipeline(pm)))
    return module.emitError("cannot build the CPU pipeline");
  if (failed(pm.run(module)))
    return module.emitError("the CPU lowering failed");
  // After the lowering, whose first pass proved every size below the tensor
  // limit (an unchecked count could wrap here).
  for (auto [i, resultType] : llvm::enumerate(type.getResults())) {
    auto tensor = dyn_cast<RankedTensorType>(resultType);
    if (!tensor || !tensor.hasStaticShape() || !tensor.getElementType().isF32())
      return emitError(funcLoc, "the CPU backend returns statically shaped f32 "
                                "tensors; result ")
             << i << " is " << resultType;
    if (!rt::tryAllocate(
            [&] { results.emplace_back(tensor.getNumElements()); }))
      return emitError(funcLoc, "out of memory allocating result ")
             << i << " (" << tensor << ")";
    shapes.push_back(toVector(tensor.getShape()));
  }
  for (std::vector<float> &result : results)
    buffers.push_back(result.data());
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  DialectRegistry translations;
  registerAllToLLVMIRTranslations(translations);
  module.getContext()->appendDialectRegistry(translations);
  ExecutionEngineOptions engineOptions;
  // Optimise for the chosen level (its vector width drives LLVM's
  // vectorizers); the engine generates code with the same machine.
  llvm::orc::JITTargetMachineBuilder builder(
      llvm::Triple(llvm::sys::getProcessTriple()));
  builder.setCPU(cpu->llvmCpu);
  builder.addFeatures(cpu->llvmFeatures);
  builder.setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  auto machine = builder.createTargetMachine();
  if (!machine) {
    std::string message = llvm::toString(machine.takeError());
    return emitError(funcLoc, "cannot create an LLVM target machine for --cpu=")
           << cpu->level << ": " << message;
  }
  // `transformer` is a function_ref: the function must outlive the options.
  // ExecutionEngine adds an `_mlir_<name>` wrapper per function that only
  // unpacks a void** into arguments: tens of thousands of loads for a graph
  // of 10^4 ops, which -O3 and the instruction selector took ~80 s over. Left
  // to the fast path like the graph's own glue (--outline-linalg-ops).
  std::function<llvm::Error(llvm::Module *)> optimize =
      makeLlvmOptimizer(machine->get());
  std::function<llvm::Error(llvm::Module *)> transformer =
      [&optimize](llvm::Module *llvmModule) {
        for (llvm::Function &fn : *llvmModule)
          if (!fn.isDeclaration() && fn.getName().starts_with("_mlir_") &&
              !fn.hasFnAttribute(llvm::Attribute::AlwaysInline)) {
            fn.addFnAttr(llvm::Attribute::NoInline);
            fn.addFnAttr(llvm::Attribute::OptimizeNone);
          }
        return optimize(llvmModule);
      };
  engineOptions.transformer = transformer;
  SmallVector<StringRef> libs = {GPUOPT_MLIR_C_RUNNER_UTILS};
  engineOptions.sharedLibPaths = libs;
  auto engine =
      ExecutionEngine::create(module, engineOptions, std::move(*machine));
  if (!engine) {
    std::string message = llvm::toString(engine.takeError());
    return module.emitError("JIT compilation failed: ") << message;
  }
  // The kernels the lowering calls are linked into this program.
  (*engine)->registerSymbols([](llvm::orc::MangleAndInterner interner) {
    llvm::orc::SymbolMap map;
    for (const rt::KernelSymbol *s = rt::getCpuKernelSymbols(); s->name; ++s)
      map[interner(s->name)] = {llvm::orc::ExecutorAddr::fromPtr(s->address),
                                llvm::JITSymbolFlags::Exported};
    return map;
  });
  if (options.loadMs)
    *options.loadMs = ms(clock() - start);

  std::vector<rt::DenseMemRef> descriptors;
  for (auto [buffer, shape] : llvm::zip_equal(buffers, shapes))
    descriptors.emplace_back(shape, buffer);
  SmallVector<void *> pointers, args;
  for (rt::DenseMemRef &d : descriptors)
    pointers.push_back(d.get());
  for (void *&p : pointers)
    args.push_back(&p);
  std::string symbol = ("_mlir_ciface_" + entry).str();
  auto packed = (*engine)->lookupPacked(symbol);
  if (!packed) {
    std::string message = llvm::toString(packed.takeError());
    return module.emitError("calling ") << symbol << " failed: " << message;
  }
  for (unsigned run = 0; run < std::max(1u, options.runs); ++run) {
    auto runStart = clock();
    // Through the allocator's guard: a buffer that cannot be allocated is an
    // error, not a null pointer the generated code writes through.
    if (std::string error;
        !::gpuopt::runtime::callGenerated(*packed, args.data(), error))
      return emitError(funcLoc, "running @") << entry << " failed: " << error;
    if (options.runMs)
      options.runMs->push_back(ms(clock() - runStart));
  }
  outputs.clear();
  for (size_t i = numInputs; i < buffers.size(); ++i) {
    const std::vector<float> &result = results[i - numInputs];
    rt::HostTensor out;
    out.dtype = rt::DType::F32;
    out.shape = shapes[i];
    if (!rt::tryAllocate(
            [&] { out.data.resize(result.size() * sizeof(float)); }))
      return emitError(funcLoc, "out of memory copying result ")
             << i - numInputs << " (" << rt::formatShape(out.shape) << ")";
    if (!result.empty())
      std::memcpy(out.data.data(), result.data(), out.data.size());
    outputs.push_back(std::move(out));
  }
  return success();
}
