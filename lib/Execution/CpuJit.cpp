//===- CpuJit.cpp - run a seg graph compiled for the host CPU -------------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Execution/CpuJit.h"

#include "gpuopt/Conversion/SegToLinalg/SegToLinalg.h"
#include "gpuopt/Dialect/Seg/Transforms/LoadTime.h"
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

#include <array>
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

/// One lowered function and what it is called with: a buffer and shape per
/// argument, then per result (out-parameters after the lowering).
struct Call {
  std::string name;
  /// " of @<name>" in messages about the initializer, "" for the forward.
  std::string of;
  LocationAttr loc;
  std::vector<float *> buffers;
  std::vector<std::vector<int64_t>> shapes;
  /// (argument position, index of the initializer's result) of the
  /// arguments marked seg.derived.
  std::vector<std::pair<size_t, int64_t>> derived;
  SmallVector<Type> resultTypes;
  std::vector<std::vector<float>> results;
  std::vector<rt::DenseMemRef> descriptors;
  SmallVector<void *> pointers, args;
};

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

  // The load-time work (LoadTime.h: e.g. a seg.fold_batch_norm of
  // parameters) moves into @<entry>_init, which runs once at load; @<entry>
  // runs per inference and reads the initializer's results.
  FailureOr<seg::SplitLoadTimeResult> split = seg::splitLoadTime(module, entry);
  if (failed(split))
    return failure();
  if (failed(convertSegParamsToArguments(module)))
    return failure();
  func::FuncOp init = split->init;
  func = split->entry;
  std::string initName = init.getSymName().str();

  // Bind every argument before lowering: the caller's inputs, the weights
  // (by their seg.param names) and, for @<entry>, the initializer's results
  // (by their seg.derived index; their storage is allocated after the
  // lowering proved every size below the tensor limit).
  std::vector<Call> calls(2);
  Call &initCall = calls[0], &forwardCall = calls[1];
  std::array<func::FuncOp, 2> fns = {init, func};
  for (auto [fn, call] : llvm::zip_equal(fns, calls)) {
    StringRef name = fn.getSymName();
    unsigned numInputs = 0;
    call.loc = fn.getLoc();
    call.name = name.str();
    // The forward's messages name no function (as before the split).
    if (fn == init)
      call.of = (" of @" + name).str();
    for (auto [i, argType] : llvm::enumerate(fn.getArgumentTypes())) {
      auto tensor = dyn_cast<RankedTensorType>(argType);
      if (!tensor || !tensor.hasStaticShape() ||
          !tensor.getElementType().isF32())
        return fn.emitError("the CPU backend takes statically shaped f32 "
                            "tensors; argument ")
               << i << call.of << " is " << argType;
      std::vector<int64_t> shape = toVector(tensor.getShape());
      call.shapes.push_back(shape);
      if (auto index =
              fn.getArgAttrOfType<IntegerAttr>(i, seg::kDerivedAttrName)) {
        call.derived.emplace_back(call.buffers.size(), index.getInt());
        call.buffers.push_back(nullptr);
        continue;
      }
      const rt::HostTensor *host = nullptr;
      std::string what;
      if (auto param = fn.getArgAttrOfType<StringAttr>(i, "seg.param")) {
        auto it = weights.tensors.find(param.str());
        if (it == weights.tensors.end())
          return fn.emitError("parameter '")
                 << param.getValue() << "' is not in the weights file";
        host = &it->second;
        what = "parameter '" + param.str() + "'";
      } else {
        if (numInputs >= inputs.size())
          return fn.emitError("@") << name << " takes more inputs than given";
        host = &inputs[numInputs];
        what = "input " + std::to_string(numInputs);
        ++numInputs;
      }
      if (host->shape != shape)
        return fn.emitError()
               << what << " has shape " << rt::formatShape(host->shape)
               << ", but @" << entry << " expects " << tensor;
      FailureOr<float *> values = asFloat32(*host);
      if (failed(values))
        return fn.emitError() << what << " is " << rt::dtypeName(host->dtype)
                              << "; the CPU backend takes F32";
      call.buffers.push_back(*values);
    }
    call.resultTypes = llvm::to_vector(fn.getResultTypes());
    // Bound: the attributes are not needed any more (and LLVM does not know
    // them).
    for (unsigned i = 0; i < fn.getNumArguments(); ++i) {
      fn.removeArgAttr(i, "seg.param");
      fn.removeArgAttr(i, seg::kDerivedAttrName);
    }
  }

  // Lower and JIT (the lowering replaces the functions: diagnostics after it
  // use the locations kept in `calls`).
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
  // Results are out-parameters after the lowering: storage for the
  // initializer's (`derived`, read by every forward) and the forward's.
  for (Call &call : calls)
    for (auto [i, resultType] : llvm::enumerate(call.resultTypes)) {
      auto tensor = dyn_cast<RankedTensorType>(resultType);
      if (!tensor || !tensor.hasStaticShape() ||
          !tensor.getElementType().isF32())
        return emitError(call.loc, "the CPU backend returns statically shaped "
                                   "f32 tensors; result ")
               << i << call.of << " is " << resultType;
      if (!rt::tryAllocate(
              [&] { call.results.emplace_back(tensor.getNumElements()); }))
        return emitError(call.loc, "out of memory allocating result ")
               << i << call.of << " (" << tensor << ")";
      call.shapes.push_back(toVector(tensor.getShape()));
    }
  for (auto [position, index] : forwardCall.derived) {
    if (index < 0 || static_cast<size_t>(index) >= initCall.results.size())
      return emitError(forwardCall.loc, "argument ")
             << position << " of @" << entry << " is seg.derived = " << index
             << ", but @" << initName << " has " << initCall.results.size()
             << " result(s)";
    forwardCall.buffers[position] = initCall.results[index].data();
  }
  for (Call &call : calls) {
    for (std::vector<float> &result : call.results)
      call.buffers.push_back(result.data());
    for (auto [buffer, shape] : llvm::zip_equal(call.buffers, call.shapes))
      call.descriptors.emplace_back(shape, buffer);
    for (rt::DenseMemRef &d : call.descriptors)
      call.pointers.push_back(d.get());
    for (void *&p : call.pointers)
      call.args.push_back(&p);
  }
  Location funcLoc = forwardCall.loc;
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
  SmallVector<::gpuopt::runtime::GeneratedFunction, 2> entryPoints;
  for (Call &call : calls) {
    std::string symbol = "_mlir_ciface_" + call.name;
    auto packed = (*engine)->lookupPacked(symbol);
    if (!packed) {
      std::string message = llvm::toString(packed.takeError());
      return module.emitError("calling ") << symbol << " failed: " << message;
    }
    entryPoints.push_back(*packed);
  }
  // Through the allocator's guard: a buffer that cannot be allocated is an
  // error, not a null pointer the generated code writes through.
  auto invoke = [&](size_t index) -> LogicalResult {
    Call &call = calls[index];
    if (std::string error; !::gpuopt::runtime::callGenerated(
            entryPoints[index], call.args.data(), error))
      return emitError(call.loc, "running @")
             << call.name << " failed: " << error;
    return success();
  };
  // The load-time work, once.
  if (failed(invoke(0)))
    return failure();
  if (options.loadMs)
    *options.loadMs = ms(clock() - start);

  for (unsigned run = 0; run < std::max(1u, options.runs); ++run) {
    auto runStart = clock();
    if (failed(invoke(1)))
      return failure();
    if (options.runMs)
      options.runMs->push_back(ms(clock() - runStart));
  }
  outputs.clear();
  size_t numArgs = forwardCall.buffers.size() - forwardCall.results.size();
  for (auto [i, result] : llvm::enumerate(forwardCall.results)) {
    rt::HostTensor out;
    out.dtype = rt::DType::F32;
    out.shape = forwardCall.shapes[numArgs + i];
    if (!rt::tryAllocate(
            [&] { out.data.resize(result.size() * sizeof(float)); }))
      return emitError(funcLoc, "out of memory copying result ")
             << i << " (" << rt::formatShape(out.shape) << ")";
    if (!result.empty())
      std::memcpy(out.data.data(), result.data(), out.data.size());
    outputs.push_back(std::move(out));
  }
  return success();
}
