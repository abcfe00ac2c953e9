//===- CudaHostImage.cpp - the host build of a CUDA artifact's kernels ----===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// A copy of the gpu.module goes through --gpuopt's host kernel pipeline
// (buildGpuHostPipeline: --convert-gpu-kernels-to-host, then the LLVM
// lowering of loops with bare-pointer memrefs), gets one uniform entry point
// per kernel, is optimized for the baseline of the host architecture (the
// image must run on any machine of that architecture) and linked by the
// host C++ compiler into a shared object.
//
//===----------------------------------------------------------------------===//

#include "CudaHostImage.h"

#include "gpuopt/Pipelines/GpuPipeline.h"
#include "gpuopt/Pipelines/Pipelines.h"
#include "gpuopt/Runtime/CudaArtifact.h"
#include "gpuopt/Target/HostCodegen.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/ADT/StringSet.h"
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
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

#include <optional>

using namespace mlir;
using namespace mlir::gpuopt;
namespace rt = ::gpuopt::runtime;

namespace {

/// Number of leading index arguments of a host kernel
/// (--convert-gpu-kernels-to-host).
constexpr unsigned kNumIds = 12;

/// Adds `void gpuopt_host_<name>(const int64_t *ids, void *const *args)`
/// calling the lowered kernel `name` with ids[0..12) and args[0..n) (its
/// buffers, then the violation record: CudaArtifact.h).
LogicalResult addEntryPoint(llvm::Module &module, StringRef name,
                            Operation *where) {
  llvm::Function *kernel = module.getFunction(name);
  if (!kernel || kernel->isDeclaration())
    return where->emitError("the host build of the kernels has no function @")
           << name;
  llvm::LLVMContext &ctx = module.getContext();
  llvm::Type *i64 = llvm::Type::getInt64Ty(ctx);
  llvm::Type *ptr = llvm::PointerType::getUnqual(ctx);
  llvm::FunctionType *type = kernel->getFunctionType();
  if (type->getNumParams() < kNumIds || !type->getReturnType()->isVoidTy())
    return where->emitError("the host kernel @")
           << name << " does not take the " << kNumIds << " thread indices";
  for (unsigned i = 0; i < type->getNumParams(); ++i)
    if (type->getParamType(i) != (i < kNumIds ? i64 : ptr))
      return where->emitError("the host kernel @")
             << name << " has argument " << i
             << " of an unexpected type (index or bare memref pointer "
                "expected)";
  auto *entryType = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx),
                                            {ptr, ptr}, /*isVarArg=*/false);
  auto *entry =
      llvm::Function::Create(entryType, llvm::GlobalValue::ExternalLinkage,
                             rt::kCudaHostKernelPrefix + name.str(), module);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", entry));
  SmallVector<llvm::Value *> args;
  for (unsigned i = 0; i < type->getNumParams(); ++i) {
    bool isId = i < kNumIds;
    llvm::Value *base = entry->getArg(isId ? 0 : 1);
    llvm::Type *elt = isId ? i64 : ptr;
    args.push_back(b.CreateLoad(
        elt, b.CreateConstInBoundsGEP1_64(elt, base, isId ? i : i - kNumIds)));
  }
  b.CreateCall(kernel, args);
  b.CreateRetVoid();
  return success();
}

/// Links `object` into the shared object `output` with the host compiler.
LogicalResult linkSharedObject(StringRef object, StringRef output,
                               Operation *where) {
  FailureOr<std::string> compiler =
      findHostCompiler(where, "link the host kernels with",
                       " (or pass --cuda-host-image=false)");
  if (failed(compiler))
    return failure();
  std::string log;
  if (succeeded(runCapturingOutput({*compiler, "-shared", "-o", output.str(),
                                    object.str(), "-lm", "-Wl,--no-undefined"},
                                   where, log)))
    return success();
  return where->emitError("linking the host kernels failed (")
         << *compiler << "):\n"
         << log;
}

} // namespace

