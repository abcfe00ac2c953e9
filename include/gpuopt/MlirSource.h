//===- MlirSource.h - how every gpuopt tool reads MLIR input ----*- C++ -*-===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// gpuopt-opt, gpuopt-compile and gpuopt-run read their MLIR input here, so
// that all three refuse the same files (runtime::readMlirSource: a regular
// file within the read limit, bounded nesting) with the same messages, and
// name the input "<stdin>" for "-" in diagnostics.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_MLIRSOURCE_H
#define GPUOPT_MLIRSOURCE_H

#include "gpuopt/Runtime/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/MemoryBuffer.h"

#include <memory>

namespace llvm {
class SourceMgr;
} // namespace llvm

namespace mlir {
class MLIRContext;
namespace gpuopt {

/// Reads MLIR source `path` ("-": standard input) through
/// runtime::readMlirSource into `out`, a buffer named as diagnostics name it.
::gpuopt::runtime::Status
readMlirBuffer(llvm::StringRef path, std::unique_ptr<llvm::MemoryBuffer> &out);

/// Reads `path` (readMlirBuffer) into `sourceMgr` and parses it. A read
/// failure is returned in `status` (nothing printed); a parse failure leaves
/// `status` ok and returns null, its diagnostics already emitted to whatever
/// handler `context` has for `sourceMgr`.
OwningOpRef<ModuleOp> parseMlirSource(llvm::StringRef path,
                                      llvm::SourceMgr &sourceMgr,
                                      MLIRContext *context,
                                      ::gpuopt::runtime::Status &status);

} // namespace gpuopt
} // namespace mlir

#endif // GPUOPT_MLIRSOURCE_H
