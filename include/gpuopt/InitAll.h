//===- InitAll.h - register everything gpuopt tools need -------*- C++ -*-===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_INITALL_H
#define GPUOPT_INITALL_H

namespace mlir {
class DialectRegistry;
namespace gpuopt {

/// Adds the seg dialect and the upstream dialects gpuopt's graphs and
/// pipelines use (func, arith, tensor, linalg, ...) to `registry`.
void registerAllDialects(DialectRegistry &registry);

/// Registers gpuopt's passes and the upstream passes its pipelines use, so
/// that they are available on the command line and in `--pass-pipeline`.
void registerAllPasses();

} // namespace gpuopt
} // namespace mlir

#endif // GPUOPT_INITALL_H
