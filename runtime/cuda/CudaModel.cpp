//===- CudaModel.cpp - run a compiled CUDA model --------------------------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// The driver API is resolved from libcuda.so.1 with dlopen/dlsym (cuda.h
// provides the types and, through its _v2 macros, the symbol names), so the
// runtime links on machines without a driver and reports its absence as an
// error. One primary context, one stream, one arena holding every buffer.
// Library steps call cuDNN/cuBLASLt (CudaLibraries.h) on the same stream,
// between the launches, in plan order.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Runtime/CudaModel.h"

#include "CudaLibraries.h"
#include "gpuopt/Runtime/FileIO.h"
#include "gpuopt/Runtime/Safetensors.h"

#include <cuda.h>
#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

using namespace gpuopt::runtime;

namespace {

#define GPUOPT_CU_STR2(x) #x
#define GPUOPT_CU_STR(x) GPUOPT_CU_STR2(x)

// Every driver function the runtime calls; the macro's argument expands to
// its versioned symbol (cuMemAlloc -> cuMemAlloc_v2).
#define GPUOPT_CU_FUNCTIONS(X)                                                 \
  X(cuInit)                                                                    \
  X(cuDriverGetVersion)                                                        \
  X(cuGetErrorName)                                                            \
  X(cuGetErrorString)                                                          \
  X(cuDeviceGetCount)                                                          \
  X(cuDeviceGet)                                                               \
  X(cuDeviceGetName)                                                           \
  X(cuDeviceGetAttribute)                                                      \
  X(cuDevicePrimaryCtxRetain)                                                  \
  X(cuDevicePrimaryCtxRelease)                                                 \
  X(cuCtxSetCurrent)                                                           \
  X(cuModuleLoadDataEx)                                                        \
  X(cuModuleUnload)                                                            \
  X(cuModuleGetFunction)                                                       \
  X(cuFuncGetAttribute)                                                        \
  X(cuMemAlloc)                                                                \
  X(cuMemFree)                                                                 \
  X(cuMemsetD8Async)                                                           \
  X(cuMemcpyHtoDAsync)                                                         \
  X(cuMemcpyDtoHAsync)                                                         \
  X(cuStreamCreate)                                                            \
  X(cuStreamDestroy)                                                           \
  X(cuStreamSynchronize)                                                       \
  X(cuStreamBeginCapture)                                                      \
  X(cuStreamEndCapture)                                                        \
  X(cuGraphInstantiate)                                                        \
  X(cuGraphLaunch)                                                             \
  X(cuGraphDestroy)                                                            \
  X(cuGraphExecDestroy)                                                        \
  X(cuLaunchKernel)                                                            \
  X(cuEventCreate)                                                             \
  X(cuEventRecord)                                                             \
  X(cuEventSynchronize)                                                        \
  X(cuEventElapsedTime)                                                        \
  X(cuEventDestroy)

struct Driver {
#define GPUOPT_CU_FIELD(name) decltype(&::name) name = nullptr;
  GPUOPT_CU_FUNCTIONS(GPUOPT_CU_FIELD)
#undef GPUOPT_CU_FIELD
};

/// Opens libcuda once per process.
Status loadDriver(const Driver *&out) {
  static Driver driver;
  static std::string error;
  static bool done = false;
  if (!done) {
    done = true;
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      const char *why = dlerror();
      error = std::string("no NVIDIA driver: cannot load libcuda.so.1 (") +
              (why ? why : "unknown reason") + ")";
    } else {
#define GPUOPT_CU_LOAD(name)                                                   \
  if (error.empty()) {                                                         \
    driver.name =                                                              \
        reinterpret_cast<decltype(&::name)>(dlsym(lib, GPUOPT_CU_STR(name)));  \
    if (!driver.name)                                                          \
      error = std::string("the NVIDIA driver lacks ") + GPUOPT_CU_STR(name) +  \
              " (driver too old for CUDA " GPUOPT_CU_STR(CUDA_VERSION) "?)";   \
  }
      GPUOPT_CU_FUNCTIONS(GPUOPT_CU_LOAD)
#undef GPUOPT_CU_LOAD
    }
  }
  if (!error.empty())
    return Status::error(error);
  out = &driver;
  return Status::ok();
}

