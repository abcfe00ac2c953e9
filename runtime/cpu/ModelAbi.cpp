//===- ModelAbi.cpp - the C ABI of compiled gpuopt models -----------------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// Implements runtime/include/gpuopt/Runtime/ModelAbi.h over the model-specific
// part that gpuopt-compile emits
// (runtime/include/gpuopt/Runtime/CompiledModel.h): reads the metadata (the
// model's artifact) once, binds the weights by name, runs the load-time
// initializer at create time and the forward function per run. Linked into
// every compiled model library; no MLIR, no LLVM.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Runtime/ModelAbi.h"

#include "../base/ModelAbiSupport.h"
#include "../base/ModelMetadata.h"
#include "gpuopt/Runtime/Allocator.h"
#include "gpuopt/Runtime/CompiledModel.h"
#include "gpuopt/Runtime/CpuFeatures.h"
#include "gpuopt/Runtime/CpuKernels.h"
#include "gpuopt/Runtime/FileIO.h"
#include "gpuopt/Runtime/MemRef.h"
#include "gpuopt/Runtime/Safetensors.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <new>

extern "C" {
extern const uint8_t gpuopt_compiled_metadata[];
extern const gpuopt_model_note gpuopt_compiled_note;
// The end of the note's section (GPUOPT_MODEL_NOTE_SECTION), defined by the
// linker: the metadata's bytes end there at the latest, whatever size an
// edited note claims.
extern const uint8_t __stop_gpuopt_model[];
extern const int64_t gpuopt_compiled_ranks[];
int gpuopt_compiled_init(void **descriptors);
int gpuopt_compiled_forward(void **descriptors);
}

namespace rt = gpuopt::runtime;
using rt::Status;
using Metadata = rt::ModelMetadata;
using Arg = rt::ModelArg;
using ArgKind = rt::ModelArgKind;
using Descriptor = rt::DenseMemRef;

namespace {

/// The library's code uses every recorded extension: refuse to run it on a
/// CPU without one (it would die with SIGILL), naming the --cpu= levels
/// whose code would run here.
Status checkCpu(const Metadata &md) {
  for (const std::string &feature : md.cpuFeatures)
    if (!rt::isCheckedCpuFeature(feature))
      return Status::error("the model library needs CPU feature '" + feature +
                           "', which this runtime cannot check");
  std::vector<std::string> missing = rt::missingCpuFeatures(md.cpuFeatures);
  if (missing.empty())
    return Status::ok();
  // "cpu" is the level, or the build host's CPU for --cpu=native.
  std::string built = rt::cpuLevel(md.cpu)
                          ? "--cpu=" + md.cpu
                          : "--cpu=native (on a " +
                                (md.cpu.empty() ? "unknown CPU" : md.cpu) + ")";
  return Status::error("this library was built with " + built + " and needs " +
                       rt::joinCpuFeatures(md.cpuFeatures) +
                       "; this CPU lacks " + rt::joinCpuFeatures(missing) +
                       ": rebuild with " + rt::cpuLevelsForThisCpu());
}

/// Compares the descriptor counts and ranks the metadata implies with
/// gpuopt_compiled_ranks: the generated code reads a descriptor's sizes and
/// strides at the words of the rank it was compiled for, so a metadata that
/// disagrees (even one whose checksum was recomputed) must not be used to
/// build descriptors.
Status checkRanks(const Metadata &md) {
  const int64_t *compiled = gpuopt_compiled_ranks;
  for (const auto &[name, fn] :
       {std::pair<const char *, const rt::ModelFunction *>{"init", &md.init},
        {"forward", &md.forward}}) {
    std::vector<size_t> ranks;
    for (const Arg &arg : fn->args)
      ranks.push_back(arg.shape.size());
    for (const std::vector<int64_t> &shape : fn->results)
      ranks.push_back(shape.size());
    int64_t count = *compiled++;
    if (count != static_cast<int64_t>(ranks.size()))
      return Status::error(std::string("the model metadata's \"") + name +
                           "\" function has " + std::to_string(ranks.size()) +
                           " arguments and results, the library's code was "
                           "compiled for " +
                           std::to_string(count));
    for (size_t i = 0; i < ranks.size(); ++i, ++compiled)
      if (*compiled != static_cast<int64_t>(ranks[i]))
        return Status::error(std::string("the model metadata's \"") + name +
                             "\" descriptor " + std::to_string(i) +
                             " has rank " + std::to_string(ranks[i]) +
                             ", the library's code was compiled for rank " +
                             std::to_string(*compiled));
  }
  return Status::ok();
}

/// Parses the metadata after checking it against the length and hash that
/// gpuopt-compile compiled into the code: the descriptors built from it must
/// describe the buffers the code was compiled for.
Status parseMetadata(Metadata &md) {
  const gpuopt_model_note &note = gpuopt_compiled_note;
  // A size edited beyond the section is not read past its end.
  size_t room = reinterpret_cast<uintptr_t>(__stop_gpuopt_model) -
                reinterpret_cast<uintptr_t>(gpuopt_compiled_metadata);
  if (note.metadata_version != GPUOPT_COMPILED_METADATA_VERSION ||
      note.metadata_size > room ||
      gpuopt_fnv1a64(reinterpret_cast<const char *>(gpuopt_compiled_metadata),
                     note.metadata_size) != note.metadata_hash)
    return Status::error(
        "corrupt model metadata: it does not match the checksum compiled into "
        "the library's code (the file was modified after gpuopt-compile)");
  if (Status s = rt::parseModelMetadata(gpuopt_compiled_metadata,
                                        note.metadata_size, md);
      !s)
    return s;
  return checkRanks(md);
}

/// The metadata, parsed once per library.
const Metadata *getMetadata(Status &status) {
  static Metadata md;
  static Status parsed = parseMetadata(md);
  status = parsed;
  return parsed ? &md : nullptr;
}

size_t numElements(const std::vector<int64_t> &shape) {
  size_t n = 1;
  for (int64_t d : shape)
    n *= static_cast<size_t>(d);
  return n;
}

} // namespace

