//===- CudaHostImage.cpp - the host build of a CUDA artifact's kernels ----===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// A copy of the gpu.module goes through --gpuopt's host kernel pipeline
// (buildGpuHostPipeline: --convert-gpu-kernels-to-host, then the LLVM
// lowering of loops with bare-pointer memrefs), gets one uniform entry point
// per kernel (and its info: workgroup bytes, whether its threads
// synchronize), the definitions of the barrier and shuffle hooks (calls
// through the exported gpuopt_host_hooks, which the emulator fills in), is
// optimized for the baseline of the host architecture (the
// image must run on any machine of that architecture) and linked by the
// host C++ compiler into a shared object.
//
//===----------------------------------------------------------------------===//

#include "CudaHostImage.h"

#include "gpuopt/Pipelines/GpuPipeline.h"
#include "gpuopt/Pipelines/Pipelines.h"
#include "gpuopt/Runtime/CudaArtifact.h"
#include "gpuopt/Target/HostCodegen.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
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

/// What the entry point of a kernel needs beside its function: the offsets
/// of its workgroup attributions in the block's workgroup memory, their
/// total, and whether its threads synchronize (--convert-gpu-kernels-to-host
/// attributes).
struct KernelInfo {
  SmallVector<int64_t> workgroupOffsets;
  int64_t workgroupBytes = 0;
  bool syncs = false;
};

/// Adds `void gpuopt_host_<name>(const int64_t *ids, void *const *args)`
/// calling the lowered kernel `name` with ids[0..12) and args[0..n) (its
/// buffers, then the violation record: CudaArtifact.h), and each workgroup
/// attribution at its offset in args[n + 1], the block's workgroup memory;
/// and `const int64_t gpuopt_hostinfo_<name>[2]`.
LogicalResult addEntryPoint(llvm::Module &module, StringRef name,
                            const KernelInfo &info, Operation *where) {
  llvm::Function *kernel = module.getFunction(name);
  if (!kernel || kernel->isDeclaration())
    return where->emitError("the host build of the kernels has no function @")
           << name;
  llvm::LLVMContext &ctx = module.getContext();
  llvm::Type *i8 = llvm::Type::getInt8Ty(ctx);
  llvm::Type *i64 = llvm::Type::getInt64Ty(ctx);
  llvm::Type *ptr = llvm::PointerType::getUnqual(ctx);
  llvm::FunctionType *type = kernel->getFunctionType();
  unsigned numWorkgroup = info.workgroupOffsets.size();
  if (type->getNumParams() < kNumIds + numWorkgroup + 1 ||
      !type->getReturnType()->isVoidTy())
    return where->emitError("the host kernel @")
           << name << " does not take the " << kNumIds
           << " thread indices, its workgroup memory and the violation record";
  for (unsigned i = 0; i < type->getNumParams(); ++i)
    if (type->getParamType(i) != (i < kNumIds ? i64 : ptr))
      return where->emitError("the host kernel @")
             << name << " has argument " << i
             << " of an unexpected type (index or bare memref pointer "
                "expected)";
  unsigned numBuffers = type->getNumParams() - kNumIds - numWorkgroup - 1;
  auto *entryType = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx),
                                            {ptr, ptr}, /*isVarArg=*/false);
  auto *entry =
      llvm::Function::Create(entryType, llvm::GlobalValue::ExternalLinkage,
                             rt::kCudaHostKernelPrefix + name.str(), module);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", entry));
  auto arg = [&](unsigned i) {
    return b.CreateLoad(ptr,
                        b.CreateConstInBoundsGEP1_64(ptr, entry->getArg(1), i));
  };
  SmallVector<llvm::Value *> args;
  for (unsigned i = 0; i < kNumIds; ++i)
    args.push_back(b.CreateLoad(
        i64, b.CreateConstInBoundsGEP1_64(i64, entry->getArg(0), i)));
  for (unsigned i = 0; i < numBuffers; ++i)
    args.push_back(arg(i));
  if (numWorkgroup) {
    llvm::Value *workgroup = arg(numBuffers + 1);
    for (int64_t offset : info.workgroupOffsets)
      args.push_back(b.CreateConstInBoundsGEP1_64(i8, workgroup, offset));
  }
  args.push_back(arg(numBuffers));
  b.CreateCall(kernel, args);
  b.CreateRetVoid();

  auto *infoType = llvm::ArrayType::get(i64, 2);
  new llvm::GlobalVariable(
      module, infoType, /*isConstant=*/true, llvm::GlobalValue::ExternalLinkage,
      llvm::ConstantArray::get(
          infoType, {llvm::ConstantInt::get(i64, info.workgroupBytes),
                     llvm::ConstantInt::get(
                         i64, info.syncs ? rt::kCudaHostKernelSyncs : 0)}),
      rt::kCudaHostInfoPrefix + name.str());
  return success();
}

