//===- CompiledModel.h - gpuopt-compile's object / runtime contract -*- C -*-=//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// A compiled model library is one object file emitted by gpuopt-compile (the
// model-specific part) linked with the model runtime (lib/Runtime/ModelAbi.cpp,
// the same for every model), which implements include/gpuopt/Runtime/
// ModelAbi.h on top of the three symbols below. They are internal to the
// library (its version script exports only gpuopt_model_* and
// gpuopt_*_num_threads), so several models can be loaded in one process.
//
// GPUOPT_COMPILED_METADATA is a NUL-terminated JSON string:
//
//   {"version": 1, "entry": "forward",
//    "cpu": "sapphirerapids", "cpu_features": ["sse4.2", "avx", ...],
//    "params": [{"name": "enc.0.weight", "shape": [16, 3, 3, 3]}, ...],
//    "init":    {"args": [ARG, ...], "results": [[4, 3, 3, 3], ...]},
//    "forward": {"args": [ARG, ...], "results": [[1, 1, 32, 32], ...]}}
//
// "cpu_features" lists the x86 extensions of the build host that the code
// may use (from a fixed list the runtime can test); gpuopt_model_create
// refuses a CPU without one of them. "cpu" is informative.
// ARG = {"kind": "input" | "param" | "derived", "index": i, "shape": [...]}:
// model input i, parameter i of "params", or result i of the initializer.
// Every tensor is f32 and dense. GPUOPT_COMPILED_INIT and
// GPUOPT_COMPILED_FORWARD take an array of pointers to ranked memref
// descriptors ({allocated, aligned, offset, sizes[rank], strides[rank]}):
// one per argument, then one per result (out-parameters), the
// `_mlir_ciface_` calling convention of @<entry>_init and @<entry>
// (see --seg-split-load-time).
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_RUNTIME_COMPILEDMODEL_H
#define GPUOPT_RUNTIME_COMPILEDMODEL_H

#define GPUOPT_COMPILED_METADATA "gpuopt_compiled_metadata"
#define GPUOPT_COMPILED_INIT "gpuopt_compiled_init"
#define GPUOPT_COMPILED_FORWARD "gpuopt_compiled_forward"
/* Version of the metadata schema above. */
#define GPUOPT_COMPILED_METADATA_VERSION 1

#endif // GPUOPT_RUNTIME_COMPILEDMODEL_H
