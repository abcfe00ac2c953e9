//===- CpuTarget.cpp - compile a seg graph into a model library -----------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// seg → (--seg-split-load-time) → --gpuopt-cpu-lowering → LLVM IR + the
// model-specific glue of runtime/include/gpuopt/Runtime/CompiledModel.h → host
// object
// (-O3) → `c++ -shared` with the model runtime archives.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Target/Cpu/CpuTarget.h"
#include "CpuTargetConfig.h"
#include "gpuopt/Target/HostCodegen.h"

#include "gpuopt/Conversion/SegToLinalg/SegToLinalg.h"
#include "gpuopt/Dialect/Seg/Transforms/Passes.h"
#include "gpuopt/Pipelines/Pipelines.h"
#include "gpuopt/Runtime/Artifact.h"
#include "gpuopt/Runtime/CompiledModel.h"
#include "gpuopt/Runtime/CpuFeatures.h"
#include "gpuopt/Runtime/MemRef.h"
#include "gpuopt/Runtime/ModelAbi.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"
#include "llvm/Transforms/Utils/Cloning.h"

using namespace mlir;
using mlir::gpuopt::createHostTargetMachine;
using mlir::gpuopt::emitHostCode;
using mlir::gpuopt::findHostCompiler;
using mlir::gpuopt::runCapturingOutput;
using mlir::gpuopt::ScratchFile;
namespace rt = ::gpuopt::runtime;
namespace fb = ::gpuopt::artifact;

namespace {

/// The symbols a model library exports
/// (runtime/include/gpuopt/Runtime/ModelAbi.h).
constexpr const char *kAbiSymbols[] = {
    "gpuopt_model_abi_version", "gpuopt_model_options_init",
    "gpuopt_model_create",      "gpuopt_model_destroy",
    "gpuopt_model_num_inputs",  "gpuopt_model_num_outputs",
    "gpuopt_model_input_shape", "gpuopt_model_output_shape",
    "gpuopt_model_run",         "gpuopt_set_num_threads",
    "gpuopt_get_num_threads",   "gpuopt_cpu_kernel_isa"};

/// The model runtime's static archives, baked in at configure time.
constexpr const char *kRuntimeArchives[] = GPUOPT_MODEL_RUNTIME_ARCHIVES;
/// Libraries they use, and the sanitizer flags of an instrumented build.
constexpr const char *kLinkFlags[] = GPUOPT_MODEL_LINK_FLAGS;

/// The static f32 shape of `type`, or failure.
FailureOr<SmallVector<int64_t>> staticF32Shape(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape() || !tensor.getElementType().isF32())
    return failure();
  return llvm::to_vector(tensor.getShape());
}

/// An f32 TensorType of the artifact schema.
std::unique_ptr<fb::TensorTypeT> tensorType(ArrayRef<int64_t> shape) {
  auto type = std::make_unique<fb::TensorTypeT>();
  type->dtype = fb::DType::F32;
  type->shape.assign(shape.begin(), shape.end());
  return type;
}

