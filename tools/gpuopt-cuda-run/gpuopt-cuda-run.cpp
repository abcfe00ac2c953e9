//===- gpuopt-cuda-run.cpp - run a compiled CUDA model --------------------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
//   gpuopt-cuda-run MODEL.gpuopt --weights=W.safetensors --input=@x.npy
//       [--output=@y.npy] [--runs=N] [--warmup=N] [--graph]
//       [--profile[=PASSES]] [--device=I] [--strict-weights] [--json=FILE]
//       [--sync-each-step] [--cudnn-heuristics]
//   gpuopt-cuda-run MODEL.gpuopt --emulate[=ORDER] --weights=W.safetensors
//       --input=@x.npy [--output=@y.npy] [--runs=N] [--warmup=N]
//       [--profile[=PASSES]] [--json=FILE] [--strict-weights]
//       [--skip-plan-checks] [--sync-each-step]  (no GPU needed)
//   gpuopt-cuda-run MODEL.gpuopt --inspect      (no GPU needed)
//   gpuopt-cuda-run MODEL.gpuopt --dump         (no GPU needed)
//
// --inspect reads and checks the launch plan and summarizes it (with each
// Library step's cuDNN/cuBLASLt calls and the libraries the plan needs,
// CudaLibraryPlan.h); --dump prints
// the whole artifact (runtime/include/gpuopt/Runtime/Artifact.fbs) as text
// once it verifies against the schema, kernel images elided after 16 bytes.
// --emulate runs the artifact's launch plan on the CPU with its host image
// (gpuopt-compile --cuda-host-image; runtime/include/gpuopt/Runtime/
// CudaEmulator.h), blocks and threads in ORDER: forward (the default),
// reversed, shuffled or shuffled:SEED.
//
// --runs times N forwards (CUDA events around each; the emulator: the host's
// clock) after --warmup untimed ones. --profile is a separate pass after
// them: each launch alone, an event before and after it and a wait for it
// before the next (host clock when emulating), PASSES times (default 5), the
// median per step; --json gets the per-step times and their sum
// (kernel_ms_sum, null without --profile). Emulated times are the host's,
// for dry runs of the benchmark only.
//
// Every mode but --dump checks the launch plan when it reads the artifact
// (CudaModel.h: checkCudaPlan), before any driver call. --sync-each-step
// waits for each launch and names the step of an asynchronous fault (also
// GPUOPT_CUDA_SYNC_EACH_STEP=1; not with --graph); the emulator runs one
// launch at a time anyway, so there it changes nothing. --skip-plan-checks
// (emulation only) runs a plan the data-flow checks refuse, to see what it
// computes; the checks that keep the emulator inside its arena still run.
//
// Library steps run through cuDNN 9 and cuBLASLt, opened at load only when
// the plan has such steps (GPUOPT_CUDNN_LIBRARY / GPUOPT_CUBLASLT_LIBRARY
// name the files, else libcudnn.so.9 and libcublasLt.so.13 or .12 are
// looked up); each convolution's algorithm is timed on the arena's buffers
// at load (cudnnFind*AlgorithmEx), or with --cudnn-heuristics taken from
// cuDNN's heuristics.
//
// Builds with a C++ compiler and the CUDA headers only (no MLIR, no LLVM).
// Exit status: 0 on success, 1 on bad input, 2 when no usable GPU or driver,
// or a vendor library a Library step needs does not load.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Runtime/Artifact.h"
#include "gpuopt/Runtime/CudaEmulator.h"
#include "gpuopt/Runtime/CudaLibraryPlan.h"
#include "gpuopt/Runtime/CudaModel.h"
#include "gpuopt/Runtime/FileIO.h"
#include "gpuopt/Runtime/Npy.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace gpuopt::runtime;

