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
// GPUOPT_COMPILED_METADATA is a NUL-terminated JSON string:
//
//   {"version": 1, "entry": "forward",
//    "cpu": "x86-64-v3", "cpu_features": ["cx16", "sahf", ..., "xsave"],
//    "params": [{"name": "enc.0.weight", "shape": [16, 3, 3, 3]}, ...],
//    "init":    {"args": [ARG, ...], "results": [[4, 3, 3, 3], ...]},
//    "forward": {"args": [ARG, ...], "results": [[1, 1, 32, 32], ...]}}
//
// "cpu" is the `--cpu=` level the code was compiled for (x86-64,
// x86-64-v2, x86-64-v3, x86-64-v4) or, for --cpu=native, the build host's
// LLVM CPU name; "cpu_features" lists the x86 extensions the code may use,
// from the table the runtime can test (runtime/include/gpuopt/Runtime/
// CpuFeatures.def): exactly the level's, or the build host's for native.
// gpuopt_model_create refuses a CPU without one of them, naming the levels
// to rebuild with.
// ARG = {"kind": "input" | "param" | "derived", "index": i, "shape": [...]}:
// model input i, parameter i of "params", or result i of the initializer.
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
// GPUOPT_COMPILED_NOTE is a gpuopt_model_note in the section
// GPUOPT_MODEL_NOTE_SECTION, so that a loader can find it through the ELF
// section headers before dlopen (runtime/base/ModelLibrary.cpp): the ABI
// version, and the length and FNV-1a hash of the metadata text, which the
// runtime recomputes after loading (a metadata edited after compilation is
// refused instead of describing buffers the code does not expect).
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
/* Version of the metadata schema above. */
#define GPUOPT_COMPILED_METADATA_VERSION 1

/* The ELF section holding the note, and the note's first 8 bytes. */
#define GPUOPT_MODEL_NOTE_SECTION "gpuopt_model"
#define GPUOPT_MODEL_NOTE_MAGIC "GPUOPTMD"

/* Layout of the note (little-endian, 32 bytes, no padding). */
typedef struct gpuopt_model_note {
  char magic[8];
  uint32_t abi_version;      /* GPUOPT_MODEL_ABI_VERSION of the compiler */
  uint32_t metadata_version; /* GPUOPT_COMPILED_METADATA_VERSION */
  uint64_t metadata_size;    /* bytes of the metadata text, without the NUL */
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