/// Describes @<entry>_init and @<entry> (after --seg-split-load-time and
/// seg.param binding) as an artifact::Model with a CpuProgram
/// (runtime/include/gpuopt/Runtime/Artifact.fbs), serialized, and drops the
/// argument attributes LLVM does not know.
FailureOr<std::vector<uint8_t>>
collectMetadata(func::FuncOp init, func::FuncOp entry,
                const mlir::gpuopt::CpuLevelTarget &cpu) {
  fb::ModelT model;
  llvm::StringMap<std::pair<unsigned, Type>> paramIndex;
  auto describe = [&](func::FuncOp fn, fb::CpuFunctionT &out) -> LogicalResult {
    unsigned numInputs = 0;
    for (auto [i, type] : llvm::enumerate(fn.getArgumentTypes())) {
      FailureOr<SmallVector<int64_t>> shape = staticF32Shape(type);
      if (failed(shape))
        return fn.emitError("the CPU target takes statically shaped f32 "
                            "tensors; argument ")
               << i << " of @" << fn.getSymName() << " is " << type;
      auto arg = std::make_unique<fb::FunctionArgT>();
      arg->type = tensorType(*shape);
      if (auto name = fn.getArgAttrOfType<StringAttr>(i, "seg.param")) {
        auto [it, inserted] = paramIndex.try_emplace(
            name.getValue(), std::make_pair(model.params.size(), type));
        if (inserted) {
          auto param = std::make_unique<fb::ParamT>();
          param->name = name.getValue().str();
          param->type = tensorType(*shape);
          model.params.push_back(std::move(param));
        } else if (it->second.second != type) {
          return fn.emitError("parameter '")
                 << name.getValue()
                 << "' is used with two types: " << it->second.second << " and "
                 << type;
        }
        arg->kind = fb::ArgKind::Param;
        arg->index = it->second.first;
      } else if (auto derived =
                     fn.getArgAttrOfType<IntegerAttr>(i, "seg.derived")) {
        arg->kind = fb::ArgKind::Derived;
        arg->index = derived.getInt();
      } else {
        arg->kind = fb::ArgKind::Input;
        arg->index = numInputs++;
        // The model's inputs are the forward function's.
        if (fn == entry)
          model.inputs.push_back(tensorType(*shape));
      }
      out.args.push_back(std::move(arg));
      fn.removeArgAttr(i, "seg.param");
      fn.removeArgAttr(i, "seg.derived");
    }
    for (auto [i, type] : llvm::enumerate(fn.getResultTypes())) {
      FailureOr<SmallVector<int64_t>> shape = staticF32Shape(type);
      if (failed(shape))
        return fn.emitError("the CPU target returns statically shaped f32 "
                            "tensors; result ")
               << i << " of @" << fn.getSymName() << " is " << type;
      out.results.push_back(tensorType(*shape));
      if (fn == entry)
        model.outputs.push_back(tensorType(*shape));
    }
    return success();
  };
  fb::CpuProgramT program;
  program.init = std::make_unique<fb::CpuFunctionT>();
  program.forward = std::make_unique<fb::CpuFunctionT>();
  if (failed(describe(init, *program.init)) ||
      failed(describe(entry, *program.forward)))
    return failure();
  program.cpu = cpu.level == "native" ? cpu.llvmCpu : cpu.level;
  // List the instruction-set extensions the code may use, so that loading
  // the library on a CPU without them is an error, not SIGILL.
  program.cpu_features = cpu.required;
  model.version = rt::kArtifactVersion;
  model.entry = entry.getSymName().str();
  model.program.Set(std::move(program));
  // Every field written, defaults too: `gpuopt-run --dump` shows each
  // argument's kind and index and each type's dtype.
  return rt::packArtifact(model);
}

/// Static shapes of a function's arguments then results, in descriptor order.
using DescriptorShapes = SmallVector<SmallVector<int64_t>>;

FailureOr<DescriptorShapes> descriptorShapes(func::FuncOp fn) {
  DescriptorShapes shapes;
  for (Type type :
       llvm::concat<const Type>(fn.getArgumentTypes(), fn.getResultTypes())) {
    FailureOr<SmallVector<int64_t>> shape = staticF32Shape(type);
    if (failed(shape))
      return fn.emitError("unexpected non-static type ") << type;
    shapes.push_back(std::move(*shape));
  }
  return shapes;
}

