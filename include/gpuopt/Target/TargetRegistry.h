//===- TargetRegistry.h - the targets of gpuopt-compile ---------*- C++ -*-===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// How `gpuopt-compile --target=NAME` finds a backend: each folder under
// lib/Target registers one TargetRegistration (its name, its command-line
// options, its compile function) and lib/Target/RegisterAllTargets.cpp
// calls each folder's register function. Adding a backend is one folder and
// one line there (docs/DeveloperGuide.md, "Adding a backend").
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_TARGET_TARGETREGISTRY_H
#define GPUOPT_TARGET_TARGETREGISTRY_H

#include "mlir/IR/BuiltinOps.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/CommandLine.h"

#include <functional>
#include <memory>
#include <string>

namespace mlir {
namespace gpuopt {

/// What gpuopt-compile hands every target, whatever its own options.
struct TargetCompileRequest {
  /// The function to compile.
  std::string entry = "forward";
  /// A textual pass pipeline run first (e.g. "gpuopt-optimize"); empty for
  /// none.
  std::string pipeline;
  /// Where the library or artifact goes.
  std::string outputPath;
};

/// One target of one gpuopt-compile run: owns its command-line options
/// (created before the command line is parsed) and compiles with them.
class CompileTarget {
public:
  virtual ~CompileTarget() = default;
  /// The target's own flags, which gpuopt-compile refuses with another
  /// --target.
  virtual SmallVector<llvm::cl::Option *> flags() = 0;
  /// Checks the flags' values before the input is read: failure with a
  /// message for the user (without "error: ") in `error`.
  virtual LogicalResult validateFlags(std::string &error) = 0;
  /// A file one of the target's flags names.
  struct FlagFile {
    /// The flag, e.g. "--cuda-write-kernels".
    std::string flag;
    std::string path;
    /// Written (else read).
    bool written = false;
  };
  /// The files the target's given flags name, besides the input and -o
  /// (which gpuopt-compile keeps apart from them).
  virtual SmallVector<FlagFile> getFlagFiles() { return {}; }
  /// Compiles `module` (consumed) into `request.outputPath`; failures are
  /// diagnostics located at the module or the offending op.
  virtual LogicalResult compile(ModuleOp module,
                                const TargetCompileRequest &request) = 0;
};

/// A backend: `--target=name`.
struct TargetRegistration {
  /// The value of --target.
  std::string name;
  /// What it compiles for, for --help ("the host CPU").
  std::string description;
  /// Creates the target and registers its flags in `category`.
  std::function<std::unique_ptr<CompileTarget>(llvm::cl::OptionCategory &)>
      create;
};

/// Adds a backend (a second one of the same name is ignored).
void registerTarget(TargetRegistration target);

/// Every registered backend, in registration order.
ArrayRef<TargetRegistration> getRegisteredTargets();

/// Registers the backends of lib/Target (RegisterAllTargets.cpp).
void registerAllTargets();

} // namespace gpuopt
} // namespace mlir

#endif // GPUOPT_TARGET_TARGETREGISTRY_H
