//===- MlirSource.cpp - how every gpuopt tool reads MLIR input ------------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/MlirSource.h"

#include "gpuopt/Runtime/FileIO.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/SourceMgr.h"

namespace rt = ::gpuopt::runtime;

rt::Status
mlir::gpuopt::readMlirBuffer(llvm::StringRef path,
                             std::unique_ptr<llvm::MemoryBuffer> &out) {
  std::string text;
  if (rt::Status s = rt::readMlirSource(path.str(), text); !s)
    return s;
  // The text is freed on return: only the buffer's copy stays.
  out = llvm::MemoryBuffer::getMemBufferCopy(
      text, path == "-" ? llvm::StringRef("<stdin>") : path);
  return rt::Status::ok();
}

mlir::OwningOpRef<mlir::ModuleOp>
mlir::gpuopt::parseMlirSource(llvm::StringRef path, llvm::SourceMgr &sourceMgr,
                              MLIRContext *context, rt::Status &status) {
  std::unique_ptr<llvm::MemoryBuffer> buffer;
  status = readMlirBuffer(path, buffer);
  if (!status)
    return nullptr;
  sourceMgr.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
  return parseSourceFile<ModuleOp>(sourceMgr, context);
}