/// Adds `int <name>(void **descriptors)` calling the C interface `callee`
/// with descriptors[0..n) when every descriptor's sizes are `shapes` (the
/// static shapes the code is compiled for), else returning 1 without calling
/// it: a metadata that disagrees with the code cannot make it read or write
/// past the caller's buffers.
LogicalResult addPackedWrapper(llvm::Module &module, StringRef name,
                               StringRef callee, const DescriptorShapes &shapes,
                               ModuleOp where) {
  llvm::Function *target = module.getFunction(callee);
  if (!target)
    return where.emitError("the lowered module has no @") << callee;
  llvm::LLVMContext &ctx = module.getContext();
  llvm::Type *ptr = llvm::PointerType::getUnqual(ctx);
  for (llvm::Argument &arg : target->args())
    if (arg.getType() != ptr)
      return where.emitError("@")
             << callee << " takes a non-pointer argument (not a memref)";
  if (target->arg_size() != shapes.size())
    return where.emitError("@")
           << callee << " takes " << target->arg_size()
           << " descriptors, the metadata describes " << shapes.size();
  llvm::Type *i32 = llvm::Type::getInt32Ty(ctx);
  llvm::Type *i64 = llvm::Type::getInt64Ty(ctx);

  // The expected sizes as a table of (descriptor, word, size) triples checked
  // by one loop: the code stays the same size however many descriptors there
  // are. (An unrolled chain of compares, tens of thousands for a graph of
  // 10^4 ops, took LLVM's -O3 minutes.)
  SmallVector<uint64_t> checks;
  for (auto [i, shape] : llvm::enumerate(shapes))
    for (auto [d, size] : llvm::enumerate(shape)) {
      // The sizes of the descriptor (runtime/include/gpuopt/Runtime/MemRef.h).
      checks.push_back(i);
      checks.push_back(::gpuopt::runtime::kMemRefSizesWord + d);
      checks.push_back(static_cast<uint64_t>(size));
    }
  auto *type = llvm::FunctionType::get(i32, {ptr}, false);
  auto *fn = llvm::Function::Create(type, llvm::GlobalValue::ExternalLinkage,
                                    name, module);
  llvm::BasicBlock *entry = llvm::BasicBlock::Create(ctx, "entry", fn);
  llvm::BasicBlock *call = llvm::BasicBlock::Create(ctx, "call", fn);
  llvm::BasicBlock *mismatch = llvm::BasicBlock::Create(ctx, "mismatch", fn);
  llvm::IRBuilder<> b(entry);
  if (!checks.empty()) {
    llvm::Constant *data = llvm::ConstantDataArray::get(ctx, checks);
    auto *table = new llvm::GlobalVariable(
        module, data->getType(), /*isConstant=*/true,
        llvm::GlobalValue::PrivateLinkage, data, name + ".shapes");
    llvm::BasicBlock *loop = llvm::BasicBlock::Create(ctx, "check", fn, call);
    llvm::BasicBlock *next = llvm::BasicBlock::Create(ctx, "next", fn, call);
    b.CreateBr(loop);
    b.SetInsertPoint(loop);
    llvm::PHINode *j = b.CreatePHI(i64, 2);
    j->addIncoming(b.getInt64(0), entry);
    auto word = [&](uint64_t field) {
      llvm::Value *at = b.CreateAdd(j, b.getInt64(field));
      return b.CreateLoad(i64, b.CreateInBoundsGEP(i64, table, at));
    };
    llvm::Value *descriptor =
        b.CreateLoad(ptr, b.CreateInBoundsGEP(ptr, fn->getArg(0), word(0)));
    llvm::Value *actual =
        b.CreateLoad(i64, b.CreateInBoundsGEP(i64, descriptor, word(1)));
    b.CreateCondBr(b.CreateICmpNE(actual, word(2)), mismatch, next);
    b.SetInsertPoint(next);
    llvm::Value *following = b.CreateAdd(j, b.getInt64(3));
    j->addIncoming(following, next);
    b.CreateCondBr(b.CreateICmpULT(following, b.getInt64(checks.size())), loop,
                   call);
  } else {
    b.CreateBr(call);
  }
  b.SetInsertPoint(call);
  SmallVector<llvm::Value *> args;
  for (unsigned i = 0; i < target->arg_size(); ++i)
    args.push_back(
        b.CreateLoad(ptr, b.CreateConstInBoundsGEP1_64(ptr, fn->getArg(0), i)));
  b.CreateCall(target, args);
  b.CreateRet(b.getInt32(0));
  b.SetInsertPoint(mismatch);
  b.CreateRet(b.getInt32(1));
  return success();
}

/// Adds GPUOPT_COMPILED_RANKS (CompiledModel.h): the descriptor counts and
/// ranks of `init` then `forward`, which the packed wrappers assume.
void addRanks(llvm::Module &module, const DescriptorShapes &init,
              const DescriptorShapes &forward) {
  SmallVector<uint64_t> words;
  for (const DescriptorShapes *shapes : {&init, &forward}) {
    words.push_back(shapes->size());
    for (const SmallVector<int64_t> &shape : *shapes)
      words.push_back(shape.size());
  }
  llvm::Constant *ranks =
      llvm::ConstantDataArray::get(module.getContext(), words);
  new llvm::GlobalVariable(module, ranks->getType(), /*isConstant=*/true,
                           llvm::GlobalValue::ExternalLinkage, ranks,
                           GPUOPT_COMPILED_RANKS);
}