struct gpuopt_model {
  const Metadata *md = nullptr;
  /// Parameters the forward function reads, by index into md->params.
  std::vector<rt::HostTensor> params;
  /// Results of the initializer.
  std::vector<std::vector<float>> derived;
  /// Descriptors of the forward function's arguments and results.
  std::vector<Descriptor> descriptors;
  std::vector<void *> pointers;
  /// Serialises gpuopt_model_run: the descriptors are shared by every call
  /// (callers such as Python's ctypes release their own lock around it).
  std::mutex runMutex;
};

namespace {

/// Binds the weights file to md.params (in `model->params`).
Status bindWeights(const Metadata &md, const char *path, bool strict,
                   const rt::SafetensorsLimits &limits, gpuopt_model &model) {
  rt::SafetensorsFile file;
  if (Status s = rt::readSafetensors(path, file, limits); !s)
    return s;
  std::string where = path;
  model.params.resize(md.params.size());
  for (size_t i = 0; i < md.params.size(); ++i) {
    const rt::ModelParam &p = md.params[i];
    auto it = file.tensors.find(p.name);
    if (it == file.tensors.end())
      return Status::error(where + ": parameter '" + p.name +
                           "' is missing (the model has " +
                           std::to_string(md.params.size()) + " parameters)");
    rt::HostTensor &t = it->second;
    if (t.dtype != rt::DType::F32)
      return Status::error(where + ": parameter '" + p.name + "' is " +
                           rt::dtypeName(t.dtype) +
                           "; compiled models take F32");
    if (t.shape != p.shape)
      return Status::error(where + ": parameter '" + p.name + "' has shape " +
                           rt::formatShape(t.shape) + ", the model expects " +
                           rt::formatShape(p.shape));
    model.params[i] = std::move(t);
    file.tensors.erase(it);
  }
  // BatchNorm's counters are in every real state_dict and never a parameter.
  for (auto it = file.tensors.begin(); it != file.tensors.end();)
    it = rt::isTrainingCounter(it->first) ? file.tensors.erase(it)
                                          : std::next(it);
  if (strict && !file.tensors.empty()) {
    std::string names;
    size_t shown = 0;
    for (const auto &entry : file.tensors) {
      if (shown++ == 3) {
        names += ", ...";
        break;
      }
      names +=
          (names.empty() ? "'" : ", '") + rt::escapeName(entry.first) + "'";
    }
    return Status::error(where + ": " + std::to_string(file.tensors.size()) +
                         " tensor(s) are not used by the model (" + names +
                         ")");
  }
  return Status::ok();
}

/// The generated code compares every descriptor's sizes with the static
/// shapes it was compiled for (CompiledModel.h).
constexpr const char *kShapeMismatch =
    "the model metadata's shapes differ from the shapes the library's code "
    "was compiled for; nothing ran";

/// Runs the initializer and prepares the forward function's descriptors.
Status initialize(const Metadata &md, gpuopt_model &model) {
  std::vector<Descriptor> initDescriptors;
  for (const Arg &arg : md.init.args) {
    initDescriptors.emplace_back(arg.shape);
    initDescriptors.back().setData(model.params[arg.index].data.data());
  }
  for (const std::vector<int64_t> &shape : md.init.results) {
    model.derived.emplace_back(numElements(shape));
    initDescriptors.emplace_back(shape);
    initDescriptors.back().setData(model.derived.back().data());
  }
  std::vector<void *> initPointers;
  for (Descriptor &d : initDescriptors)
    initPointers.push_back(d.get());
  int status = 0;
  if (std::string error; !rt::callGenerated(gpuopt_compiled_init,
                                            initPointers.data(), status, error))
    return Status::error("the load-time initializer failed: " + error);
  if (status != 0)
    return Status::error(std::string("gpuopt_model_create: ") + kShapeMismatch);

  // Parameters only the initializer read are not needed any more.
  std::vector<bool> used(md.params.size(), false);
  for (const Arg &arg : md.forward.args)
    if (arg.kind == ArgKind::Param)
      used[arg.index] = true;
  for (size_t i = 0; i < used.size(); ++i)
    if (!used[i])
      model.params[i] = rt::HostTensor();

  for (const Arg &arg : md.forward.args) {
    model.descriptors.emplace_back(arg.shape);
    if (arg.kind == ArgKind::Param)
      model.descriptors.back().setData(model.params[arg.index].data.data());
    else if (arg.kind == ArgKind::Derived)
      model.descriptors.back().setData(model.derived[arg.index].data());
  }
  for (const std::vector<int64_t> &shape : md.forward.results)
    model.descriptors.emplace_back(shape);
  for (Descriptor &d : model.descriptors)
    model.pointers.push_back(d.get());
  return Status::ok();
}

} // namespace

