//===- RunOptions.h - options shared by gpuopt-run's backends ---*- C++ -*-===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_EXECUTION_RUNOPTIONS_H
#define GPUOPT_EXECUTION_RUNOPTIONS_H

#include "mlir/Support/LLVM.h"

#include <string>

namespace mlir {
namespace gpuopt {

/// How often a backend runs a graph and where it reports the timings.
struct RunOptions {
  /// Inferences to run (the outputs are those of the last one).
  unsigned runs = 1;
  /// Receives the time of the load-time work (weight folding, compilation),
  /// in milliseconds.
  double *loadMs = nullptr;
  /// Receives the time of each inference, in milliseconds.
  SmallVectorImpl<double> *runMs = nullptr;
  /// The `--cpu=` level LLVM generates code for (the CPU backend):
  /// native, or a lower level to run the code another CPU would run.
  std::string cpu = "native";
};

} // namespace gpuopt
} // namespace mlir

#endif // GPUOPT_EXECUTION_RUNOPTIONS_H
