//===- HostCodegen.h - LLVM code for this host, linked by its compiler -*-===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// What every target that produces host code shares: the CPU target (a model
// library) and the CUDA target's host image of its kernels (the emulator's).
// A target machine for the host triple, object emission, temporary files
// and running the host C++ compiler as the linker with its messages captured.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_TARGET_HOSTCODEGEN_H
#define GPUOPT_TARGET_HOSTCODEGEN_H

#include "mlir/IR/Operation.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/CodeGen.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

#include <memory>
#include <optional>
#include <string>

namespace llvm {
class Module;
} // namespace llvm

namespace mlir {
namespace gpuopt {

/// A temporary file, removed when this goes out of scope.
struct ScratchFile {
  SmallString<128> path;
  std::optional<llvm::FileRemover> remover;
  /// Creates it (prefix `prefix`, suffix `suffix`); errors at `where`.
  LogicalResult create(StringRef prefix, StringRef suffix, Operation *where);
};

/// A PIC target machine for the host triple with CPU `cpu` and LLVM features
/// `features` ("+avx2,..."); `what` names the choice in the error.
FailureOr<std::unique_ptr<llvm::TargetMachine>>
createHostTargetMachine(StringRef cpu, StringRef features,
                        llvm::CodeGenOptLevel level, Operation *where,
                        StringRef what = "");

/// Runs LLVM's code generation for `tm` on `module` into `os`.
LogicalResult emitHostCode(llvm::TargetMachine &tm, llvm::Module &module,
                           llvm::raw_pwrite_stream &os,
                           llvm::CodeGenFileType type, Operation *where);

/// The host C++ compiler: the one of this build when it is executable, else
/// `c++` on PATH; the error (to `what`) names both, `hint` appended.
FailureOr<std::string> findHostCompiler(Operation *where, StringRef what,
                                        StringRef hint = "");

/// Runs `args` (args[0] the program), its stdout and stderr captured. Returns
/// success, or failure with `log` holding what it printed (or why it could
/// not run).
LogicalResult runCapturingOutput(ArrayRef<std::string> args, Operation *where,
                                 std::string &log);

} // namespace gpuopt
} // namespace mlir

#endif // GPUOPT_TARGET_HOSTCODEGEN_H