/// Adds the note and the artifact it describes (CompiledModel.h): one
/// global, the note then the bytes, in its own section so that loaders find
/// both before dlopen; GPUOPT_COMPILED_NOTE names the global and
/// GPUOPT_COMPILED_METADATA the bytes.
void addMetadata(llvm::Module &module, ArrayRef<uint8_t> metadata) {
  llvm::LLVMContext &ctx = module.getContext();
  llvm::Type *i32 = llvm::Type::getInt32Ty(ctx);
  llvm::Type *i64 = llvm::Type::getInt64Ty(ctx);
  llvm::Constant *noteFields[] = {
      llvm::ConstantDataArray::getString(ctx, GPUOPT_MODEL_NOTE_MAGIC,
                                         /*AddNull=*/false),
      llvm::ConstantInt::get(i32, GPUOPT_MODEL_ABI_VERSION),
      llvm::ConstantInt::get(i32, GPUOPT_COMPILED_METADATA_VERSION),
      llvm::ConstantInt::get(i64, metadata.size()),
      llvm::ConstantInt::get(
          i64, gpuopt_fnv1a64(reinterpret_cast<const char *>(metadata.data()),
                              metadata.size()))};
  llvm::Constant *note = llvm::ConstantStruct::getAnon(ctx, noteFields);
  llvm::Constant *fields[] = {note,
                              llvm::ConstantDataArray::get(ctx, metadata)};
  auto *noteAndBytes = llvm::ConstantStruct::getAnon(ctx, fields,
                                                     /*Packed=*/true);
  auto *global = new llvm::GlobalVariable(
      module, noteAndBytes->getType(), /*isConstant=*/true,
      llvm::GlobalValue::ExternalLinkage, noteAndBytes, GPUOPT_COMPILED_NOTE);
  global->setSection(GPUOPT_MODEL_NOTE_SECTION);
  // The FlatBuffer's scalars are at most 8 bytes wide and aligned relative to
  // its start, which the 32-byte note keeps aligned.
  global->setAlignment(llvm::Align(16));
  llvm::Type *i8 = llvm::Type::getInt8Ty(ctx);
  llvm::Constant *bytes = llvm::ConstantExpr::getInBoundsGetElementPtr(
      noteAndBytes->getType(), global,
      ArrayRef<llvm::Constant *>{llvm::ConstantInt::get(i32, 0),
                                 llvm::ConstantInt::get(i32, 1)});
  llvm::GlobalAlias::create(i8, 0, llvm::GlobalValue::ExternalLinkage,
                            GPUOPT_COMPILED_METADATA, bytes, &module);
}

FailureOr<std::unique_ptr<llvm::TargetMachine>> createTargetMachine(
    const mlir::gpuopt::CpuLevelTarget &cpu, ModuleOp where,
    llvm::CodeGenOptLevel level = llvm::CodeGenOptLevel::Aggressive) {
  llvm::SubtargetFeatures features;
  for (const std::string &feature : cpu.llvmFeatures)
    features.AddFeature(feature);
  return createHostTargetMachine(cpu.llvmCpu, features.getString(), level,
                                 where, "--cpu=" + cpu.level);
}

/// Moves the definitions of `llvmModule`'s optnone functions (the graph's
/// glue: allocations and calls, --outline-linalg-ops) into a module of
/// their own, returned, which is to be compiled at CodeGenOptLevel::None.
/// The greedy register allocator that -O3 code generation runs on every
/// function, optnone or not, checks each value against the register mask of
/// every call it lives across: quadratic in a glue function of 10^5 calls
/// (LiveIntervals::checkRegMaskInterference was the whole profile); the fast
/// allocator of -O0 is linear. Returns null when there is no such function.
/// Local symbols become hidden external ones so that the two objects link;
/// the library's version script keeps them out of its dynamic symbols.
std::unique_ptr<llvm::Module> splitOptNoneFunctions(llvm::Module &llvmModule) {
  if (llvm::none_of(llvmModule, [](const llvm::Function &fn) {
        return !fn.isDeclaration() && fn.hasOptNone();
      }))
    return nullptr;
  for (llvm::GlobalValue &value : llvmModule.global_values()) {
    if (!value.hasLocalLinkage())
      continue;
    if (!value.hasName())
      value.setName("gpuopt.local");
    value.setLinkage(llvm::GlobalValue::ExternalLinkage);
    value.setVisibility(llvm::GlobalValue::HiddenVisibility);
  }
  llvm::ValueToValueMapTy map;
  std::unique_ptr<llvm::Module> glue =
      llvm::CloneModule(llvmModule, map, [](const llvm::GlobalValue *value) {
        const auto *fn = dyn_cast<llvm::Function>(value);
        return fn && fn->hasOptNone();
      });
  for (llvm::Function &fn : llvmModule)
    if (!fn.isDeclaration() && fn.hasOptNone())
      fn.deleteBody();
  return glue;
}

