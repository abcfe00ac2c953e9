//===- ModelApiExports.cpp - the C ABI of libgpuopt_runtime.so ------------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// runtime/include/gpuopt/Runtime/ModelAbi.h for any artifact, over
// LoadedModel (ModelApi.h). Only libgpuopt_runtime.so contains this file; its
// version script (gpuopt_runtime.map) exports exactly these functions.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Runtime/Allocator.h"
#include "gpuopt/Runtime/ModelAbi.h"
#include "gpuopt/Runtime/ModelApi.h"

#include <algorithm>
#include <cstdio>
#include <exception>

namespace rt = gpuopt::runtime;

struct gpuopt_model {
  std::unique_ptr<rt::LoadedModel> model;
};

namespace {

void setError(char *err, size_t errlen, const std::string &message) {
  if (err && errlen > 0)
    std::snprintf(err, errlen, "%s", message.c_str());
}

int getShape(const std::vector<std::vector<int64_t>> &shapes, int index,
             int64_t *shape) {
  if (index < 0 || static_cast<size_t>(index) >= shapes.size())
    return -1;
  const std::vector<int64_t> &s = shapes[index];
  if (shape)
    std::copy(s.begin(), s.end(), shape);
  return static_cast<int>(s.size());
}

} // namespace

extern "C" {

int gpuopt_model_abi_version(void) { return GPUOPT_MODEL_ABI_VERSION; }

void gpuopt_model_options_init(gpuopt_model_options *options) {
  if (!options)
    return;
  *options = gpuopt_model_options();
  options->struct_size = sizeof(gpuopt_model_options);
}

gpuopt_model *gpuopt_model_create(const gpuopt_model_options *options,
                                  char *err, size_t errlen) {
  if (!options) {
    setError(err, errlen, "gpuopt_model_create: options is NULL");
    return nullptr;
  }
  if (options->struct_size < sizeof(gpuopt_model_options)) {
    setError(err, errlen,
             "gpuopt_model_create: options.struct_size is " +
                 std::to_string(options->struct_size) +
                 ", this runtime needs at least " +
                 std::to_string(sizeof(gpuopt_model_options)) +
                 " (fill it with gpuopt_model_options_init)");
    return nullptr;
  }
  if (!options->artifact_path) {
    setError(err, errlen,
             "gpuopt_model_create: libgpuopt_runtime.so needs "
             "options.artifact_path (a model library .so or a CUDA artifact "
             ".gpuopt)");
    return nullptr;
  }
  // Nothing may escape the C ABI (see runtime/cpu/ModelAbi.cpp).
  try {
    rt::BadAllocScope throwing;
    std::unique_ptr<gpuopt_model> handle(new gpuopt_model);
    if (rt::Status s = rt::LoadedModel::create(*options, handle->model); !s) {
      setError(err, errlen, s.message());
      return nullptr;
    }
    return handle.release();
  } catch (const std::exception &e) {
    setError(err, errlen, std::string("gpuopt_model_create: ") + e.what());
    return nullptr;
  }
}

void gpuopt_model_destroy(gpuopt_model *model) { delete model; }

int gpuopt_model_num_inputs(const gpuopt_model *model) {
  return model ? static_cast<int>(model->model->inputShapes().size()) : -1;
}

int gpuopt_model_num_outputs(const gpuopt_model *model) {
  return model ? static_cast<int>(model->model->outputShapes().size()) : -1;
}

int gpuopt_model_input_shape(const gpuopt_model *model, int index,
                             int64_t *shape) {
  return model ? getShape(model->model->inputShapes(), index, shape) : -1;
}

int gpuopt_model_output_shape(const gpuopt_model *model, int index,
                              int64_t *shape) {
  return model ? getShape(model->model->outputShapes(), index, shape) : -1;
}

int gpuopt_model_run(gpuopt_model *model, const float *const *inputs,
                     float *const *outputs, char *err, size_t errlen) {
  if (!model) {
    setError(err, errlen, "gpuopt_model_run: model is NULL");
    return 1;
  }
  try {
    if (rt::Status s = model->model->run(inputs, outputs); !s) {
      setError(err, errlen, s.message());
      return 1;
    }
  } catch (const std::exception &e) {
    setError(err, errlen, std::string("gpuopt_model_run: ") + e.what());
    return 1;
  }
  return 0;
}

const char *gpuopt_cpu_kernel_isa(void) {
  return rt::getLastModelCpuKernelIsa();
}

void gpuopt_set_num_threads(int num_threads) {
  rt::setModelNumThreads(num_threads);
}

int gpuopt_get_num_threads(void) { return rt::getModelNumThreads(); }

} // extern "C"
