/*===- model_abi_main.c - a C client of a compiled gpuopt model ----------===//
 *
 * Part of the gpuopt project.
 *
 * Uses nothing but runtime/include/gpuopt/Runtime/ModelAbi.h and one library
 * implementing it. test_compile_cpu.py links it against model.so alone (and
 * checks that no MLIR or LLVM library is loaded), and against
 * libgpuopt_runtime.so, which then loads ARTIFACT:
 *
 *   model_abi_main [--artifact=ARTIFACT] WEIGHTS.safetensors IN0.bin
 *                  [IN1.bin ...] OUT0.bin
 *
 * Inputs and output are raw float32 files of the model's shapes.
 *
 *===----------------------------------------------------------------------===*/

#include "gpuopt/Runtime/ModelAbi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t numel(const int64_t *shape, int rank) {
  size_t n = 1;
  for (int i = 0; i < rank; ++i)
    n *= (size_t)shape[i];
  return n;
}

int main(int argc, char **argv) {
  char err[1024];
  const char *artifact = NULL;
  if (argc > 1 && strncmp(argv[1], "--artifact=", 11) == 0) {
    artifact = argv[1] + 11;
    --argc;
    ++argv;
  }
  if (argc < 3) {
    fprintf(stderr, "usage: %s [--artifact=A] WEIGHTS IN... OUT\n", argv[0]);
    return 2;
  }
  if (gpuopt_model_abi_version() != GPUOPT_MODEL_ABI_VERSION) {
    fprintf(stderr, "ABI version mismatch\n");
    return 1;
  }
  gpuopt_model_options options;
  gpuopt_model_options_init(&options);
  /* A NULL options or a struct of an older ABI is an error, not a crash. */
  if (gpuopt_model_create(NULL, err, sizeof(err)) != NULL) {
    fprintf(stderr, "NULL options were accepted\n");
    return 1;
  }
  printf("NULL options: %s\n", err);
  options.struct_size = 4;
  if (gpuopt_model_create(&options, err, sizeof(err)) != NULL) {
    fprintf(stderr, "a 4-byte options struct was accepted\n");
    return 1;
  }
  printf("small options: %s\n", err);
  options.struct_size = sizeof(options);
  options.artifact_path = artifact;
  options.weights_path = argv[1];
  options.strict = 1;
  gpuopt_model *model = gpuopt_model_create(&options, err, sizeof(err));
  if (!model) {
    fprintf(stderr, "error: %s\n", err);
    return 1;
  }
  int numInputs = gpuopt_model_num_inputs(model);
  int numOutputs = gpuopt_model_num_outputs(model);
  if (argc != 3 + numInputs || numOutputs < 1) {
    fprintf(stderr, "expected %d inputs and one output file\n", numInputs);
    return 2;
  }
  float **inputs = calloc((size_t)numInputs, sizeof(float *));
  float **outputs = calloc((size_t)numOutputs, sizeof(float *));
  int64_t shape[8];
  for (int i = 0; i < numInputs; ++i) {
    size_t n = numel(shape, gpuopt_model_input_shape(model, i, shape));
    inputs[i] = malloc(n * sizeof(float));
    FILE *f = fopen(argv[2 + i], "rb");
    if (!f || fread(inputs[i], sizeof(float), n, f) != n) {
      fprintf(stderr, "cannot read %s\n", argv[2 + i]);
      return 1;
    }
    fclose(f);
  }
  int rank = 0;
  for (int i = 0; i < numOutputs; ++i) {
    rank = gpuopt_model_output_shape(model, i, shape);
    outputs[i] = malloc(numel(shape, rank) * sizeof(float));
  }
  /* A NULL buffer is an error, not a crash. */
  if (gpuopt_model_run(model, NULL, outputs, err, sizeof(err)) == 0) {
    fprintf(stderr, "a NULL input array was accepted\n");
    return 1;
  }
  printf("NULL inputs: %s\n", err);
  if (gpuopt_model_run(model, (const float *const *)inputs, outputs, err,
                       sizeof(err))) {
    fprintf(stderr, "error: %s\n", err);
    return 1;
  }
  rank = gpuopt_model_output_shape(model, 0, shape);
  printf("inputs %d, outputs %d, output 0: [", numInputs, numOutputs);
  for (int i = 0; i < rank; ++i)
    printf(i ? ", %lld" : "%lld", (long long)shape[i]);
  printf("]\n");
  FILE *f = fopen(argv[argc - 1], "wb");
  size_t n = numel(shape, rank);
  if (!f || fwrite(outputs[0], sizeof(float), n, f) != n) {
    fprintf(stderr, "cannot write %s\n", argv[argc - 1]);
    return 1;
  }
  fclose(f);
  for (int i = 0; i < numInputs; ++i)
    free(inputs[i]);
  for (int i = 0; i < numOutputs; ++i)
    free(outputs[i]);
  free(inputs);
  free(outputs);
  gpuopt_model_destroy(model);
  return 0;
}