/// Runs `c++ -shared` on `object` with the model runtime into `output`.
LogicalResult linkSharedLibrary(ArrayRef<std::string> objects, StringRef output,
                                ModuleOp where) {
  ScratchFile script;
  if (failed(script.create("gpuopt-compile", "map", where)))
    return failure();
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(script.path, ec);
    if (ec)
      return where.emitError("cannot write ")
             << script.path << ": " << ec.message();
    // Only the C ABI is visible: two models can live in one process.
    os << "{\n  global:\n";
    for (const char *symbol : kAbiSymbols)
      os << "    " << symbol << ";\n";
    os << "  local: *;\n};\n";
  }
  FailureOr<std::string> found = findHostCompiler(where, "link with");
  if (failed(found))
    return failure();
  std::string compiler = *found;
  SmallVector<std::string> args = {compiler, "-shared", "-o", output.str()};
  llvm::append_range(args, objects);
  for (const char *symbol : kAbiSymbols)
    args.push_back(std::string("-Wl,-u,") + symbol);
  args.push_back("-Wl,--start-group");
  for (const char *archive : kRuntimeArchives)
    args.push_back(archive);
  llvm::append_range(
      args,
      ArrayRef<std::string>{"-Wl,--end-group", "-Wl,--no-undefined",
                            "-Wl,--version-script=" + script.path.str().str(),
                            "-Wl,-Bsymbolic"});
  for (const char *flag : kLinkFlags)
    args.push_back(flag);
  std::string text;
  if (succeeded(runCapturingOutput(args, where, text)))
    return success();
  InFlightDiagnostic diag = where.emitError("linking ")
                            << output << " failed (" << compiler << ")";
  if (StringRef(text).contains("undefined reference"))
    diag << ": the generated code calls a function that the model runtime "
            "does not define";
  diag << ":\n" << text;
  return failure();
}

} // namespace

FailureOr<mlir::gpuopt::CpuLevelTarget>
mlir::gpuopt::getCpuLevelTarget(StringRef level, std::string &error) {
  CpuLevelTarget cpu;
  cpu.level = level.str();
  if (level == "native") {
    cpu.llvmCpu = llvm::sys::getHostCPUName().str();
    llvm::StringMap<bool> host = llvm::sys::getHostCPUFeatures();
    for (const auto &feature : host)
      cpu.llvmFeatures.push_back((feature.getValue() ? "+" : "-") +
                                 feature.getKey().str());
    for (const std::string &feature : rt::checkedCpuFeatures())
      if (host.lookup(feature))
        cpu.required.push_back(feature);
    return cpu;
  }
  int number = rt::cpuLevel(level);
  if (!number) {
    error = "unknown --cpu level '" + level.str() +
            "' (levels: " + rt::cpuLevelList() + ")";
    return failure();
  }
  cpu.llvmCpu = level.str();
  cpu.required = rt::cpuLevelFeatures(number);
  for (const std::string &feature : cpu.required)
    cpu.llvmFeatures.push_back("+" + feature);
  return cpu;
}