Status cuError(const Driver &d, CUresult r, const char *call) {
  const char *name = nullptr, *text = nullptr;
  if (d.cuGetErrorName)
    d.cuGetErrorName(r, &name);
  if (d.cuGetErrorString)
    d.cuGetErrorString(r, &text);
  return Status::error(std::string(call) + " failed: " +
                       (name ? name : "CUDA error " + std::to_string(r)) +
                       (text ? std::string(" (") + text + ")" : ""));
}

} // namespace

#define CU_CHECK(call)                                                         \
  do {                                                                         \
    CUresult cuResult = (call);                                                \
    if (cuResult != CUDA_SUCCESS)                                              \
      return cuError(*d, cuResult, #call);                                     \
  } while (0)

struct CudaModel::Impl {
  const Driver *d = nullptr;
  CUdevice device = 0;
  CUcontext ctx = nullptr;
  CUmodule module = nullptr;
  CUstream stream = nullptr;
  CUdeviceptr arena = 0;
  CUgraphExec graph = nullptr;
  std::vector<CUfunction> functions;
  const CudaArtifact *art = nullptr;
  bool syncEachStep = false;
  /// The Library steps' calls; null when the plan has none.
  std::unique_ptr<CudaLibrarySteps> libs;
  /// A capture of the forward failed: forwards run without a graph.
  bool graphRefused = false;
  /// Per step: the argument values and pointers to them (kernelParams),
  /// or, for a Library step, its index in the plan (CudaLibrarySteps).
  struct Launch {
    CUfunction fn = nullptr;
    unsigned grid[3] = {1, 1, 1}, block[3] = {1, 1, 1};
    std::vector<CUdeviceptr> values;
    std::vector<void *> params;
    bool library = false;
    size_t index = 0;
  };
  std::vector<Launch> init, run;

  ~Impl() {
    if (!d)
      return;
    // Best effort: nothing useful can be done about a failing release.
    // The library handles and workspaces go first, on a live context.
    libs.reset();
    if (graph)
      d->cuGraphExecDestroy(graph);
    if (stream)
      d->cuStreamDestroy(stream);
    if (arena)
      d->cuMemFree(arena);
    if (module)
      d->cuModuleUnload(module);
    if (ctx)
      d->cuDevicePrimaryCtxRelease(device);
  }

  /// Refuses, naming the step, a launch whose block the device would
  /// refuse for its kernel (cuLaunchKernel's "too many resources
  /// requested"). `most` caches, per kernel, the most threads per block a
  /// launch of it may have on this device (its registers, its PTX
  /// `.maxntid`); 0 until asked.
  Status checkBlock(const CudaArtifact &art, const char *plan, size_t i,
                    const CudaStep &s, std::vector<int> &most) {
    int &limit = most[s.kernel];
    if (limit == 0)
      if (CUresult r = d->cuFuncGetAttribute(
              &limit, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
              functions[s.kernel]);
          r != CUDA_SUCCESS)
        return Status::error(describeCudaStep(art, plan, i) + ": " +
                             cuError(*d, r, "cuFuncGetAttribute").message());
    uint64_t threads = uint64_t(s.block[0]) * s.block[1] * s.block[2];
    if (threads <= uint64_t(limit))
      return Status::ok();
    // The limit is the kernel's registers or its own block (PTX .maxntid,
    // which gpuopt-compile sets to the plan's: then the plan and the
    // kernels disagree).
    int regs = 0;
    std::string why = d->cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS,
                                            functions[s.kernel]) == CUDA_SUCCESS
                          ? std::to_string(regs) + " registers per thread, "
                          : "";
    return Status::error(
        describeCudaStep(art, plan, i) + ": launches " +
        std::to_string(threads) + " threads per block, but on this device " +
        "the kernel allows at most " + std::to_string(limit) + " (" + why +
        "or the block it was compiled for): compile the model again, with a "
        "smaller --cuda-block-size if its registers are the limit");
  }

  /// checkBlock for every kernel step of both plans.
  Status checkBlocks(const CudaArtifact &art) {
    std::vector<int> most(functions.size(), 0);
    for (const char *plan : {"init", "run"}) {
      const std::vector<CudaStep> &steps = plan[0] == 'i' ? art.init : art.run;
      for (size_t i = 0; i < steps.size(); ++i)
        if (!steps[i].isLibrary)
          if (Status s = checkBlock(art, plan, i, steps[i], most); !s)
            return s;
    }
    return Status::ok();
  }

  Status prepare(const CudaArtifact &art, const std::vector<CudaStep> &steps,
                 std::vector<Launch> &out) {
    for (size_t i = 0; i < steps.size(); ++i) {
      const CudaStep &s = steps[i];
      Launch l;
      if (s.isLibrary) {
        l.library = true;
        l.index = i;
        out.push_back(std::move(l));
        continue;
      }
      l.fn = functions[s.kernel];
      std::copy(s.grid, s.grid + 3, l.grid);
      std::copy(s.block, s.block + 3, l.block);
      for (unsigned id : s.args)
        l.values.push_back(arena + art.buffers[id].offset);
      out.push_back(std::move(l));
    }
    for (Launch &l : out)
      for (CUdeviceptr &v : l.values)
        l.params.push_back(&v);
    return Status::ok();
  }

  /// "run[3] (kernel ...)" or "run[3] (library ...)".
  std::string stepName(const char *plan, size_t i) const {
    const CudaStep &s = (plan[0] == 'i' ? art->init : art->run)[i];
    return s.isLibrary ? describeLibraryStepName(*art, plan, i)
                       : describeCudaStep(*art, plan, i);
  }

  /// Queues step `i` of `plan`: a kernel launch or the step's library
  /// calls; a failure names the step.
  Status enqueue(Launch &l, const char *plan, size_t i) {
    if (l.library)
      return libs->enqueue(plan, l.index);
    CUresult r = d->cuLaunchKernel(l.fn, l.grid[0], l.grid[1], l.grid[2],
                                   l.block[0], l.block[1], l.block[2], 0,
                                   stream, l.params.data(), nullptr);
    if (r != CUDA_SUCCESS)
      return Status::error(describeCudaStep(*art, plan, i) + ": " +
                           cuError(*d, r, "cuLaunchKernel").message());
    return Status::ok();
  }

  /// Launches the steps of `plan` ("init" or "run"); a failing launch, and
  /// with syncEachStep a fault while it runs, names the step.
  Status launch(std::vector<Launch> &steps, const char *plan) {
    for (size_t i = 0; i < steps.size(); ++i) {
      if (Status s = enqueue(steps[i], plan, i); !s)
        return s;
      if (!syncEachStep)
        continue;
      if (CUresult f = d->cuStreamSynchronize(stream); f != CUDA_SUCCESS)
        return Status::error(
            stepName(plan, i) + ": the " +
            (steps[i].library ? "library call" : "launch") + " faulted (" +
            cuError(*d, f, "cuStreamSynchronize").message() + ")");
    }
    return Status::ok();
  }

  /// Waits for the launches of `plan` ("the load-time steps", ...) on the
  /// stream; a fault names no step unless syncEachStep found it first.
  Status wait(const char *what, size_t launches) {
    CUresult r = d->cuStreamSynchronize(stream);
    if (r == CUDA_SUCCESS)
      return Status::ok();
    return Status::error(
        cuError(*d, r, "cuStreamSynchronize").message() + " after " + what +
        " (" + std::to_string(launches) +
        " launches); gpuopt-cuda-run --sync-each-step or "
        "GPUOPT_CUDA_SYNC_EACH_STEP=1 names the step that faulted");
  }

  Status forward(bool useGraph) {
    if (!useGraph || syncEachStep || graphRefused)
      return launch(run, "run");
    if (!graph) {
      CU_CHECK(
          d->cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
      Status s = launch(run, "run");
      CUgraph g = nullptr;
      CUresult end = d->cuStreamEndCapture(stream, &g);
      if (libs && (!s || end != CUDA_SUCCESS)) {
        // A library call that cannot be captured (it synchronizes or
        // allocates inside): warn once and run forwards without a graph.
        if (g)
          d->cuGraphDestroy(g);
        std::fprintf(
            stderr,
            "gpuopt: warning: the forward could not be captured into "
            "a CUDA graph (%s); running it without a graph\n",
            !s ? s.message().c_str()
               : cuError(*d, end, "cuStreamEndCapture").message().c_str());
        graphRefused = true;
        return launch(run, "run");
      }
      if (!s || end != CUDA_SUCCESS) {
        if (g)
          d->cuGraphDestroy(g);
        return !s ? s : cuError(*d, end, "cuStreamEndCapture");
      }
      CUresult inst = d->cuGraphInstantiate(&graph, g, 0);
      d->cuGraphDestroy(g);
      if (inst != CUDA_SUCCESS)
        return cuError(*d, inst, "cuGraphInstantiate");
    }
    CU_CHECK(d->cuGraphLaunch(graph, stream));
    return Status::ok();
  }
};

CudaModel::~CudaModel() = default;

Status gpuopt::runtime::applyCudaEnvironment(CudaModelOptions &options) {
  const char *sync = std::getenv("GPUOPT_CUDA_SYNC_EACH_STEP");
  if (!sync || !*sync || std::strcmp(sync, "0") == 0)
    return Status::ok();
  if (std::strcmp(sync, "1") != 0)
    return Status::error("GPUOPT_CUDA_SYNC_EACH_STEP must be 0 or 1, got '" +
                         std::string(sync) + "'");
  options.syncEachStep = true;
  return Status::ok();
}

Status CudaModel::create(const std::string &artifactPath,
                         const std::string &weightsPath, bool strict,
                         int deviceIndex, const CudaModelOptions &given,
                         std::unique_ptr<CudaModel> &out) {
  CudaModelOptions options = given;
  if (Status s = applyCudaEnvironment(options); !s)
    return s;
  std::unique_ptr<CudaModel> m(new CudaModel());
  // The plan checks (readCudaArtifact) run before any driver call.
  if (Status s = readCudaArtifact(artifactPath, m->art); !s)
    return s;
  SafetensorsFile weights;
  if (Status s = readSafetensors(weightsPath, weights); !s)
    return s;
  // Bind (and check) the weights before touching the GPU.
  if (Status s = checkCudaWeights(m->art, weights, weightsPath, strict); !s)
    return s;

  m->impl = std::make_unique<Impl>();
  Impl &I = *m->impl;
  I.art = &m->art;
  I.syncEachStep = options.syncEachStep;
  // Library steps: their call plans and the vendor libraries they need,
  // opened (or reported missing) before any driver call.
  if (Status s = CudaLibrarySteps::prepare(m->art, I.libs); !s)
    return Status::error(artifactPath + ": " + s.message());
  if (Status s = loadDriver(I.d); !s)
    return s;
  const Driver *d = I.d;
  CU_CHECK(d->cuInit(0));
  int count = 0;
  CU_CHECK(d->cuDeviceGetCount(&count));
  if (deviceIndex < 0 || deviceIndex >= count)
    return Status::error("no CUDA device " + std::to_string(deviceIndex) +
                         " (the driver reports " + std::to_string(count) + ")");
  CU_CHECK(d->cuDeviceGet(&I.device, deviceIndex));
  char name[256] = {0};
  CU_CHECK(d->cuDeviceGetName(name, sizeof(name) - 1, I.device));
  m->info.name = name;
  CU_CHECK(d->cuDriverGetVersion(&m->info.driverVersion));
  CU_CHECK(d->cuDeviceGetAttribute(&m->info.computeMajor,
                                   CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                                   I.device));
  CU_CHECK(d->cuDeviceGetAttribute(&m->info.computeMinor,
                                   CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                                   I.device));
  CU_CHECK(d->cuDeviceGetAttribute(&m->info.multiprocessors,
                                   CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                                   I.device));
  CU_CHECK(d->cuDevicePrimaryCtxRetain(&I.ctx, I.device));
  CU_CHECK(d->cuCtxSetCurrent(I.ctx));

  const CudaArtifact &art = m->art;
  if (!art.kernels.empty()) {
    int cc = m->info.computeMajor * 10 + m->info.computeMinor;
    const CudaImage *image = selectCudaImage(art, cc);
    if (!image) {
      std::string have;
      for (const CudaImage &i : art.images)
        have += (have.empty() ? "" : ", ") + i.format + " " + i.chip;
      return Status::error(
          artifactPath + ": no kernel image for " + m->info.name + " (sm_" +
          std::to_string(cc) + "); the artifact holds " + have +
          ": recompile with --cuda-arch=sm_" + std::to_string(cc));
    }
    char log[8192] = {0};
    CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER,
                           CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *vals[] = {log, reinterpret_cast<void *>(sizeof(log) - 1)};
    CUresult r =
        d->cuModuleLoadDataEx(&I.module, image->bytes.data(), 2, opts, vals);
    if (r != CUDA_SUCCESS) {
      Status s = cuError(*d, r, "cuModuleLoadDataEx");
      return Status::error(s.message() + " loading the " + image->format +
                           " for " + image->chip + " on " + m->info.name +
                           " (sm_" + std::to_string(m->info.computeMajor) +
                           std::to_string(m->info.computeMinor) + ")" +
                           (log[0] ? std::string(": ") + log : ""));
    }
    for (const CudaKernel &k : art.kernels) {
      CUfunction fn;
      CU_CHECK(d->cuModuleGetFunction(&fn, I.module, k.name.c_str()));
      I.functions.push_back(fn);
    }
    // Before the arena exists: a block the device refuses is a load error.
    if (Status s = I.checkBlocks(art); !s)
      return Status::error(artifactPath + ": " + s.message());
  }
  CU_CHECK(d->cuStreamCreate(&I.stream, CU_STREAM_NON_BLOCKING));
  if (CUresult r =
          d->cuMemAlloc(&I.arena, std::max<uint64_t>(art.arenaBytes, 256));
      r != CUDA_SUCCESS)
    return Status::error(artifactPath + ": cannot allocate its arena of " +
                         std::to_string(art.arenaBytes) + " bytes (" +
                         std::to_string(art.arenaBytes >> 20) + " MiB) on " +
                         m->info.name + ": " +
                         cuError(*d, r, "cuMemAlloc").message());
  // Poison the arena (0xff bytes are NaNs): unwritten outputs show.
  CU_CHECK(d->cuMemsetD8Async(I.arena, 0xff, art.arenaBytes, I.stream));
  for (const CudaBuffer &b : art.buffers)
    if (b.kind == "param")
      CU_CHECK(d->cuMemcpyHtoDAsync(I.arena + b.offset,
                                    weights.tensors[b.name].data.data(),
                                    b.bytes, I.stream));
  if (I.libs) {
    CudaLibraryMemory mem;
    mem.alloc = [d](uint64_t bytes, CUdeviceptr &out) {
      CUresult r = d->cuMemAlloc(&out, bytes);
      return r == CUDA_SUCCESS ? Status::ok() : cuError(*d, r, "cuMemAlloc");
    };
    mem.free = [d](CUdeviceptr p) { d->cuMemFree(p); };
    CudaLibraryOptions libOptions;
    libOptions.heuristics = options.libraryHeuristics;
    // The weights must be in place for the algorithm trials.
    CU_CHECK(d->cuStreamSynchronize(I.stream));
    if (Status s = I.libs->load(I.stream, I.arena, mem, libOptions); !s)
      return Status::error(artifactPath + ": " + s.message());
    if (CUresult r = d->cuStreamSynchronize(I.stream); r != CUDA_SUCCESS)
      return Status::error(
          artifactPath + ": " +
          cuError(*d, r, "cuStreamSynchronize").message() +
          " after the trial call of each Library step at load");
  }
  if (Status s = I.prepare(art, art.init, I.init); !s)
    return s;
  if (Status s = I.prepare(art, art.run, I.run); !s)
    return s;
  if (Status s = I.launch(I.init, "init"); !s)
    return s;
  if (Status s = I.wait("the load-time steps", I.init.size()); !s)
    return Status::error(artifactPath + ": " + s.message());
  out = std::move(m);
  return Status::ok();
}

Status CudaModel::setInputs(const std::vector<const float *> &inputs) {
  const Driver *d = impl->d;
  if (inputs.size() != art.inputs.size())
    return Status::error("expected " + std::to_string(art.inputs.size()) +
                         " inputs, got " + std::to_string(inputs.size()));
  for (size_t i = 0; i < inputs.size(); ++i) {
    const CudaBuffer &b = art.buffers[art.inputs[i]];
    CU_CHECK(d->cuMemcpyHtoDAsync(impl->arena + b.offset, inputs[i], b.bytes,
                                  impl->stream));
  }
  CU_CHECK(d->cuStreamSynchronize(impl->stream));
  return Status::ok();
}

Status CudaModel::forward(bool graph) {
  if (Status s = impl->forward(graph); !s)
    return s;
  return impl->wait("a forward", impl->run.size());
}

Status CudaModel::getOutputs(const std::vector<float *> &outputs) {
  const Driver *d = impl->d;
  if (outputs.size() != art.outputs.size())
    return Status::error("expected " + std::to_string(art.outputs.size()) +
                         " outputs, got " + std::to_string(outputs.size()));
  for (size_t i = 0; i < outputs.size(); ++i) {
    const CudaBuffer &b = art.buffers[art.outputs[i]];
    CU_CHECK(d->cuMemcpyDtoHAsync(outputs[i], impl->arena + b.offset, b.bytes,
                                  impl->stream));
  }
  CU_CHECK(d->cuStreamSynchronize(impl->stream));
  return Status::ok();
}

Status CudaModel::time(int warmup, int runs, bool graph,
                       std::vector<double> &ms) {
  const Driver *d = impl->d;
  for (int i = 0; i < warmup; ++i)
    if (Status s = impl->forward(graph); !s)
      return s;
  CU_CHECK(d->cuStreamSynchronize(impl->stream));
  CUevent start, stop;
  CU_CHECK(d->cuEventCreate(&start, CU_EVENT_DEFAULT));
  CU_CHECK(d->cuEventCreate(&stop, CU_EVENT_DEFAULT));
  Status result = Status::ok();
  for (int i = 0; i < runs && result; ++i) {
    CUresult r = d->cuEventRecord(start, impl->stream);
    if (r == CUDA_SUCCESS) {
      result = impl->forward(graph);
      if (!result)
        break;
      r = d->cuEventRecord(stop, impl->stream);
    }
    if (r == CUDA_SUCCESS)
      r = d->cuEventSynchronize(stop);
    float t = 0;
    if (r == CUDA_SUCCESS)
      r = d->cuEventElapsedTime(&t, start, stop);
    if (r != CUDA_SUCCESS)
      result = cuError(*d, r, "timing a forward with CUDA events");
    ms.push_back(t);
  }
  d->cuEventDestroy(start);
  d->cuEventDestroy(stop);
  return result;
}

Status CudaModel::profileSteps(int passes, std::vector<double> &ms) {
  const Driver *d = impl->d;
  if (passes < 1)
    return Status::error("profiling needs at least one pass");
  // A warm-up forward (module load, caches), then `passes` passes in which
  // every launch runs alone: an event before it, one after it, and a wait
  // for the second before the next launch is queued. Events recorded back
  // to back without the wait would measure the queue (the host's launch
  // gaps land inside the next interval), making the sum ~ the forward.
  if (Status s = impl->forward(false); !s)
    return s;
  CU_CHECK(d->cuStreamSynchronize(impl->stream));
  size_t n = impl->run.size();
  CUevent start = nullptr, stop = nullptr;
  Status result = Status::ok();
  if (d->cuEventCreate(&start, CU_EVENT_DEFAULT) != CUDA_SUCCESS ||
      d->cuEventCreate(&stop, CU_EVENT_DEFAULT) != CUDA_SUCCESS)
    result = Status::error("cuEventCreate failed while profiling");
  std::vector<std::vector<double>> perStep(n);
  for (int pass = 0; pass < passes && result; ++pass) {
    for (size_t i = 0; i < n && result; ++i) {
      Impl::Launch &l = impl->run[i];
      CUresult r = d->cuEventRecord(start, impl->stream);
      if (r == CUDA_SUCCESS)
        if (Status s = impl->enqueue(l, "run", i); !s) {
          result = s;
          break;
        }
      if (r == CUDA_SUCCESS)
        r = d->cuEventRecord(stop, impl->stream);
      if (r == CUDA_SUCCESS)
        r = d->cuEventSynchronize(stop);
      float t = 0;
      if (r == CUDA_SUCCESS)
        r = d->cuEventElapsedTime(&t, start, stop);
      if (r != CUDA_SUCCESS)
        result = Status::error(impl->stepName("run", i) + ": " +
                               cuError(*d, r, "profiling a launch").message());
      perStep[i].push_back(t);
    }
  }
  if (result)
    for (std::vector<double> &times : perStep) {
      // The median of the step's passes.
      std::sort(times.begin(), times.end());
      ms.push_back(times[times.size() / 2]);
    }
  if (start)
    d->cuEventDestroy(start);
  if (stop)
    d->cuEventDestroy(stop);
  return result;
}
