//===- CommandLine.h - checks on gpuopt tools' command lines ----*- C++ -*-===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// Since LLVM 15 a cl::opt given twice keeps the last value silently
// (`gpuopt-run m.mlir --backend=cpu ... --backend=reference` ran the
// reference backend). gpuopt-run and gpuopt-compile refuse a repeated
// single-valued option instead; list options (--input, --output) repeat by
// design.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_COMMANDLINE_H
#define GPUOPT_COMMANDLINE_H

#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir {
namespace gpuopt {

/// Prints "TOOL: error: --NAME is given N times; give it once" and returns
/// false when a single-valued option occurred more than once.
inline bool checkNoRepeatedOptions(llvm::StringRef tool) {
  llvm::DenseSet<llvm::cl::Option *> seen;
  for (auto &entry : llvm::cl::getRegisteredOptions()) {
    llvm::cl::Option *option = entry.second;
    if (!seen.insert(option).second)
      continue;
    // cl::list options are ZeroOrMore/OneOrMore; cl::opt is Optional or
    // Required.
    bool single = option->getNumOccurrencesFlag() == llvm::cl::Optional ||
                  option->getNumOccurrencesFlag() == llvm::cl::Required;
    if (single && option->getNumOccurrences() > 1) {
      llvm::errs() << tool << ": error: --" << option->ArgStr << " is given "
                   << option->getNumOccurrences() << " times; give it once\n";
      return false;
    }
  }
  return true;
}

} // namespace gpuopt
} // namespace mlir

#endif // GPUOPT_COMMANDLINE_H