namespace {

void usage() {
  std::fprintf(
      stderr,
      "usage: gpuopt-cuda-run MODEL.gpuopt --weights=W.safetensors "
      "--input=@x.npy [--output=@y.npy]\n"
      "         [--runs=N] [--warmup=N] [--graph] [--profile[=PASSES]] "
      "[--device=I]\n"
      "         [--strict-weights] [--json=FILE] [--sync-each-step]\n"
      "         [--cudnn-heuristics]\n"
      "       gpuopt-cuda-run MODEL.gpuopt --emulate[=ORDER] "
      "--weights=W.safetensors --input=@x.npy\n"
      "         [--output=@y.npy] [--runs=N] [--warmup=N] "
      "[--profile[=PASSES]] [--json=FILE]\n"
      "         [--strict-weights] [--skip-plan-checks] [--sync-each-step]\n"
      "         (ORDER: forward, reversed, shuffled[:SEED])\n"
      "       gpuopt-cuda-run MODEL.gpuopt --inspect\n"
      "       gpuopt-cuda-run MODEL.gpuopt --dump\n");
}

int fail(const std::string &message, int code = 1) {
  std::fprintf(stderr, "gpuopt-cuda-run: error: %s\n", message.c_str());
  return code;
}

bool parseInt(const char *text, int lo, int hi, int &out) {
  char *end = nullptr;
  long v = std::strtol(text, &end, 10);
  if (!*text || *end || v < lo || v > hi)
    return false;
  out = static_cast<int>(v);
  return true;
}

double percentile(std::vector<double> v, double p) {
  if (v.empty())
    return 0;
  std::sort(v.begin(), v.end());
  size_t i = static_cast<size_t>(p * (v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

/// The Library steps of both plans as call plans: one line each, and which
/// libraries they need.
Status printLibrarySteps(const CudaArtifact &art) {
  std::vector<std::string> lines;
  bool cudnn = false, cublasLt = false;
  size_t counts[2] = {0, 0};
  for (const char *plan : {"init", "run"}) {
    const std::vector<CudaStep> &steps = plan[0] == 'i' ? art.init : art.run;
    for (size_t i = 0; i < steps.size(); ++i) {
      if (!steps[i].isLibrary)
        continue;
      LibraryCallPlan p;
      if (Status s = describeLibraryStep(art, plan, i, p); !s)
        return s;
      ++counts[plan[0] == 'i' ? 0 : 1];
      cudnn |= p.needsCudnn();
      cublasLt |= p.needsCublasLt();
      lines.push_back("  " + p.where + ": " + formatLibraryCall(p));
    }
  }
  if (lines.empty())
    return Status::ok();
  std::printf("library steps: %zu at load time, %zu per forward; needs%s%s\n",
              counts[0], counts[1], cudnn ? " cuDNN 9" : "",
              cublasLt ? (cudnn ? ", cuBLASLt" : " cuBLASLt") : "");
  for (const std::string &line : lines)
    std::printf("%s\n", line.c_str());
  return Status::ok();
}

void printInspect(const CudaArtifact &art) {
  size_t counts[5] = {0, 0, 0, 0, 0};
  const char *kinds[5] = {"input", "output", "param", "constant", "temp"};
  for (const CudaBuffer &b : art.buffers)
    for (int k = 0; k < 5; ++k)
      if (b.kind == kinds[k])
        ++counts[k];
  std::printf("entry %s, %zu kernels; images:", art.entry.c_str(),
              art.kernels.size());
  for (const CudaImage &image : art.images)
    std::printf(" %s %s (%zu bytes)", image.format.c_str(), image.chip.c_str(),
                image.bytes.size());
  std::printf("\n");
  std::printf("arena %llu bytes; buffers: %zu input, %zu output, %zu param, "
              "%zu constant, %zu temp\n",
              static_cast<unsigned long long>(art.arenaBytes), counts[0],
              counts[1], counts[2], counts[3], counts[4]);
  std::printf("launches: %zu at load time, %zu per forward\n", art.init.size(),
              art.run.size());
}

/// Reads the model's outputs with `get` and writes them to `paths` (.npy).
template <typename Get>
Status writeOutputs(const CudaArtifact &art,
                    const std::vector<std::string> &paths, Get get) {
  std::vector<HostTensor> out(art.outputs.size());
  std::vector<float *> ptrs;
  for (size_t i = 0; i < out.size(); ++i) {
    const CudaBuffer &b = art.buffers[art.outputs[i]];
    out[i].dtype = DType::F32;
    out[i].shape = b.shape;
    out[i].data.resize(b.bytes);
    ptrs.push_back(reinterpret_cast<float *>(out[i].data.data()));
  }
  if (Status s = get(ptrs); !s)
    return s;
  for (size_t i = 0; i < paths.size(); ++i)
    if (Status s = writeNpy(paths[i], out[i]); !s)
      return s;
  return Status::ok();
}

/// What --json receives: the device, the timed forwards and the profile.
struct RunReport {
  std::string device;
  int driver = 0;
  std::string sm;
  size_t launches = 0;
  bool graph = false, emulated = false, profiled = false;
  int passes = 0;
  std::vector<double> ms, steps;
};

Status writeJson(const std::string &path, const RunReport &r) {
  double busy = 0;
  for (double t : r.steps)
    busy += t;
  std::string json;
  auto append = [&json](const char *format, auto... args) {
    int n = std::snprintf(nullptr, 0, format, args...);
    size_t at = json.size();
    json.resize(at + static_cast<size_t>(n) + 1);
    std::snprintf(&json[at], static_cast<size_t>(n) + 1, format, args...);
    json.resize(at + static_cast<size_t>(n));
  };
  // The device name is the driver's (or ours); anything JSON would need
  // escaped becomes '?' (no device name seen has any).
  std::string device = r.device;
  for (char &c : device)
    if (c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20)
      c = '?';
  append("{\"device\": \"%s\", \"emulated\": %s, \"driver\": %d, "
         "\"sm\": \"%s\", \"launches\": %zu, \"graph\": %s, \"runs\": %zu, "
         "\"median_ms\": %.6f, \"p10_ms\": %.6f, \"p90_ms\": %.6f, "
         "\"profile_passes\": %d, \"kernel_ms_sum\": ",
         device.c_str(), r.emulated ? "true" : "false", r.driver, r.sm.c_str(),
         r.launches, r.graph ? "true" : "false", r.ms.size(),
         percentile(r.ms, 0.5), percentile(r.ms, 0.1), percentile(r.ms, 0.9),
         r.profiled ? r.passes : 0);
  if (r.profiled)
    append("%.6f", busy);
  else
    json += "null";
  json += ", \"step_ms\": [";
  for (size_t i = 0; i < r.steps.size(); ++i)
    append("%s%.6f", i ? ", " : "", r.steps[i]);
  json += "]}\n";
  return writeFileBytes(path, reinterpret_cast<const uint8_t *>(json.data()),
                        json.size());
}

} // namespace

int main(int argc, char **argv) {
  std::string model, weights, jsonPath;
  std::vector<std::string> inputs, outputs;
  int runs = 0, warmup = 3, device = 0, passes = 5;
  bool graph = false, profile = false, strict = false, inspect = false,
       dump = false, emulate = false, deviceGiven = false, sync = false,
       skipChecks = false, heuristics = false;
  EmulationOptions emulation;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const char *flag) -> const char * {
      size_t n = std::strlen(flag);
      return a.compare(0, n, flag) == 0 ? argv[i] + n : nullptr;
    };
    if (const char *v = value("--weights=")) {
      weights = v;
    } else if (const char *v = value("--input=@")) {
      inputs.push_back(v);
    } else if (const char *v = value("--output=@")) {
      outputs.push_back(v);
    } else if (const char *v = value("--json=")) {
      jsonPath = v;
    } else if (const char *v = value("--runs=")) {
      if (!parseInt(v, 0, 1000000, runs))
        return fail("--runs must be an integer in [0, 1000000]");
    } else if (const char *v = value("--warmup=")) {
      if (!parseInt(v, 0, 1000000, warmup))
        return fail("--warmup must be an integer in [0, 1000000]");
    } else if (const char *v = value("--device=")) {
      if (!parseInt(v, 0, 1024, device))
        return fail("--device must be an integer in [0, 1024]");
      deviceGiven = true;
    } else if (const char *v = value("--emulate=")) {
      if (Status s = parseEmulationOrder(v, emulation); !s)
        return fail("--emulate: " + s.message());
      emulate = true;
    } else if (a == "--emulate") {
      emulate = true;
    } else if (a == "--graph") {
      graph = true;
    } else if (a == "--profile") {
      profile = true;
    } else if (const char *v = value("--profile=")) {
      if (!parseInt(v, 1, 1000, passes))
        return fail("--profile= must be a number of passes in [1, 1000]");
      profile = true;
    } else if (a == "--strict-weights") {
      strict = true;
    } else if (a == "--sync-each-step") {
      sync = true;
    } else if (a == "--cudnn-heuristics") {
      heuristics = true;
    } else if (a == "--skip-plan-checks") {
      skipChecks = true;
    } else if (a == "--inspect") {
      inspect = true;
    } else if (a == "--dump") {
      dump = true;
    } else if (a == "--help" || a == "-h") {
      usage();
      return 0;
    } else if (!a.empty() && a[0] != '-' && model.empty()) {
      model = a;
    } else {
      usage();
      return fail("unknown or repeated argument '" + a + "'");
    }
  }
  if (model.empty()) {
    usage();
    return fail("no model given");
  }
  // An output that is an input is refused before anything is read.
  std::vector<NamedPath> sources = {{"the model", model},
                                    {"--weights", weights}};
  for (const std::string &path : inputs)
    sources.push_back({"--input", path});
  std::vector<NamedPath> sinks = {{"--json", jsonPath}};
  for (const std::string &path : outputs)
    sinks.push_back({"--output", path});
  for (const NamedPath &sink : sinks)
    if (Status s = checkOutputIsNotInput(sink, sources); !s)
      return fail(s.message());
  if (inspect && dump)
    return fail("--inspect and --dump are exclusive");
  if (emulate && (inspect || dump))
    return fail("--emulate and --inspect/--dump are exclusive");
  if (emulate && (graph || deviceGiven))
    return fail("--graph and --device choose how a GPU runs; they do not "
                "apply to --emulate");
  if ((sync || skipChecks) && (inspect || dump))
    return fail("--sync-each-step and --skip-plan-checks run a model; they "
                "do not apply to --inspect/--dump");
  if (heuristics && (inspect || dump || emulate))
    return fail("--cudnn-heuristics chooses how a GPU runs Library steps; it "
                "does not apply to --inspect/--dump/--emulate");
  if (skipChecks && !emulate)
    return fail("--skip-plan-checks applies to --emulate only (a GPU never "
                "runs a plan the checks refuse)");
  if (sync && graph)
    return fail("--sync-each-step and --graph are exclusive (a CUDA graph "
                "replays the forward without waiting between launches)");
  if (dump) {
    std::vector<uint8_t> bytes;
    if (Status s = readFileBytes(model, bytes, kMaxCudaArtifactBytes); !s)
      return fail(s.message());
    const gpuopt::artifact::Model *root = nullptr;
    if (Status s = verifyArtifact(bytes.data(), bytes.size(), model, root); !s)
      return fail(s.message());
    std::string text = dumpArtifact(bytes.data());
    if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() ||
        std::fflush(stdout) != 0)
      return fail("cannot write the dump to standard output");
    return 0;
  }
  if (inspect) {
    CudaArtifact art;
    if (Status s = readCudaArtifact(model, art); !s)
      return fail(s.message());
    printInspect(art);
    if (Status s = printLibrarySteps(art); !s)
      return fail(s.message());
    return 0;
  }
  if (weights.empty())
    return fail("--weights=FILE is required");