FailureOr<std::string> mlir::gpuopt::buildCudaHostImage(
    gpu::GPUModuleOp kernels, ArrayRef<std::string> names, std::string &chip) {
  MLIRContext *ctx = kernels.getContext();
  OwningOpRef<ModuleOp> host = ModuleOp::create(kernels.getLoc());
  host->getBody()->push_back(kernels.clone());
  {
    PassManager pm(ctx);
    buildGpuHostPipeline(pm);
    if (failed(pm.run(*host)))
      return kernels.emitError("cannot build the kernels for the host (the "
                               "CUDA emulator's image); "
                               "--cuda-host-image=false leaves it out");
  }
  DialectRegistry translations;
  registerBuiltinDialectTranslation(translations);
  registerLLVMDialectTranslation(translations);
  ctx->appendDialectRegistry(translations);
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> module =
      translateModuleToLLVMIR(*host, llvmContext, "gpuopt-cuda-host");
  if (!module)
    return kernels.emitError("the host build of the kernels does not "
                             "translate to LLVM IR");

  // The baseline of the architecture: the image runs on any machine of it.
  llvm::Triple triple(llvm::sys::getProcessTriple());
  StringRef cpu =
      triple.getArch() == llvm::Triple::x86_64 ? "x86-64" : "generic";
  FailureOr<std::unique_ptr<llvm::TargetMachine>> tmOr =
      createHostTargetMachine(cpu, "", llvm::CodeGenOptLevel::Default, kernels);
  if (failed(tmOr))
    return failure();
  std::unique_ptr<llvm::TargetMachine> tm = std::move(*tmOr);
  module->setTargetTriple(tm->getTargetTriple());
  module->setDataLayout(tm->createDataLayout());

  llvm::StringSet<> entries;
  for (const std::string &name : names) {
    if (failed(addEntryPoint(*module, name, kernels)))
      return failure();
    entries.insert(rt::kCudaHostKernelPrefix + name);
  }
  // The ABI of the entry points: checked accesses, the record last.
  {
    llvm::Type *i32 = llvm::Type::getInt32Ty(llvmContext);
    auto *abi = new llvm::GlobalVariable(
        *module, i32, /*isConstant=*/true, llvm::GlobalValue::ExternalLinkage,
        llvm::ConstantInt::get(i32, rt::kCudaHostAbiVersion),
        rt::kCudaHostAbiSymbol);
    entries.insert(abi->getName());
  }
  // Only the entry points are visible; the kernels inline into them.
  for (llvm::Function &fn : *module)
    if (!fn.isDeclaration() && !entries.contains(fn.getName()))
      fn.setLinkage(llvm::GlobalValue::InternalLinkage);
  for (llvm::GlobalVariable &global : module->globals())
    if (!global.isDeclaration() && !entries.contains(global.getName()))
      global.setLinkage(llvm::GlobalValue::InternalLinkage);
  if (llvm::Error e = makeLlvmOptimizer(tm.get())(module.get()))
    return kernels.emitError("LLVM optimization of the host kernels failed: ")
           << llvm::toString(std::move(e));

  ScratchFile object, library;
  if (failed(object.create("gpuopt-cuda-host", "o", kernels)) ||
      failed(library.create("gpuopt-cuda-host", "so", kernels)))
    return failure();
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(object.path, ec);
    if (ec)
      return kernels.emitError("cannot write ")
             << object.path << ": " << ec.message();
    if (failed(emitHostCode(*tm, *module, os, llvm::CodeGenFileType::ObjectFile,
                            kernels)))
      return failure();
  }
  if (failed(linkSharedObject(object.path, library.path, kernels)))
    return failure();
  auto bytes = llvm::MemoryBuffer::getFile(library.path, /*IsText=*/false,
                                           /*RequiresNullTerminator=*/false);
  if (!bytes)
    return kernels.emitError("cannot read ")
           << library.path << ": " << bytes.getError().message();
  chip = ("host-" + triple.getArchName()).str();
  return (*bytes)->getBuffer().str();
}
