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

#include "../base/ModelAbiSupport.h"

#include <algorithm>
#include <cstdio>
#include <exception>

namespace rt = gpuopt::runtime;

struct gpuopt_model {
  std::unique_ptr<rt::LoadedModel> model;
};

extern "C" {

int gpuopt_model_abi_version(void) { return GPUOPT_MODEL_ABI_VERSION; }

void gpuopt_model_options_init(gpuopt_model_options *options) {
  rt::abi::initOptions(options);
}

gpuopt_model *gpuopt_model_create(const gpuopt_model_options *options,
                                  char *err, size_t errlen) {
  if (!rt::abi::checkOptions(options, "this runtime", err, errlen))
    return nullptr;
  if (!options->artifact_path) {
    rt::abi::setError(
        err, errlen,
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
      rt::abi::setError(err, errlen, s.message());
      return nullptr;
    }
    return handle.release();
  } catch (const std::exception &e) {
    rt::abi::setError(err, errlen,
                      std::string("gpuopt_model_create: ") + e.what());
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
  return model ? rt::abi::copyShape(model->model->inputShapes(), index, shape)
               : -1;
}

int gpuopt_model_output_shape(const gpuopt_model *model, int index,
                              int64_t *shape) {
  return model ? rt::abi::copyShape(model->model->outputShapes(), index, shape)
               : -1;
}

int gpuopt_model_run(gpuopt_model *model, const float *const *inputs,
                     float *const *outputs, char *err, size_t errlen) {
  if (!model) {
    rt::abi::setError(err, errlen, "gpuopt_model_run: model is NULL");
    return 1;
  }
  try {
    if (rt::Status s = model->model->run(inputs, outputs); !s) {
      rt::abi::setError(err, errlen, s.message());
      return 1;
    }
  } catch (const std::exception &e) {
    rt::abi::setError(err, errlen,
                      std::string("gpuopt_model_run: ") + e.what());
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