LogicalResult mlir::gpuopt::compileForCpu(ModuleOp module,
                                          const CpuCompileOptions &options) {
  MLIRContext *ctx = module.getContext();
  std::string cpuError;
  FailureOr<CpuLevelTarget> cpu = getCpuLevelTarget(options.cpu, cpuError);
  if (failed(cpu))
    return module.emitError(cpuError);
  auto entry = module.lookupSymbol<func::FuncOp>(options.entry);
  if (!entry || entry.isExternal())
    return module.emitError("no function named @")
           << options.entry << " in the module";

  if (!options.pipeline.empty()) {
    PassManager pm(ctx);
    std::string error;
    llvm::raw_string_ostream errorStream(error);
    if (failed(parsePassPipeline(options.pipeline, pm, errorStream)))
      return module.emitError("bad --pipeline '")
             << options.pipeline << "': " << StringRef(error).trim();
    if (failed(pm.run(module)))
      return module.emitError("the pipeline '")
             << options.pipeline << "' failed";
  }

  {
    PassManager pm(ctx);
    pm.addPass(seg::createSplitLoadTimePass({options.entry}));
    if (failed(pm.run(module)))
      return failure();
  }
  if (failed(convertSegParamsToArguments(module)))
    return failure();
  auto init = module.lookupSymbol<func::FuncOp>(options.entry + "_init");
  entry = module.lookupSymbol<func::FuncOp>(options.entry);
  // The CPU lowering has no empty buffers (its views of them fail deep in
  // the pipeline): refused here, located, before it runs. What the graph
  // computes counts (after --pipeline; dead ops and unused arguments do not).
  auto isEmpty = [](Type type) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    return tensor && tensor.hasStaticShape() && tensor.getNumElements() == 0;
  };
  for (func::FuncOp func : {init, entry}) {
    WalkResult empty = func.walk([&](Operation *op) {
      if (isOpTriviallyDead(op))
        return WalkResult::advance();
      for (Type type :
           llvm::concat<const Type>(llvm::to_vector(op->getOperandTypes()),
                                    llvm::to_vector(op->getResultTypes())))
        if (isEmpty(type)) {
          op->emitOpError("has a zero-sized tensor (")
              << type
              << "), which the CPU target does not compute (--target=cuda "
                 "does)";
          return WalkResult::interrupt();
        }
      return WalkResult::advance();
    });
    if (empty.wasInterrupted())
      return failure();
  }
  FailureOr<std::vector<uint8_t>> metadata = collectMetadata(init, entry, *cpu);
  if (failed(metadata))
    return failure();
  FailureOr<DescriptorShapes> initShapes = descriptorShapes(init);
  FailureOr<DescriptorShapes> entryShapes = descriptorShapes(entry);
  if (failed(initShapes) || failed(entryShapes))
    return failure();

  {
    PassManager pm(ctx);
    if (failed(buildCpuLoweringPipeline(pm)))
      return module.emitError("cannot build the CPU pipeline");
    if (failed(pm.run(module)))
      return module.emitError("the CPU lowering failed");
  }

  DialectRegistry translations;
  registerAllToLLVMIRTranslations(translations);
  ctx->appendDialectRegistry(translations);
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, llvmContext);
  if (!llvmModule)
    return module.emitError("translation to LLVM IR failed");
  FailureOr<std::unique_ptr<llvm::TargetMachine>> tm =
      createTargetMachine(*cpu, module);
  if (failed(tm))
    return failure();
  llvmModule->setTargetTriple((*tm)->getTargetTriple());
  llvmModule->setDataLayout((*tm)->createDataLayout());

  if (failed(addPackedWrapper(*llvmModule, GPUOPT_COMPILED_INIT,
                              "_mlir_ciface_" + options.entry + "_init",
                              *initShapes, module)) ||
      failed(addPackedWrapper(*llvmModule, GPUOPT_COMPILED_FORWARD,
                              "_mlir_ciface_" + options.entry, *entryShapes,
                              module)))
    return failure();
  addRanks(*llvmModule, *initShapes, *entryShapes);
  addMetadata(*llvmModule, *metadata);

  if (llvm::Error error = makeLlvmOptimizer(tm->get())(llvmModule.get())) {
    std::string message = llvm::toString(std::move(error));
    return module.emitError("LLVM optimization failed: ") << message;
  }

  std::unique_ptr<llvm::Module> glue = splitOptNoneFunctions(*llvmModule);
  FailureOr<std::unique_ptr<llvm::TargetMachine>> glueTm =
      createTargetMachine(*cpu, module, llvm::CodeGenOptLevel::None);
  if (failed(glueTm))
    return failure();
  // The optimized part, then the glue.
  SmallVector<std::pair<llvm::TargetMachine *, llvm::Module *>> parts = {
      {tm->get(), llvmModule.get()}};
  if (glue)
    parts.push_back({glueTm->get(), glue.get()});
  std::error_code ec;
  if (options.emitAssembly) {
    // One assembly file of both parts.
    llvm::raw_fd_ostream os(options.outputPath, ec);
    if (ec)
      return module.emitError("cannot write ")
             << options.outputPath << ": " << ec.message();
    for (auto [machine, code] : parts)
      if (failed(emitHostCode(*machine, *code, os,
                              llvm::CodeGenFileType::AssemblyFile, module)))
        return failure();
    return success();
  }
  ScratchFile objects[2];
  SmallVector<std::string> paths;
  for (auto [part, file] : llvm::zip_first(parts, objects)) {
    auto [machine, code] = part;
    if (failed(file.create("gpuopt-compile", "o", module)))
      return failure();
    llvm::raw_fd_ostream os(file.path, ec);
    if (ec)
      return module.emitError("cannot write ")
             << file.path << ": " << ec.message();
    if (failed(emitHostCode(*machine, *code, os,
                            llvm::CodeGenFileType::ObjectFile, module)))
      return failure();
    paths.push_back(file.path.str().str());
  }
  return linkSharedLibrary(paths, options.outputPath, module);
}
