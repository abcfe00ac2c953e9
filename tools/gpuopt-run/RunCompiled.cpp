//===- RunCompiled.cpp - gpuopt-run on a compiled model -------------------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//

#include "RunCompiled.h"

#include "gpuopt/Runtime/Allocator.h"
#include "gpuopt/Runtime/ModelApi.h"
#include "gpuopt/Runtime/Npy.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>

namespace rt = gpuopt::runtime;

namespace {

int fail(const std::string &msg) {
  std::fprintf(stderr, "gpuopt-run: error: %s\n", msg.c_str());
  return 1;
}

bool endsWith(const std::string &s, const char *suffix) {
  size_t n = std::strlen(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

} // namespace

gpuopt::CompiledKind gpuopt::getCompiledKind(const std::string &path) {
  // identifyArtifact opens only a regular file: a FIFO never blocks here (a
  // `.so` name that is not a regular file gets checkModelLibrary's message).
  switch (rt::identifyArtifact(path)) {
  case rt::ArtifactKind::ModelLibrary:
    return CompiledKind::Library;
  case rt::ArtifactKind::Cuda:
  case rt::ArtifactKind::OldCuda: // the runtime says what it is
    return CompiledKind::Cuda;
  case rt::ArtifactKind::Unknown:
    break;
  }
  if (endsWith(path, ".so"))
    return CompiledKind::Library;
  if (endsWith(path, ".gpuopt"))
    return CompiledKind::Cuda;
  return CompiledKind::None;
}

int gpuopt::runCompiledModel(const CompiledRunArgs &args) {
  const std::string &lib = args.library;
  auto clock = [] { return std::chrono::steady_clock::now(); };
  auto ms = [](auto d) {
    return std::chrono::duration<double, std::milli>(d).count();
  };
  auto start = clock();
  gpuopt_model_limits limits{args.limits.maxHeaderBytes, args.limits.maxTensors,
                             args.limits.maxRank};
  // (gpuopt_model_options_init is libgpuopt_runtime.so's, not linked here.)
  gpuopt_model_options options{};
  options.struct_size = sizeof(options);
  options.artifact_path = lib.c_str();
  options.weights_path = args.weights.empty() ? nullptr : args.weights.c_str();
  options.strict = args.strictWeights;
  options.limits = &limits;
  options.device = args.device;
  std::unique_ptr<rt::LoadedModel> model;
  if (rt::Status s = rt::LoadedModel::create(options, model); !s)
    return fail(s.message());
  double loadMs = ms(clock() - start);

  int numInputs = static_cast<int>(model->inputShapes().size());
  int numOutputs = static_cast<int>(model->outputShapes().size());
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
    const std::vector<int64_t> &shape = model->inputShapes()[i];
    if (t.shape != shape)
      return fail(path + ": input " + std::to_string(i) + " has shape " +
                  rt::formatShape(t.shape) + ", the model expects " +
                  rt::formatShape(shape));
    inputPtrs.push_back(reinterpret_cast<const float *>(t.data.data()));
  }
  for (int i = 0; i < numOutputs; ++i) {
    rt::HostTensor &t = outputs[i];
    t.shape = model->outputShapes()[i];
    if (!rt::tryAllocate(
            [&] { t.data.resize(t.numElements() * sizeof(float)); }))
      return fail(lib + ": out of memory allocating output " +
                  std::to_string(i) + " " + rt::formatShape(t.shape));
    outputPtrs.push_back(reinterpret_cast<float *>(t.data.data()));
  }

  std::vector<double> runMs;
  for (unsigned run = 0; run < std::max(1u, args.runs); ++run) {
    auto runStart = clock();
    if (rt::Status s = model->run(inputPtrs.data(), outputPtrs.data()); !s)
      return fail(s.message());
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
    std::string kernels = model->describe();
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
