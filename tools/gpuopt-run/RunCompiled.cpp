//===- RunCompiled.cpp - gpuopt-run on a compiled model library -----------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//

#include "RunCompiled.h"

#include "gpuopt/Runtime/Allocator.h"
#include "gpuopt/Runtime/ModelAbi.h"
#include "gpuopt/Runtime/ModelLibrary.h"
#include "gpuopt/Runtime/Npy.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <dlfcn.h>
#include <fstream>
#include <sys/stat.h>

namespace rt = gpuopt::runtime;

namespace {

int fail(const std::string &msg) {
  std::fprintf(stderr, "gpuopt-run: error: %s\n", msg.c_str());
  return 1;
}

/// The C ABI of one loaded library.
struct ModelLibrary {
  decltype(&gpuopt_model_abi_version) abiVersion = nullptr;
  decltype(&gpuopt_model_create_with_limits) create = nullptr;
  decltype(&gpuopt_model_destroy) destroy = nullptr;
  decltype(&gpuopt_model_num_inputs) numInputs = nullptr;
  decltype(&gpuopt_model_num_outputs) numOutputs = nullptr;
  decltype(&gpuopt_model_input_shape) inputShape = nullptr;
  decltype(&gpuopt_model_output_shape) outputShape = nullptr;
  decltype(&gpuopt_model_run) run = nullptr;
  /// Optional: libraries built before it existed lack it.
  decltype(&gpuopt_cpu_kernel_isa) cpuIsa = nullptr;
};

template <typename F> bool lookup(void *handle, const char *name, F &fn) {
  fn = reinterpret_cast<F>(dlsym(handle, name));
  return fn != nullptr;
}

std::vector<int64_t> shapeOf(int (*query)(const gpuopt_model *, int, int64_t *),
                             const gpuopt_model *model, int index) {
  int rank = query(model, index, nullptr);
  std::vector<int64_t> shape(rank > 0 ? rank : 0);
  query(model, index, shape.data());
  return shape;
}

} // namespace

bool gpuopt::isCompiledModel(const std::string &path) {
  bool soName = path.size() > 3 && path.compare(path.size() - 3, 3, ".so") == 0;
  // Only a regular file is opened: a FIFO would block here (a `.so` name
  // that is not a regular file gets checkModelLibrary's message).
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
    return soName;
  std::ifstream in(path, std::ios::binary);
  char magic[4] = {0, 0, 0, 0};
  static const char elf[4] = {0x7f, 'E', 'L', 'F'};
  if (in && in.read(magic, 4) && std::memcmp(magic, elf, 4) == 0)
    return true;
  return soName;
}

