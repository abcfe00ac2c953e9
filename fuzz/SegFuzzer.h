//===- SegFuzzer.h - shared part of the seg IR fuzz targets -----*- C++ -*-===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// Each input gets a fresh single-threaded context with gpuopt's dialects, so
// that a finding replays alone and no uniqued attribute outlives its input.
// Diagnostics are collected rather than printed: rejecting bad IR is the
// expected outcome, and they are shown only with a finding (or, to see why an
// input is rejected, with GPUOPT_FUZZ_VERBOSE=1 in the environment).
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_FUZZ_SEGFUZZER_H
#define GPUOPT_FUZZ_SEGFUZZER_H

#include "gpuopt/InitAll.h"
#include "gpuopt/Runtime/FileIO.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <string>

namespace gpuopt_fuzz {

/// The registry of gpuopt-opt, built once.
inline const mlir::DialectRegistry &registry() {
  static const mlir::DialectRegistry *instance = [] {
    auto *r = new mlir::DialectRegistry();
    mlir::gpuopt::registerAllDialects(*r);
    return r;
  }();
  return *instance;
}

/// A context whose diagnostics accumulate in `log`.
class Session {
public:
  Session()
      : context(registry(), mlir::MLIRContext::Threading::DISABLED),
        handler(context.getDiagEngine().registerHandler(
            [this](mlir::Diagnostic &diag) {
              llvm::raw_string_ostream os(log);
              os << diag.getLocation() << ": " << diag << "\n";
              for (const mlir::Diagnostic &note : diag.getNotes())
                os << "  note: " << note << "\n";
              return mlir::success();
            })) {}
  ~Session() { context.getDiagEngine().eraseHandler(handler); }

  /// Parses and verifies `text` as a module; null when either fails.
  /// Parses `text` as the tools do: input nested deeper than the tools'
  /// limit is refused by their pre-scan before MLIR's (recursive, unbounded)
  /// parser sees it. IR printed from a parsed module (`prescan` false) is
  /// parsed as is: the generic form may nest deeper than its source.
  mlir::OwningOpRef<mlir::ModuleOp> parse(llvm::StringRef text,
                                          llvm::StringRef name = "fuzz",
                                          bool prescan = true) {
    if (prescan && !::gpuopt::runtime::checkMlirNesting(
                       text.data(), text.size(), name.str()))
      return nullptr;
    // The MLIR lexer relies on the NUL terminator that a buffer copy adds.
    llvm::SourceMgr sourceMgr;
    sourceMgr.AddNewSourceBuffer(
        llvm::MemoryBuffer::getMemBufferCopy(text, name), llvm::SMLoc());
    mlir::ParserConfig config(&context, /*verifyAfterParse=*/true);
    mlir::OwningOpRef<mlir::ModuleOp> module =
        mlir::parseSourceFile<mlir::ModuleOp>(sourceMgr, config);
    static const bool verbose = std::getenv("GPUOPT_FUZZ_VERBOSE");
    if (verbose)
      llvm::errs() << (module ? "parsed and verified\n" : "rejected:\n") << log;
    return module;
  }

  /// Prints `what`, the diagnostics so far and `ir`, then aborts so that
  /// libFuzzer records the input.
  [[noreturn]] void finding(const llvm::Twine &what, llvm::StringRef ir) {
    llvm::errs() << "gpuopt fuzz finding: " << what << "\n--- diagnostics\n"
                 << log << "--- IR\n"
                 << ir << "\n";
    llvm::errs().flush();
    std::abort();
  }

  mlir::MLIRContext context;
  std::string log;

private:
  mlir::DiagnosticEngine::HandlerID handler;
};

} // namespace gpuopt_fuzz

#endif // GPUOPT_FUZZ_SEGFUZZER_H
