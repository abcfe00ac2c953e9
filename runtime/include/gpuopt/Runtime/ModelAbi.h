/*===- ModelAbi.h - C ABI of a compiled gpuopt model ------------*- C -*-===//
 *
 * A model compiled by `gpuopt-compile MODEL.mlir --target=cpu -o model.so` is
 * a self-contained shared library exporting exactly the functions below. It
 * carries its own weight reader and kernels: using it needs neither MLIR nor
 * LLVM nor the gpuopt build (dlopen + these symbols, or Python's ctypes).
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
#define GPUOPT_MODEL_ABI_VERSION 2
int gpuopt_model_abi_version(void);

typedef struct gpuopt_model gpuopt_model;

/* Loads the weights (a safetensors file whose names are the model's seg.param
 * names) and runs the load-time initialisers once. `strict` != 0 turns
 * unused tensors in the file into an error (otherwise they are ignored).
 * `weights_path` may be NULL for a model without parameters.
 * Returns NULL on error. */
gpuopt_model *gpuopt_model_create(const char *weights_path, int strict,
                                  char *err, size_t errlen);

/* Limits of the weights reader and of the model's own metadata (gpuopt-run's
 * --max-header-bytes, --max-tensors, --max-rank); exceeding one is an error
 * naming it. */
typedef struct gpuopt_model_limits {
  uint64_t max_header_bytes; /* safetensors JSON header */
  uint64_t max_tensors;      /* tensors in the file, parameters of the model */
  uint64_t max_rank;         /* of any tensor in the file or the model */
} gpuopt_model_limits;

/* gpuopt_model_create with `limits` (NULL: the defaults, 8 MiB, 65536, 8). */
gpuopt_model *gpuopt_model_create_with_limits(const char *weights_path,
                                              int strict,
                                              const gpuopt_model_limits *limits,
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
 * (gpuopt_model_create then fails with the reason). */
const char *gpuopt_cpu_kernel_isa(void);

/* Threads used by the kernels (default: GPUOPT_NUM_THREADS or all cores). */
void gpuopt_set_num_threads(int num_threads);
int gpuopt_get_num_threads(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* GPUOPT_RUNTIME_MODELABI_H */