/// Adds the exported `CudaHostHooks gpuopt_host_hooks` (zero) and defines
/// the hook declarations the kernels call (--convert-gpu-kernels-to-host)
/// as calls through it.
void addHooks(llvm::Module &module) {
  llvm::LLVMContext &ctx = module.getContext();
  llvm::Type *ptr = llvm::PointerType::getUnqual(ctx);
  auto *hooksType =
      llvm::StructType::get(ctx, {ptr, ptr, ptr, ptr, ptr, ptr, ptr});
  auto *hooks = new llvm::GlobalVariable(
      module, hooksType, /*isConstant=*/false,
      llvm::GlobalValue::ExternalLinkage,
      llvm::ConstantAggregateZero::get(hooksType), rt::kCudaHostHooksSymbol);
  // (name, field of CudaHostHooks).
  for (auto [name, field] :
       {std::pair<const char *, unsigned>{"__gpuopt_host_barrier", 1},
        {"__gpuopt_host_shuffle", 2},
        {"__gpuopt_host_mma", 3},
        {"__gpuopt_host_async_copy", 4},
        {"__gpuopt_host_async_commit", 5},
        {"__gpuopt_host_async_wait", 6}}) {
    llvm::Function *fn = module.getFunction(name);
    if (!fn || !fn->isDeclaration())
      continue;
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", fn));
    llvm::Value *context =
        b.CreateLoad(ptr, b.CreateStructGEP(hooksType, hooks, 0));
    llvm::Value *callee =
        b.CreateLoad(ptr, b.CreateStructGEP(hooksType, hooks, field));
    SmallVector<llvm::Value *> args = {context};
    SmallVector<llvm::Type *> types = {ptr};
    for (llvm::Argument &a : fn->args()) {
      args.push_back(&a);
      types.push_back(a.getType());
    }
    llvm::Type *result = fn->getReturnType();
    llvm::Value *call =
        b.CreateCall(llvm::FunctionType::get(result, types, /*isVarArg=*/false),
                     callee, args);
    if (result->isVoidTy())
      b.CreateRetVoid();
    else
      b.CreateRet(call);
  }
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
  llvm::StringMap<KernelInfo> infos;
  for (auto fn : host->getBody()->getOps<LLVM::LLVMFuncOp>()) {
    auto layout = fn->getAttrOfType<DenseI64ArrayAttr>("gpuopt.host_workgroup");
    if (!layout || layout.size() == 0)
      continue;
    KernelInfo &info = infos[fn.getName()];
    info.workgroupBytes = layout[0];
    info.workgroupOffsets.assign(layout.asArrayRef().begin() + 1,
                                 layout.asArrayRef().end());
    info.syncs = fn->hasAttr("gpuopt.host_syncs");
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
    auto info = infos.find(name);
    if (info == infos.end())
      return kernels.emitError("the host build of the kernels has no "
                               "workgroup layout for @")
             << name;
    if (failed(addEntryPoint(*module, name, info->second, kernels)))
      return failure();
    entries.insert(rt::kCudaHostKernelPrefix + name);
    entries.insert(rt::kCudaHostInfoPrefix + name);
  }
  addHooks(*module);
  entries.insert(rt::kCudaHostHooksSymbol);
  // The ABI of the entry points: checked accesses, the record, then the
  // workgroup memory.
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
