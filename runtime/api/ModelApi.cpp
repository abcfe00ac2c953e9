//===- ModelApi.cpp - load and run any gpuopt artifact --------------------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// Implements runtime/include/gpuopt/Runtime/ModelApi.h: a model library is
// checked, dlopened and driven through its own C ABI; a CUDA artifact runs
// through CudaModel (when built with GPUOPT_CUDA_RUNTIME), or through
// CudaEmulator on device GPUOPT_DEVICE_EMULATE (any build).
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Runtime/ModelApi.h"

#include "gpuopt/Runtime/FileIO.h"
#include "gpuopt/Runtime/ModelLibrary.h"
#include "gpuopt/Runtime/Safetensors.h"

#include "gpuopt/Runtime/CudaEmulator.h"
#ifdef GPUOPT_CUDA_RUNTIME
#include "gpuopt/Runtime/CudaModel.h"
#endif

#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <thread>
#include <unistd.h>

namespace rt = gpuopt::runtime;
using rt::LoadedModel;
using rt::Status;

namespace {

//===----------------------------------------------------------------------===//
// Model libraries
//===----------------------------------------------------------------------===//

/// The C ABI of one loaded model library.
struct LibraryAbi {
  std::string path;
  void *handle = nullptr;
  decltype(&gpuopt_model_create) create = nullptr;
  decltype(&gpuopt_model_destroy) destroy = nullptr;
  decltype(&gpuopt_model_num_inputs) numInputs = nullptr;
  decltype(&gpuopt_model_num_outputs) numOutputs = nullptr;
  decltype(&gpuopt_model_input_shape) inputShape = nullptr;
  decltype(&gpuopt_model_output_shape) outputShape = nullptr;
  decltype(&gpuopt_model_run) run = nullptr;
  decltype(&gpuopt_set_num_threads) setNumThreads = nullptr;
  decltype(&gpuopt_get_num_threads) getNumThreads = nullptr;
  decltype(&gpuopt_cpu_kernel_isa) cpuIsa = nullptr;
};

/// Every library loaded, never unloaded: a library's thread pool has
/// workers running its code until the process ends.
struct Libraries {
  std::mutex mutex;
  std::vector<std::unique_ptr<LibraryAbi>> loaded;
  /// gpuopt_set_num_threads's last value; 0 when never called.
  int numThreads = 0;
  bool numThreadsSet = false;
};

Libraries &libraries() {
  static Libraries *instance = new Libraries; // outlives static destructors
  return *instance;
}

template <typename F> bool lookup(void *handle, const char *name, F &fn) {
  fn = reinterpret_cast<F>(dlsym(handle, name));
  return fn != nullptr;
}

std::string dlError() {
  const char *why = dlerror();
  return why ? why : "unknown reason";
}

/// Checks and loads `lib` (once per process).
Status loadLibrary(const std::string &lib, const LibraryAbi *&out) {
  if (Status s = rt::checkModelLibrary(lib); !s)
    return s;
  // A name without a slash would be searched on the library path.
  std::string path = lib.find('/') == std::string::npos ? "./" + lib : lib;
  void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle)
    return Status::error("cannot load " + lib + ": " + dlError());
  Libraries &all = libraries();
  std::lock_guard<std::mutex> lock(all.mutex);
  for (const std::unique_ptr<LibraryAbi> &known : all.loaded)
    if (known->handle == handle) {
      dlclose(handle); // dlopen counted one more reference
      out = known.get();
      return Status::ok();
    }
  auto abi = std::make_unique<LibraryAbi>();
  abi->path = lib;
  abi->handle = handle;
  decltype(&gpuopt_model_abi_version) abiVersion = nullptr;
  // Not dlclosed on failure: its constructors ran, its code may be in use.
  if (!lookup(handle, "gpuopt_model_abi_version", abiVersion))
    return Status::error(lib + " is not a gpuopt model library (it does not "
                               "define gpuopt_model_abi_version)");
  int version = abiVersion();
  if (version != GPUOPT_MODEL_ABI_VERSION)
    return Status::error(lib + " has model ABI version " +
                         std::to_string(version) +
                         ", this runtime supports version " +
                         std::to_string(GPUOPT_MODEL_ABI_VERSION) +
                         "; recompile it with this gpuopt-compile");
  if (!lookup(handle, "gpuopt_model_create", abi->create) ||
      !lookup(handle, "gpuopt_model_destroy", abi->destroy) ||
      !lookup(handle, "gpuopt_model_num_inputs", abi->numInputs) ||
      !lookup(handle, "gpuopt_model_num_outputs", abi->numOutputs) ||
      !lookup(handle, "gpuopt_model_input_shape", abi->inputShape) ||
      !lookup(handle, "gpuopt_model_output_shape", abi->outputShape) ||
      !lookup(handle, "gpuopt_model_run", abi->run) ||
      !lookup(handle, "gpuopt_set_num_threads", abi->setNumThreads) ||
      !lookup(handle, "gpuopt_get_num_threads", abi->getNumThreads) ||
      !lookup(handle, "gpuopt_cpu_kernel_isa", abi->cpuIsa))
    return Status::error(lib + " is not a complete gpuopt model library (" +
                         dlError() + ")");
  if (all.numThreadsSet)
    abi->setNumThreads(all.numThreads);
  out = abi.get();
  all.loaded.push_back(std::move(abi));
  return Status::ok();
}

