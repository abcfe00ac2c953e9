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

/// Adds the seg dialect and the upstream dialects (with their extensions and
/// interface models, which the bufferization and LLVM lowerings need) to
/// `registry`.
void registerAllDialects(DialectRegistry &registry);

/// Registers gpuopt's passes and pipelines and the upstream passes, so that
/// they are available on the command line and in `--pass-pipeline`.
void registerAllPasses();

} // namespace gpuopt
} // namespace mlir

#endif // GPUOPT_INITALL_H
