//===- HostCodegen.cpp - LLVM code for this host, linked by its compiler --===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Target/HostCodegen.h"

#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

using namespace mlir;
using namespace mlir::gpuopt;

LogicalResult ScratchFile::create(StringRef prefix, StringRef suffix,
                                  Operation *where) {
  if (std::error_code ec =
          llvm::sys::fs::createTemporaryFile(prefix, suffix, path))
    return where->emitError("cannot create a temporary file: ") << ec.message();
  remover.emplace(path);
  return success();
}

FailureOr<std::unique_ptr<llvm::TargetMachine>>
mlir::gpuopt::createHostTargetMachine(StringRef cpu, StringRef features,
                                      llvm::CodeGenOptLevel level,
                                      Operation *where, StringRef what) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  llvm::Triple triple(llvm::sys::getProcessTriple());
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return where->emitError("no LLVM target for the host: ") << error;
  std::unique_ptr<llvm::TargetMachine> tm(target->createTargetMachine(
      triple, cpu, features, {}, llvm::Reloc::PIC_, std::nullopt, level));
  if (!tm) {
    InFlightDiagnostic diag =
        where->emitError("cannot create an LLVM target machine for ")
        << triple.str();
    if (!what.empty())
      diag << " (" << what << ")";
    return diag;
  }
  return tm;
}

LogicalResult mlir::gpuopt::emitHostCode(llvm::TargetMachine &tm,
                                         llvm::Module &module,
                                         llvm::raw_pwrite_stream &os,
                                         llvm::CodeGenFileType type,
                                         Operation *where) {
  llvm::legacy::PassManager codegen;
  if (tm.addPassesToEmitFile(codegen, os, nullptr, type))
    return where->emitError("the host target cannot emit ")
           << (type == llvm::CodeGenFileType::ObjectFile ? "object files"
                                                         : "assembly");
  codegen.run(module);
  return success();
}

FailureOr<std::string> mlir::gpuopt::findHostCompiler(Operation *where,
                                                      StringRef what,
                                                      StringRef hint) {
  StringRef preferred = GPUOPT_HOST_CXX;
  if (llvm::sys::fs::can_execute(preferred))
    return preferred.str();
  if (auto found = llvm::sys::findProgramByName("c++"))
    return *found;
  return where->emitError("no C++ compiler to ")
         << what << ": neither " << preferred << " nor c++ on PATH" << hint;
}

LogicalResult mlir::gpuopt::runCapturingOutput(ArrayRef<std::string> args,
                                               Operation *where,
                                               std::string &log) {
  ScratchFile output;
  if (failed(output.create("gpuopt-tool", "txt", where)))
    return failure();
  SmallVector<StringRef> argRefs(args.begin(), args.end());
  std::optional<StringRef> redirects[] = {std::nullopt, output.path.str(),
                                          output.path.str()};
  std::string error;
  int rc = llvm::sys::ExecuteAndWait(argRefs.front(), argRefs, std::nullopt,
                                     redirects, 0, 0, &error);
  if (rc == 0)
    return success();
  log.clear();
  if (auto buffer = llvm::MemoryBuffer::getFile(output.path))
    log = (*buffer)->getBuffer().trim().str();
  if (log.empty())
    log = error;
  return failure();
}