int gpuopt::runCompiledModel(const CompiledRunArgs &args) {
  const std::string &lib = args.library;
  if (rt::Status s = rt::checkModelLibrary(lib); !s)
    return fail(s.message());
  void *handle = dlopen(
      lib.find('/') == std::string::npos ? ("./" + lib).c_str() : lib.c_str(),
      RTLD_NOW | RTLD_LOCAL);
  if (!handle)
    return fail("cannot load " + lib + ": " + dlerror());
  ModelLibrary abi;
  if (!lookup(handle, "gpuopt_model_abi_version", abi.abiVersion))
    return fail(lib + " is not a gpuopt model library (it does not define "
                      "gpuopt_model_abi_version)");
  int version = abi.abiVersion();
  if (version != GPUOPT_MODEL_ABI_VERSION)
    return fail(lib + " has model ABI version " + std::to_string(version) +
                ", this runtime supports version " +
                std::to_string(GPUOPT_MODEL_ABI_VERSION) +
                "; recompile it with this gpuopt-compile");
  if (!lookup(handle, "gpuopt_model_create_with_limits", abi.create) ||
      !lookup(handle, "gpuopt_model_destroy", abi.destroy) ||
      !lookup(handle, "gpuopt_model_num_inputs", abi.numInputs) ||
      !lookup(handle, "gpuopt_model_num_outputs", abi.numOutputs) ||
      !lookup(handle, "gpuopt_model_input_shape", abi.inputShape) ||
      !lookup(handle, "gpuopt_model_output_shape", abi.outputShape) ||
      !lookup(handle, "gpuopt_model_run", abi.run))
    return fail(lib + " is not a complete gpuopt model library (" + dlerror() +
                ")");
  lookup(handle, "gpuopt_cpu_kernel_isa", abi.cpuIsa);

  char err[1024] = "";
  auto clock = [] { return std::chrono::steady_clock::now(); };
  auto ms = [](auto d) {
    return std::chrono::duration<double, std::milli>(d).count();
  };
  auto start = clock();
  gpuopt_model_limits limits{args.limits.maxHeaderBytes, args.limits.maxTensors,
                             args.limits.maxRank};
  gpuopt_model *model =
      abi.create(args.weights.empty() ? nullptr : args.weights.c_str(),
                 args.strictWeights, &limits, err, sizeof(err));
  if (!model)
    return fail(err);
  double loadMs = ms(clock() - start);
  struct Destroy {
    ModelLibrary &abi;
    gpuopt_model *model;
    ~Destroy() { abi.destroy(model); }
  } destroy{abi, model};

  int numInputs = abi.numInputs(model), numOutputs = abi.numOutputs(model);
  if (args.inputs.size() != static_cast<size_t>(numInputs))
    return fail(lib + " takes " + std::to_string(numInputs) + " input(s) but " +
                std::to_string(args.inputs.size()) + " --input given");
  if (!args.outputs.empty() &&
      args.outputs.size() != static_cast<size_t>(numOutputs))
    return fail(lib + " returns " + std::to_string(numOutputs) +
                " result(s) but " + std::to_string(args.outputs.size()) +
                " --output given");
  std::vector<rt::HostTensor> inputs(numInputs), outputs(numOutputs);
  std::vector<const float *> inputPtrs;
  std::vector<float *> outputPtrs;
  for (int i = 0; i < numInputs; ++i) {
    rt::HostTensor &t = inputs[i];
    const std::string &path = args.inputs[i];
    if (rt::Status s = rt::readNpy(path, t); !s)
      return fail(s.message());
    std::vector<int64_t> shape = shapeOf(abi.inputShape, model, i);
    if (t.shape != shape)
      return fail(path + ": input " + std::to_string(i) + " has shape " +
                  rt::formatShape(t.shape) + ", the model expects " +
                  rt::formatShape(shape));
    inputPtrs.push_back(reinterpret_cast<const float *>(t.data.data()));
  }
  for (int i = 0; i < numOutputs; ++i) {
    rt::HostTensor &t = outputs[i];
    t.shape = shapeOf(abi.outputShape, model, i);
    if (!rt::tryAllocate(
            [&] { t.data.resize(t.numElements() * sizeof(float)); }))
      return fail(lib + ": out of memory allocating output " +
                  std::to_string(i) + " " + rt::formatShape(t.shape));
    outputPtrs.push_back(reinterpret_cast<float *>(t.data.data()));
  }

  std::vector<double> runMs;
  for (unsigned run = 0; run < std::max(1u, args.runs); ++run) {
    auto runStart = clock();
    if (abi.run(model, inputPtrs.data(), outputPtrs.data(), err, sizeof(err)))
      return fail(err);
    runMs.push_back(ms(clock() - runStart));
  }

  for (int i = 0; i < numOutputs; ++i) {
    std::string dest = "(not written)";
    if (!args.outputs.empty()) {
      if (rt::Status s = rt::writeNpy(args.outputs[i], outputs[i]); !s)
        return fail(s.message());
      dest = args.outputs[i];
    }
    if (!args.quiet)
      std::printf("output %d: %s f32 -> %s\n", i,
                  rt::formatShape(outputs[i].shape).c_str(), dest.c_str());
  }
  if (!args.quiet) {
    std::sort(runMs.begin(), runMs.end());
    const char *isa = abi.cpuIsa ? abi.cpuIsa() : nullptr;
    std::string kernels = isa ? std::string(" (") + isa + " kernels)" : "";
    // One call is not an inference time: it includes the first touch of the
    // weights and buffers (and the thread pool's start).
    if (runMs.size() == 1)
      std::printf("compiled %s%s: load-time %.1f ms, first call (includes "
                  "warm-up) %.1f ms\n",
                  lib.c_str(), kernels.c_str(), loadMs, runMs.front());
    else
      std::printf("compiled %s%s: load-time %.1f ms, inference %.1f ms "
                  "(median of %zu)\n",
                  lib.c_str(), kernels.c_str(), loadMs, runMs[runMs.size() / 2],
                  runMs.size());
  }
  return 0;
}
