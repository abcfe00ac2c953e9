//===- ModelLibrary.h - check a compiled model before dlopen ----*- C++ -*-===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// A model library is code: dlopen maps it and runs its constructors, and no
// check made afterwards can make a hostile library safe. What can be checked
// before that is checked here, so that a damaged or foreign file is an error
// message rather than SIGBUS inside dlopen or a hang: the path is a regular
// file (not a FIFO, a device or a directory), an ELF shared object of this
// machine's class, byte order and architecture, complete (every header table,
// loadable segment and section lies inside the file) and a gpuopt model
// library of this runtime's ABI version (its gpuopt_model_note,
// runtime/include/gpuopt/Runtime/CompiledModel.h). python/gpuopt/compiled.py applies
// the same checks with the same messages.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_RUNTIME_MODELLIBRARY_H
#define GPUOPT_RUNTIME_MODELLIBRARY_H

#include "gpuopt/Runtime/Tensor.h"

#include <cstdint>
#include <string>

namespace gpuopt {
namespace runtime {

/// Checks `path` as above. Messages start with "cannot load PATH: ", or say
/// "PATH is not a gpuopt model library" / "PATH has model ABI version N".
Status checkModelLibrary(const std::string &path);

} // namespace runtime
} // namespace gpuopt

#endif // GPUOPT_RUNTIME_MODELLIBRARY_H
