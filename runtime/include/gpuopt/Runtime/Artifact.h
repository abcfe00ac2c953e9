//===- Artifact.h - the one artifact format of every target -----*- C++ -*-===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// A compiled model, for any target, is one FlatBuffers buffer of the schema
// Artifact.fbs (root table gpuopt.artifact.Model; identifier "GPOA"). This
// header is the runtime's one entry to it: verification (the buffer is
// untrusted until verifyArtifact accepts it), the checks every target shares,
// the conversions to runtime types, and a text dump. Target-specific checks
// (the CPU functions' argument indices, the CUDA launch plan's signatures)
// live with each target's reader, on top of verifyArtifact.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_RUNTIME_ARTIFACT_H
#define GPUOPT_RUNTIME_ARTIFACT_H

#include "gpuopt/Runtime/Generated/Artifact_generated.h"
#include "gpuopt/Runtime/Tensor.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace gpuopt {
namespace runtime {

/// Version of the artifact schema a writer records and a reader accepts
/// (Model.version); bumped when a change would make an old reader misread.
constexpr uint32_t kArtifactVersion = 1;

/// Largest rank of any tensor type in an artifact.
constexpr size_t kArtifactMaxRank = 8;

/// Verifies `size` bytes as an artifact: the FlatBuffers verifier (every
/// offset, length and nesting inside the buffer), the file identifier, the
/// version, the checksum when the buffer stores one (a mismatch: damaged
/// after it was written), and what every target relies on: a program is
/// present; every
/// tensor type has rank <= kArtifactMaxRank, dimensions >= 0 and a byte size
/// that fits in int64; parameter names are non-empty and unique; inputs and
/// outputs are f32. `what` (a path) starts every message. On success `out`
/// points into `data`, which must outlive it.
Status verifyArtifact(const uint8_t *data, size_t size, const std::string &what,
                      const artifact::Model *&out);

/// The CRC-32 (zlib's crc32) of `size` bytes of an artifact with the four
/// bytes of Model.checksum read as zero; of all of them when the field is
/// absent. The bytes need not be verified: the field is located with bounds
/// checks.
uint32_t computeArtifactChecksum(const uint8_t *data, size_t size);

/// Whether the buffer stores Model.checksum (written by every gpuopt-compile
/// since the field exists). The bytes need not be verified.
bool hasArtifactChecksum(const uint8_t *data, size_t size);

/// Writes computeArtifactChecksum into the buffer's Model.checksum; false
/// (nothing written) when the buffer does not store the field. packArtifact
/// calls it; so do tools that edit an artifact's bytes on purpose (the fuzz
/// targets, before they parse a mutated input).
bool stampArtifactChecksum(std::vector<uint8_t> &bytes);

/// The check verifyArtifact applies to the model's own tensor types, for the
/// ones of each target's program (function arguments, buffers): 8-aligned
/// shape (the verifier aligns only a vector's length), rank, dims >= 0, known
/// dtype, byte size within int64. The message starts with `where` (the
/// value's name); callers prefix their own context.
Status checkTensorType(const artifact::TensorType &type,
                       const std::string &where);

/// The artifact's program kind as text ("cpu", "cuda"), for messages.
const char *artifactTargetName(const artifact::Model &model);

/// The runtime type of a schema dtype (the enums share their order).
DType toDType(artifact::DType dtype);
artifact::DType toArtifactDType(DType dtype);

/// The shape of a verified tensor type.
std::vector<int64_t> tensorShape(const artifact::TensorType &type);

/// Serialises `model` (the writers' one way to make an artifact): every
/// field is stored, defaults included, so that dumpArtifact shows them all.
std::vector<uint8_t> packArtifact(const artifact::ModelT &model);

/// The whole artifact as JSON-like text, one field per line, from the
/// schema's reflection tables (so a new field is dumped without new code);
/// byte vectors (kernel images) show their first bytes and their size.
/// `data` must have passed verifyArtifact.
std::string dumpArtifact(const uint8_t *data);

/// Reads the artifact of a file of any target: the `gpuopt_model` section of
/// a CPU model library (after checkModelLibrary's checks, without dlopen), or
/// a whole .gpuopt file. `bytes` receives the buffer (not yet verified).
Status readArtifactFile(const std::string &path, std::vector<uint8_t> &bytes);

} // namespace runtime
} // namespace gpuopt

#endif // GPUOPT_RUNTIME_ARTIFACT_H
