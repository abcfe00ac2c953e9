//===- CompiledModel.h - gpuopt-compile's object / runtime contract -*- C -*-=//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// A compiled model library is one object file emitted by gpuopt-compile (the
// model-specific part) linked with the model runtime (runtime/cpu/ModelAbi.cpp,
// the same for every model), which implements runtime/include/gpuopt/Runtime/
// ModelAbi.h on top of the four symbols below. They are internal to the
// library (its version script exports only gpuopt_model_* and
// gpuopt_*_num_threads), so several models can be loaded in one process.
//
// GPUOPT_COMPILED_METADATA is the model's artifact: a FlatBuffer of the
// schema runtime/include/gpuopt/Runtime/Artifact.fbs (root gpuopt.artifact.
// Model, identifier "GPOA") whose program is a CpuProgram; `gpuopt-run
// --dump model.so` prints it:
//
//   Model.entry            "forward"
//   Model.params           [{name: "enc.0.weight", type: [16, 3, 3, 3]}, ...]
//   Model.inputs/outputs   the forward function's model inputs and results
//   CpuProgram.cpu         "x86-64-v3"
//   CpuProgram.cpu_features ["cx16", "sahf", ..., "xsave"]
//   CpuProgram.init        {args: [ARG, ...], results: [[4, 3, 3, 3], ...]}
//   CpuProgram.forward     {args: [ARG, ...], results: [[1, 1, 32, 32], ...]}
//
// "cpu" is the `--cpu=` level the code was compiled for (x86-64,
// x86-64-v2, x86-64-v3, x86-64-v4) or, for --cpu=native, the build host's
// LLVM CPU name; "cpu_features" lists the x86 extensions the code may use,
// from the table the runtime can test (runtime/include/gpuopt/Runtime/
// CpuFeatures.def): exactly the level's, or the build host's for native.
// gpuopt_model_create refuses a CPU without one of them, naming the levels
// to rebuild with.
// ARG = FunctionArg{kind: Input | Param | Derived, index: i, type}: model
// input i, Model.params[i], or result i of the initializer.
// Every tensor is f32 and dense. GPUOPT_COMPILED_INIT and
// GPUOPT_COMPILED_FORWARD take an array of pointers to ranked memref
// descriptors ({allocated, aligned, offset, sizes[rank], strides[rank]}):
// one per argument, then one per result (out-parameters), the
// `_mlir_ciface_` calling convention of @<entry>_init and @<entry>
// (see --seg-split-load-time). Both return 0, or non-zero when a
// descriptor's sizes differ from the static shapes the code was compiled for
// (the metadata disagrees with the code: nothing was read or written).
// The wrappers find the sizes only where the compiled rank puts them, so
// GPUOPT_COMPILED_RANKS, an int64_t array {n, rank[0..n), m, rank[0..m)},
// gives the descriptor counts and ranks of the initializer then the forward
// function as compiled; the runtime compares the metadata with it before it
// builds a descriptor.
//
// GPUOPT_COMPILED_NOTE is one global in the section GPUOPT_MODEL_NOTE_SECTION
// (16-byte aligned): a gpuopt_model_note immediately followed by the
// metadata's bytes (GPUOPT_COMPILED_METADATA points at them), so that a
// loader finds both through the ELF section headers before dlopen
// (runtime/base/ModelLibrary.cpp; readArtifactFile of Artifact.h). The note
// holds the ABI version, the metadata version, and the length and FNV-1a
// hash of the metadata's bytes, which the runtime recomputes after loading
// (a metadata edited after compilation is refused instead of describing
// buffers the code does not expect); the length is also bounded by the end
// of the section (the linker's __stop_gpuopt_model).
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_RUNTIME_COMPILEDMODEL_H
#define GPUOPT_RUNTIME_COMPILEDMODEL_H

#include <stddef.h>
#include <stdint.h>

#define GPUOPT_COMPILED_METADATA "gpuopt_compiled_metadata"
#define GPUOPT_COMPILED_NOTE "gpuopt_compiled_note"
#define GPUOPT_COMPILED_INIT "gpuopt_compiled_init"
#define GPUOPT_COMPILED_FORWARD "gpuopt_compiled_forward"
#define GPUOPT_COMPILED_RANKS "gpuopt_compiled_ranks"
/* Version of the metadata's encoding: 1 was JSON text, 2 is the artifact
 * FlatBuffer above (whose own version is Model.version). */
#define GPUOPT_COMPILED_METADATA_VERSION 2

/* The ELF section holding the note, and the note's first 8 bytes. */
#define GPUOPT_MODEL_NOTE_SECTION "gpuopt_model"
#define GPUOPT_MODEL_NOTE_MAGIC "GPUOPTMD"

/* Layout of the note (little-endian, 32 bytes, no padding). */
typedef struct gpuopt_model_note {
  char magic[8];
  uint32_t abi_version;      /* GPUOPT_MODEL_ABI_VERSION of the compiler */
  uint32_t metadata_version; /* GPUOPT_COMPILED_METADATA_VERSION */
  uint64_t metadata_size;    /* bytes of the metadata, after the note */
  uint64_t metadata_hash;    /* gpuopt_fnv1a64 of those bytes */
} gpuopt_model_note;

/* FNV-1a, 64 bits: the compiler and the runtime hash the metadata with this
 * one definition. */
static inline uint64_t gpuopt_fnv1a64(const char *bytes, size_t size) {
  uint64_t h = 14695981039346656037ull;
  for (size_t i = 0; i < size; ++i) {
    h ^= (unsigned char)bytes[i];
    h *= 1099511628211ull;
  }
  return h;
}

#endif // GPUOPT_RUNTIME_COMPILEDMODEL_H