extern "C" {

int gpuopt_model_abi_version(void) { return GPUOPT_MODEL_ABI_VERSION; }

void gpuopt_model_options_init(gpuopt_model_options *options) {
  rt::abi::initOptions(options);
}

gpuopt_model *gpuopt_model_create(const gpuopt_model_options *options,
                                  char *err, size_t errlen) {
  if (!rt::abi::checkOptions(options, "this library", err, errlen))
    return nullptr;
  // The library is the artifact; any other one is loaded by the runtime.
  if (options->artifact_path) {
    rt::abi::setError(
        err, errlen,
        std::string("gpuopt_model_create: artifact_path is '") +
            options->artifact_path +
            "', but this is a compiled model library, which loads only "
            "itself (artifact_path must be NULL); load other artifacts "
            "with libgpuopt_runtime.so");
    return nullptr;
  }
  const char *weights_path = options->weights_path;
  int strict = options->strict;
  const gpuopt_model_limits *limits = options->limits;
  rt::SafetensorsLimits readerLimits;
  if (limits) {
    readerLimits.maxHeaderBytes = limits->max_header_bytes;
    readerLimits.maxTensors = limits->max_tensors;
    readerLimits.maxRank = limits->max_rank;
  }
  Status status;
  const Metadata *md = getMetadata(status);
  if (!md) {
    rt::abi::setError(err, errlen, status.message());
    return nullptr;
  }
  if (Status s = rt::checkModelMetadataLimits(*md, readerLimits); !s) {
    rt::abi::setError(err, errlen, s.message());
    return nullptr;
  }
  if (Status s = checkCpu(*md); !s) {
    rt::abi::setError(err, errlen, s.message());
    return nullptr;
  }
  // A GPUOPT_CPU_ISA the kernels cannot run (CpuKernels.h).
  if (std::string error; !rt::checkCpuIsa(error)) {
    rt::abi::setError(err, errlen, error);
    return nullptr;
  }
  if (!weights_path && !md->params.empty()) {
    rt::abi::setError(err, errlen,
                      "the model has " + std::to_string(md->params.size()) +
                          " parameters; no weights file given");
    return nullptr;
  }
  std::unique_ptr<gpuopt_model> model(new (std::nothrow) gpuopt_model);
  if (!model) {
    rt::abi::setError(err, errlen, "out of memory");
    return nullptr;
  }
  model->md = md;
  // Nothing may escape the C ABI: an allocation failure or a thread that
  // cannot start is an error message, not std::terminate (nor the abort of
  // LLVM's new-handler in a tool that loads the library).
  try {
    rt::BadAllocScope throwing;
    if (Status s = weights_path ? bindWeights(*md, weights_path, strict != 0,
                                              readerLimits, *model)
                                : Status::ok();
        !s) {
      rt::abi::setError(err, errlen, s.message());
      return nullptr;
    }
    if (Status s = initialize(*md, *model); !s) {
      rt::abi::setError(err, errlen, s.message());
      return nullptr;
    }
  } catch (const std::exception &e) {
    rt::abi::setError(err, errlen,
                      std::string("gpuopt_model_create: ") + e.what());
    return nullptr;
  }
  return model.release();
}

void gpuopt_model_destroy(gpuopt_model *model) { delete model; }

int gpuopt_model_num_inputs(const gpuopt_model *model) {
  return model ? static_cast<int>(model->md->inputs.size()) : -1;
}

int gpuopt_model_num_outputs(const gpuopt_model *model) {
  return model ? static_cast<int>(model->md->forward.results.size()) : -1;
}

int gpuopt_model_input_shape(const gpuopt_model *model, int index,
                             int64_t *shape) {
  return model ? rt::abi::copyShape(model->md->inputs, index, shape) : -1;
}

int gpuopt_model_output_shape(const gpuopt_model *model, int index,
                              int64_t *shape) {
  return model ? rt::abi::copyShape(model->md->forward.results, index, shape)
               : -1;
}

int gpuopt_model_run(gpuopt_model *model, const float *const *inputs,
                     float *const *outputs, char *err, size_t errlen) {
  if (!model) {
    rt::abi::setError(err, errlen, "gpuopt_model_run: model is NULL");
    return 1;
  }
  const Metadata &md = *model->md;
  size_t numInputs = md.inputs.size(), numOutputs = md.forward.results.size();
  if ((numInputs && !inputs) || (numOutputs && !outputs)) {
    rt::abi::setError(err, errlen,
                      "gpuopt_model_run: inputs or outputs is NULL");
    return 1;
  }
  for (size_t i = 0; i < numInputs; ++i)
    if (!inputs[i]) {
      rt::abi::setError(err, errlen,
                        "gpuopt_model_run: input " + std::to_string(i) +
                            " is NULL");
      return 1;
    }
  for (size_t i = 0; i < numOutputs; ++i)
    if (!outputs[i]) {
      rt::abi::setError(err, errlen,
                        "gpuopt_model_run: output " + std::to_string(i) +
                            " is NULL");
      return 1;
    }
  std::lock_guard<std::mutex> lock(model->runMutex);
  for (size_t i = 0; i < md.forward.args.size(); ++i)
    if (md.forward.args[i].kind == ArgKind::Input)
      model->descriptors[i].setData(inputs[md.forward.args[i].index]);
  size_t numArgs = md.forward.args.size();
  for (size_t i = 0; i < numOutputs; ++i)
    model->descriptors[numArgs + i].setData(outputs[i]);
  try {
    int status = 0;
    if (std::string error; !rt::callGenerated(
            gpuopt_compiled_forward, model->pointers.data(), status, error)) {
      rt::abi::setError(err, errlen, "gpuopt_model_run: " + error);
      return 1;
    }
    if (status != 0) {
      rt::abi::setError(err, errlen,
                        std::string("gpuopt_model_run: ") + kShapeMismatch);
      return 1;
    }
  } catch (const std::exception &e) {
    rt::abi::setError(err, errlen,
                      std::string("gpuopt_model_run: ") + e.what());
    return 1;
  }
  return 0;
}

} // extern "C"