  // Read inputs before touching the GPU, so that bad files are reported as
  // such on any machine.
  CudaArtifact art;
  if (Status s = readCudaArtifact(model, art, !skipChecks); !s)
    return fail(s.message());
  if (inputs.size() != art.inputs.size())
    return fail("the model takes " + std::to_string(art.inputs.size()) +
                " inputs, got " + std::to_string(inputs.size()) +
                " --input=@FILE");
  if (!outputs.empty() && outputs.size() != art.outputs.size())
    return fail("the model has " + std::to_string(art.outputs.size()) +
                " outputs, got " + std::to_string(outputs.size()) +
                " --output=@FILE");
  std::vector<HostTensor> in(inputs.size());
  std::vector<const float *> inPtrs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (Status s = readNpy(inputs[i], in[i]); !s)
      return fail(s.message());
    const CudaBuffer &b = art.buffers[art.inputs[i]];
    if (in[i].shape != b.shape)
      return fail(inputs[i] + ": shape " + formatShape(in[i].shape) +
                  ", the model expects " + formatShape(b.shape));
    inPtrs.push_back(reinterpret_cast<const float *>(in[i].data.data()));
  }

  if (emulate) {
    // --sync-each-step: the emulator runs each launch to its end anyway.
    emulation.planChecks = !skipChecks;
    std::unique_ptr<CudaEmulator> e;
    if (Status s = CudaEmulator::create(model, weights, strict, emulation, e);
        !s)
      return fail(s.message());
    if (Status s = e->setInputs(inPtrs); !s)
      return fail(s.message());
    if (Status s = e->forward(); !s)
      return fail(s.message());
    if (Status s = writeOutputs(art, outputs,
                                [&](const std::vector<float *> &ptrs) {
                                  return e->getOutputs(ptrs);
                                });
        !s)
      return fail(s.message());
    RunReport report;
    report.device = std::string("emulator (") + hostImageChip() + ")";
    report.sm = hostImageChip();
    report.launches = art.run.size();
    report.emulated = true;
    report.profiled = profile;
    report.passes = passes;
    if (runs > 0)
      if (Status s = e->time(warmup, runs, report.ms); !s)
        return fail(s.message());
    if (profile)
      if (Status s = e->profileSteps(passes, report.steps); !s)
        return fail(s.message());
    if (runs > 0)
      std::printf("%s: %zu launches per forward, median %.4f ms (p10 %.4f, "
                  "p90 %.4f) over %d emulated runs on the host\n",
                  model.c_str(), art.run.size(), percentile(report.ms, 0.5),
                  percentile(report.ms, 0.1), percentile(report.ms, 0.9), runs);
    if (!jsonPath.empty())
      if (Status s = writeJson(jsonPath, report); !s)
        return fail(s.message());
    return 0;
  }

  std::unique_ptr<CudaModel> m;
  CudaModelOptions options;
  options.syncEachStep = sync;
  options.libraryHeuristics = heuristics;
  if (Status s = CudaModel::create(model, weights, strict, device, options, m);
      !s) {
    bool gpuMissing = s.message().find("NVIDIA driver") != std::string::npos ||
                      s.message().find("cuInit") != std::string::npos ||
                      s.message().find("no CUDA device") != std::string::npos;
    // CudaLibraries.h: kVendorLibraryMissing.
    bool libraryMissing =
        s.message().find("cannot load the vendor library") != std::string::npos;
    return fail(s.message() + (gpuMissing ? " (no usable GPU: nothing ran)"
                               : libraryMissing ? " (nothing ran)"
                                                : ""),
                gpuMissing || libraryMissing ? 2 : 1);
  }
  if (Status s = m->setInputs(inPtrs); !s)
    return fail(s.message());
  if (Status s = m->forward(graph); !s)
    return fail(s.message());
  if (Status s = writeOutputs(art, outputs,
                              [&](const std::vector<float *> &ptrs) {
                                return m->getOutputs(ptrs);
                              });
      !s)
    return fail(s.message());

  RunReport report;
  const CudaDeviceInfo &info = m->deviceInfo();
  report.device = info.name;
  report.driver = info.driverVersion;
  report.sm =
      std::to_string(info.computeMajor) + std::to_string(info.computeMinor);
  report.launches = art.run.size();
  report.graph = graph;
  report.profiled = profile;
  report.passes = passes;
  // The timed forwards first; the profile is a pass of its own after them.
  if (runs > 0)
    if (Status s = m->time(warmup, runs, graph, report.ms); !s)
      return fail(s.message());
  if (profile)
    if (Status s = m->profileSteps(passes, report.steps); !s)
      return fail(s.message());
  if (runs > 0)
    std::printf("%s: %zu launches per forward%s, median %.4f ms (p10 %.4f, "
                "p90 %.4f) over %d runs on %s\n",
                model.c_str(), art.run.size(), graph ? " (CUDA graph)" : "",
                percentile(report.ms, 0.5), percentile(report.ms, 0.1),
                percentile(report.ms, 0.9), runs, info.name.c_str());
  if (!jsonPath.empty())
    if (Status s = writeJson(jsonPath, report); !s)
      return fail(s.message());
  return 0;
}