std::vector<int64_t> shapeOf(int (*query)(const gpuopt_model *, int, int64_t *),
                             const gpuopt_model *model, int index) {
  int rank = query(model, index, nullptr);
  std::vector<int64_t> shape(rank > 0 ? rank : 0);
  query(model, index, shape.data());
  return shape;
}

class LibraryModel final : public LoadedModel {
public:
  LibraryModel(const LibraryAbi &abi, gpuopt_model *model)
      : abi(abi), model(model) {
    for (int i = 0, e = abi.numInputs(model); i < e; ++i)
      inputs.push_back(shapeOf(abi.inputShape, model, i));
    for (int i = 0, e = abi.numOutputs(model); i < e; ++i)
      outputs.push_back(shapeOf(abi.outputShape, model, i));
  }
  ~LibraryModel() override { abi.destroy(model); }

  const char *target() const override { return "cpu"; }
  std::string describe() const override {
    const char *isa = abi.cpuIsa();
    return isa ? std::string(" (") + isa + " kernels)" : "";
  }

protected:
  Status runImpl(const float *const *in, float *const *out) override {
    char err[1024] = "";
    if (abi.run(model, in, out, err, sizeof(err)))
      return Status::error(err);
    return Status::ok();
  }

private:
  const LibraryAbi &abi;
  gpuopt_model *model;
};

