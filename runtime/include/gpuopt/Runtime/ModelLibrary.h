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
// runtime/include/gpuopt/Runtime/CompiledModel.h). python/gpuopt/compiled.py
// applies the same checks with the same messages.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_RUNTIME_MODELLIBRARY_H
#define GPUOPT_RUNTIME_MODELLIBRARY_H

#include "gpuopt/Runtime/CompiledModel.h"
#include "gpuopt/Runtime/Tensor.h"

#include <cstdint>
#include <string>
#include <vector>

namespace gpuopt {
namespace runtime {

/// Largest model metadata (the artifact in a library's gpuopt_model section)
/// readModelLibraryArtifact reads.
constexpr uint64_t kMaxModelMetadataBytes = 1ull << 30;

/// What checkModelLibrary found: the note and where its section lies in the
/// file (inside it, and at least a note long).
struct ModelLibraryNote {
  gpuopt_model_note note;
  uint64_t sectionOffset = 0;
  uint64_t sectionSize = 0;
};

/// Checks `path` as above. Messages start with "cannot load PATH: ", or say
/// "PATH is not a gpuopt model library" / "PATH has model ABI version N".
/// On success, `found` (if given) receives the note and its section.
Status checkModelLibrary(const std::string &path,
                         ModelLibraryNote *found = nullptr);

/// The ELF checks of checkModelLibrary (a 64-bit little-endian shared
/// library for this machine whose loadable segments lie in the file and can
/// be mapped, with a dynamic segment), for any shared object about to be
/// dlopened (the CUDA emulator's host image): messages "WHAT: why".
Status checkSharedObject(const std::string &path, const std::string &what);

/// Reads the artifact a model library carries without loading it: the
/// checks of checkModelLibrary, then the note's metadata version, size
/// (within the section and kMaxModelMetadataBytes) and hash, which
/// the library itself checks after dlopen (the same "corrupt model
/// metadata: " message). `bytes` receives the buffer, not yet verified.
Status readModelLibraryArtifact(const std::string &path,
                                std::vector<uint8_t> &bytes);

} // namespace runtime
} // namespace gpuopt

#endif // GPUOPT_RUNTIME_MODELLIBRARY_H
