//===- SegVerifyFuzzer.cpp - libFuzzer target: parse + verify seg IR ------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// Parses arbitrary text as a module with gpuopt's dialects and runs the
// verifier (seg's verifiers and shape functions). Rejecting the input with a
// diagnostic is fine; a crash, a sanitizer report, or verified IR that does
// not print and parse back (custom and generic form) is a finding.
//
//===----------------------------------------------------------------------===//

#include "SegFuzzer.h"

#include "mlir/IR/OperationSupport.h"

using namespace mlir;

/// Prints `module` and parses the text back; a failure is a finding.
static void checkRoundTrip(gpuopt_fuzz::Session &session, ModuleOp module,
                           bool generic) {
  std::string text;
  llvm::raw_string_ostream os(text);
  OpPrintingFlags flags;
  if (generic)
    flags.printGenericOpForm();
  module.print(os, flags);
  if (!session.parse(text, "printed", /*prescan=*/false))
    session.finding(Twine("verified IR does not parse back from its ") +
                        (generic ? "generic" : "custom") + " form",
                    text);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  gpuopt_fuzz::Session session;
  OwningOpRef<ModuleOp> module =
      session.parse(StringRef(reinterpret_cast<const char *>(data), size));
  if (!module)
    return 0;
  checkRoundTrip(session, *module, /*generic=*/false);
  checkRoundTrip(session, *module, /*generic=*/true);
  return 0;
}