Status createLibraryModel(const std::string &lib,
                          const gpuopt_model_options &options,
                          std::unique_ptr<LoadedModel> &out) {
  const LibraryAbi *abi = nullptr;
  if (Status s = loadLibrary(lib, abi); !s)
    return s;
  // The library loads itself.
  gpuopt_model_options own = options;
  own.struct_size = sizeof(gpuopt_model_options);
  own.artifact_path = nullptr;
  char err[1024] = "";
  gpuopt_model *model = abi->create(&own, err, sizeof(err));
  if (!model)
    return Status::error(err);
  out = std::make_unique<LibraryModel>(*abi, model);
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// CUDA artifacts
//===----------------------------------------------------------------------===//

/// The model's input and output shapes: those of the plan's input and
/// output buffers, in order.
void setShapes(const rt::CudaArtifact &art,
               std::vector<std::vector<int64_t>> &inputs,
               std::vector<std::vector<int64_t>> &outputs) {
  for (unsigned i : art.inputs)
    inputs.push_back(art.buffers[i].shape);
  for (unsigned i : art.outputs)
    outputs.push_back(art.buffers[i].shape);
}

#ifdef GPUOPT_CUDA_RUNTIME
class CudaLoadedModel final : public LoadedModel {
public:
  CudaLoadedModel(std::unique_ptr<rt::CudaModel> model, int device)
      : model(std::move(model)), device(device) {
    setShapes(this->model->artifact(), inputs, outputs);
  }

  const char *target() const override { return "cuda"; }
  std::string describe() const override {
    return " (CUDA device " + std::to_string(device) + ": " +
           model->deviceInfo().name + ")";
  }

protected:
  Status runImpl(const float *const *in, float *const *out) override {
    if (Status s = model->setInputs({in, in + inputs.size()}); !s)
      return s;
    if (Status s = model->forward(/*graph=*/false); !s)
      return s;
    return model->getOutputs({out, out + outputs.size()});
  }

private:
  std::unique_ptr<rt::CudaModel> model;
  int device;
};
#endif

/// A CUDA artifact run by the emulator (CudaEmulator.h), threads in forward
/// order.
class EmulatedCudaModel final : public LoadedModel {
public:
  explicit EmulatedCudaModel(std::unique_ptr<rt::CudaEmulator> model)
      : model(std::move(model)) {
    setShapes(this->model->artifact(), inputs, outputs);
  }

  const char *target() const override { return "cuda"; }
  std::string describe() const override {
    return " (emulated on the host: the artifact's host image and plan)";
  }

protected:
  Status runImpl(const float *const *in, float *const *out) override {
    if (Status s = model->setInputs({in, in + inputs.size()}); !s)
      return s;
    if (Status s = model->forward(); !s)
      return s;
    return model->getOutputs({out, out + outputs.size()});
  }

private:
  std::unique_ptr<rt::CudaEmulator> model;
};

/// Applies the caller's weights-reader limits (the CUDA runtime and the
/// emulator read the weights with the default ones): the file is mapped, so
/// this reads only its header.
Status checkWeightLimits(const std::string &weights,
                         const gpuopt_model_options &options) {
  if (!options.limits)
    return Status::ok();
  rt::SafetensorsLimits limits;
  limits.maxHeaderBytes = options.limits->max_header_bytes;
  limits.maxTensors = options.limits->max_tensors;
  limits.maxRank = options.limits->max_rank;
  rt::SafetensorsFile file;
  return rt::readSafetensors(weights, file, limits);
}

Status createEmulatedModel(const std::string &path,
                           const gpuopt_model_options &options,
                           std::unique_ptr<LoadedModel> &out) {
  std::string weights = options.weights_path;
  if (Status s = checkWeightLimits(weights, options); !s)
    return s;
  std::unique_ptr<rt::CudaEmulator> model;
  if (Status s = rt::CudaEmulator::create(path, weights, options.strict != 0,
                                          rt::EmulationOptions(), model);
      !s)
    return s;
  out = std::make_unique<EmulatedCudaModel>(std::move(model));
  return Status::ok();
}

Status createCudaModel(const std::string &path,
                       const gpuopt_model_options &options,
                       std::unique_ptr<LoadedModel> &out) {
  if (options.device == GPUOPT_DEVICE_EMULATE) {
    if (!options.weights_path)
      return Status::error(path + ": no weights file given (a CUDA model is "
                                  "created with one)");
    return createEmulatedModel(path, options, out);
  }
#ifndef GPUOPT_CUDA_RUNTIME
  (void)options;
  (void)out;
  return Status::error(path + " is a CUDA artifact, but this runtime was "
                              "built without CUDA support (no CUDA toolkit "
                              "was found when it was built)");
#else
  if (!options.weights_path)
    return Status::error(path + ": no weights file given (a CUDA model is "
                                "created with one)");
  if (options.device < 0)
    return Status::error(path + ": device " + std::to_string(options.device) +
                         " is not a CUDA device ordinal (>= 0) or " +
                         std::to_string(GPUOPT_DEVICE_EMULATE) +
                         " (GPUOPT_DEVICE_EMULATE: the emulator)");
  std::string weights = options.weights_path;
  if (Status s = checkWeightLimits(weights, options); !s)
    return s;
  std::unique_ptr<rt::CudaModel> model;
  if (Status s = rt::CudaModel::create(path, weights, options.strict != 0,
                                       options.device, model);
      !s) {
    // Messages about the driver or device name no file: say which model.
    const std::string &m = s.message();
    bool located = m.compare(0, path.size(), path) == 0 ||
                   m.compare(0, weights.size(), weights) == 0;
    return located ? s : Status::error(path + ": " + m);
  }
  const rt::CudaArtifact &art = model->artifact();
  for (const auto &[what, list] :
       {std::pair<const char *, const std::vector<unsigned> *>{"input",
                                                               &art.inputs},
        {"output", &art.outputs}})
    for (size_t i = 0; i < list->size(); ++i)
      if (art.buffers[(*list)[i]].dtype != rt::DType::F32)
        return Status::error(path + ": " + what + " " + std::to_string(i) +
                             " is " +
                             rt::dtypeName(art.buffers[(*list)[i]].dtype) +
                             "; the model ABI passes F32 tensors");
  out = std::make_unique<CudaLoadedModel>(std::move(model), options.device);
  return Status::ok();
#endif
}

bool endsWith(const std::string &s, const char *suffix) {
  size_t n = std::strlen(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

} // namespace

//===----------------------------------------------------------------------===//
// The interface
//===----------------------------------------------------------------------===//

rt::ArtifactKind rt::identifyArtifact(const std::string &path) {
  int fd = -1;
  uint64_t size = 0;
  if (!openRegularFile(path, kMaxMappedBytes, fd, size))
    return ArtifactKind::Unknown;
  unsigned char magic[8] = {0};
  ssize_t n = readAt(fd, 0, magic, sizeof(magic));
  ::close(fd);
  if (n >= 4 && std::memcmp(magic,
                            "\x7f"
                            "ELF",
                            4) == 0)
    return ArtifactKind::ModelLibrary;
  if (n == 8 && std::memcmp(magic + 4, "GPOA", 4) == 0)
    return ArtifactKind::Cuda;
  if (n == 8 && std::memcmp(magic, "GPUOCUDA", 8) == 0)
    return ArtifactKind::OldCuda;
  return ArtifactKind::Unknown;
}

LoadedModel::~LoadedModel() = default;

Status LoadedModel::create(const gpuopt_model_options &options,
                           std::unique_ptr<LoadedModel> &out) {
  if (!options.artifact_path || !*options.artifact_path)
    return Status::error("no artifact given (a model library .so or a CUDA "
                         "artifact .gpuopt)");
  std::string path = options.artifact_path;
  ArtifactKind kind = identifyArtifact(path);
  // A `.so` that is missing or damaged gets the library loader's message,
  // a `.gpuopt` the CUDA artifact reader's.
  if (kind == ArtifactKind::Unknown && endsWith(path, ".so"))
    kind = ArtifactKind::ModelLibrary;
  if (kind == ArtifactKind::Unknown && endsWith(path, ".gpuopt"))
    kind = ArtifactKind::Cuda;
  if (kind == ArtifactKind::ModelLibrary)
    return createLibraryModel(path, options, out);
  if (kind == ArtifactKind::Cuda)
    return createCudaModel(path, options, out);
  if (kind == ArtifactKind::OldCuda)
    return Status::error(path + " is a CUDA artifact of an earlier gpuopt "
                                "(magic GPUOCUDA, a JSON plan); compile it "
                                "again with this gpuopt-compile");
  int fd = -1;
  uint64_t size = 0;
  if (Status s = openRegularFile(path, kMaxMappedBytes, fd, size); !s)
    return s;
  ::close(fd);
  return Status::error(path + " is not a gpuopt artifact: neither a model "
                              "library (an ELF file) nor a CUDA artifact "
                              "(\"GPOA\" at bytes 4..7)");
}

Status LoadedModel::run(const float *const *in, float *const *out) {
  size_t numInputs = inputs.size(), numOutputs = outputs.size();
  if ((numInputs && !in) || (numOutputs && !out))
    return Status::error("gpuopt_model_run: inputs or outputs is NULL");
  for (size_t i = 0; i < numInputs; ++i)
    if (!in[i])
      return Status::error("gpuopt_model_run: input " + std::to_string(i) +
                           " is NULL");
  for (size_t i = 0; i < numOutputs; ++i)
    if (!out[i])
      return Status::error("gpuopt_model_run: output " + std::to_string(i) +
                           " is NULL");
  std::lock_guard<std::mutex> lock(runMutex);
  return runImpl(in, out);
}

void rt::setModelNumThreads(int numThreads) {
  Libraries &all = libraries();
  std::lock_guard<std::mutex> lock(all.mutex);
  all.numThreads = numThreads;
  all.numThreadsSet = true;
  for (const std::unique_ptr<LibraryAbi> &abi : all.loaded)
    abi->setNumThreads(numThreads);
}

int rt::getModelNumThreads() {
  Libraries &all = libraries();
  std::lock_guard<std::mutex> lock(all.mutex);
  if (!all.loaded.empty())
    return all.loaded.back()->getNumThreads();
  if (all.numThreadsSet && all.numThreads > 0)
    return all.numThreads;
  // What a library would choose (runtime/cpu/ThreadPool.cpp, without its
  // upper bound and warnings, which it applies once loaded).
  if (const char *env = std::getenv("GPUOPT_NUM_THREADS")) {
    char *end = nullptr;
    long n = std::strtol(env, &end, 10);
    if (end != env && *end == '\0' && n > 0 && n <= (1 << 16))
      return static_cast<int>(n);
  }
  unsigned hw = std::thread::hardware_concurrency();
  return hw ? static_cast<int>(hw) : 1;
}

const char *rt::getLastModelCpuKernelIsa() {
  Libraries &all = libraries();
  std::lock_guard<std::mutex> lock(all.mutex);
  return all.loaded.empty() ? nullptr : all.loaded.back()->cpuIsa();
}
