/*===- ModelAbi.h - C ABI of a compiled gpuopt model ------------*- C -*-===//
 *
 * One C ABI for every gpuopt artifact, implemented twice:
 *
 *  - A model compiled by `gpuopt-compile MODEL.mlir --target=cpu -o model.so`
 *    is a self-contained shared library exporting exactly the functions
 *    below, for itself (options.artifact_path NULL). It carries its own
 *    weight reader and kernels: using it needs neither MLIR nor LLVM nor the
 *    gpuopt build (dlopen + these symbols, or Python's ctypes).
 *  - libgpuopt_runtime.so (runtime/api/) exports the same functions for any
 *    artifact named by options.artifact_path: a model library (checked, then
 *    loaded with dlopen and every call forwarded to it) or a CUDA artifact
 *    of `gpuopt-compile --target=cuda` (model.gpuopt, run on GPU
 *    options.device; the NVIDIA driver is opened at run time).
 *
 * Tensors are dense, row-major (C order) float32 buffers owned by the caller;
 * their shapes are the static shapes the model was compiled for (query them).
 * Every function that can fail returns a status (0 = success) or NULL and,
 * when `err`/`errlen` are given, writes a NUL-terminated message there.
 * A model handle may be used by one thread at a time; kernels parallelise
 * internally over gpuopt_set_num_threads() threads.
 *
 * A library is code: loading it runs its constructors, and nothing checked
 * after that makes a hostile one safe. What a loader can check before dlopen
 * (the file is a complete ELF object of this machine with a matching ABI
 * version) runtime/base/ModelLibrary.cpp checks; the library itself checks
 * its metadata against a hash compiled into its code (CompiledModel.h).
 *
 *===----------------------------------------------------------------------===*/
#ifndef GPUOPT_RUNTIME_MODELABI_H
#define GPUOPT_RUNTIME_MODELABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Version of this ABI; bumped on any incompatible change. */
#define GPUOPT_MODEL_ABI_VERSION 3
int gpuopt_model_abi_version(void);

typedef struct gpuopt_model gpuopt_model;

/* Limits of the weights reader and of the model's own metadata (gpuopt-run's
 * --max-header-bytes, --max-tensors, --max-rank); exceeding one is an error
 * naming it. */
typedef struct gpuopt_model_limits {
  uint64_t max_header_bytes; /* safetensors JSON header */
  uint64_t max_tensors;      /* tensors in the file, parameters of the model */
  uint64_t max_rank;         /* of any tensor in the file or the model */
} gpuopt_model_limits;

/* What gpuopt_model_create loads. Fill it with gpuopt_model_options_init
 * first: `struct_size` tells the implementation which fields the caller
 * knows (later versions only add fields at the end). */
typedef struct gpuopt_model_options {
  uint32_t struct_size; /* sizeof(gpuopt_model_options) of the caller */
  /* The artifact to load: NULL inside a model library (which loads itself),
   * required by libgpuopt_runtime.so (a model library .so or a CUDA artifact
   * .gpuopt). */
  const char *artifact_path;
  /* A safetensors file whose names are the model's seg.param names; NULL for
   * a model library without parameters. */
  const char *weights_path;
  /* != 0: tensors of the weights file the model does not use are an error
   * (otherwise they are ignored). */
  int strict;
  /* NULL: the defaults, 8 MiB, 65536, 8. */
  const gpuopt_model_limits *limits;
  /* The CUDA device ordinal of a CUDA artifact (ignored by CPU ones), or
   * GPUOPT_DEVICE_EMULATE: run the artifact's host image and launch plan on
   * the CPU (runtime/include/gpuopt/Runtime/CudaEmulator.h), no GPU needed. */
  int device;
} gpuopt_model_options;

/* The `device` that runs a CUDA artifact in the host emulator. */
#define GPUOPT_DEVICE_EMULATE (-1)

/* Sets every field to its default (NULL, 0) and `struct_size`. */
void gpuopt_model_options_init(gpuopt_model_options *options);

/* Loads the artifact, binds the weights (every parameter present, F32, of
 * its shape) and runs the load-time initialisers once. Returns NULL on
 * error. */
gpuopt_model *gpuopt_model_create(const gpuopt_model_options *options,
                                  char *err, size_t errlen);
void gpuopt_model_destroy(gpuopt_model *model);

/* Static interface of the compiled entry function. */
int gpuopt_model_num_inputs(const gpuopt_model *model);
int gpuopt_model_num_outputs(const gpuopt_model *model);
/* Rank of input/output `index`, or -1 when out of range; `shape` receives
 * `rank` sizes when non-NULL. */
int gpuopt_model_input_shape(const gpuopt_model *model, int index,
                             int64_t *shape);
int gpuopt_model_output_shape(const gpuopt_model *model, int index,
                              int64_t *shape);

/* Runs the forward function: `inputs[i]`, `outputs[i]` point to buffers of the
 * declared shapes. */
int gpuopt_model_run(gpuopt_model *model, const float *const *inputs,
                     float *const *outputs, char *err, size_t errlen);

/* The instruction set the library's CPU kernels run ("avx512", "avx2" or
 * "generic"): GPUOPT_CPU_ISA when set, else the best this CPU has. NULL when
 * GPUOPT_CPU_ISA names a path this CPU cannot run or an unknown one
 * (gpuopt_model_create then fails with the reason). libgpuopt_runtime.so
 * answers for the model library it loaded last (NULL before the first). */
const char *gpuopt_cpu_kernel_isa(void);

/* Threads used by the kernels (default: GPUOPT_NUM_THREADS or all cores;
 * values < 1: the default). In libgpuopt_runtime.so: of every model library
 * it has loaded or will load. */
void gpuopt_set_num_threads(int num_threads);
int gpuopt_get_num_threads(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* GPUOPT_RUNTIME_MODELABI_H */
