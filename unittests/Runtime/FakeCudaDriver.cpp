//===- FakeCudaDriver.cpp - a libcuda.so.1 without a GPU, for tests -------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// The driver API functions the CUDA runtime (runtime/cuda/CudaModel.cpp)
// calls, implemented on the host, built as `libcuda.so.1` in its own
// directory: with that directory first in LD_LIBRARY_PATH, the runtime's
// dlopen finds it instead of an NVIDIA driver. It runs no kernel (the
// emulator proves what kernels compute); it lets every commit run the path a
// GPU takes through the runtime (module load, function lookup, arena,
// weights, launches, CUDA graphs, events, profiling, errors) and checks what
// a driver checks there:
//
// - device memory is host memory; a copy, memset or kernel argument outside
//   a live allocation is an error (CUDA_ERROR_INVALID_VALUE, or for an
//   argument CUDA_ERROR_ILLEGAL_ADDRESS from the next synchronization on);
// - a module is a PTX text, a cubin (ELF) or a fatbin; a function must be
//   named in it. Only a PTX module (not a fatbin, whose PTX is compressed,
//   nor a cubin) is read further: its `.target` must not be newer than the
//   device, its `.entry` parameters give each launch's argument count, and
//   its `.maxntid`/`.reqntid` the function's largest block;
// - a launch's block must fit the function (cuFuncGetAttribute's
//   CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK) and its dimensions the device;
// - launches recorded while a stream captures go into the graph, which
//   cuGraphLaunch replays.
//
// Events measure a fake clock that advances by one microsecond per launch,
// so a forward of N launches times N / 1000 ms.
//
// Environment (GPUOPT_FAKE_CUDA_*): SM (compute capability, default 90),
// DEVICES (default 1), MEMORY (bytes that may be allocated, default 8 GiB),
// MAX_THREADS (threads per block any function allows, default 1024),
// FAIL_LAUNCH=K (the K-th cuLaunchKernel call, from 0, captured or not,
// fails with CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES), FAULT_LAUNCH=K (the K-th
// launch run, from 0, graph replays included, faults:
// CUDA_ERROR_ILLEGAL_ADDRESS from the next synchronization on, and from
// every launch and copy after that, sticky as on a GPU), LOG (a file: one line
// per module load, launch, with each argument as `aN+OFFSET` (the N-th
// cuMemAlloc's allocation and the offset into it), and graph event).
//
//===----------------------------------------------------------------------===//

#include <cuda.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace {

long envLong(const char *name, long fallback) {
  const char *v = std::getenv(name);
  if (!v || !*v)
    return fallback;
  char *end = nullptr;
  long r = std::strtol(v, &end, 10);
  return end && *end == 0 ? r : fallback;
}

void logLine(const std::string &line) {
  const char *path = std::getenv("GPUOPT_FAKE_CUDA_LOG");
  if (!path || !*path)
    return;
  if (FILE *f = std::fopen(path, "a")) {
    std::fprintf(f, "%s\n", line.c_str());
    std::fclose(f);
  }
}

/// One run of a kernel.
struct Launch {
  CUfunction fn;
  unsigned grid[3], block[3];
  std::vector<CUdeviceptr> args;
};

struct State {
  bool initialized = false;
  std::map<uintptr_t, size_t> allocations;
  /// Per live allocation, its number: the order of the cuMemAlloc calls.
  std::map<uintptr_t, int> ids;
  int nextId = 0;
  size_t allocated = 0;
  /// Launches run (graph replays included) and cuLaunchKernel calls.
  long launches = 0, calls = 0;
  /// A kernel's fault: pending (the host has not waited since) until a
  /// synchronization reports it, then sticky, as on a GPU, where it is the
  /// context's: every later call returns it.
  CUresult pending = CUDA_SUCCESS, fault = CUDA_SUCCESS;
  double clockUs = 0;
};

State &state() {
  static State s;
  return s;
}

int deviceSm() { return int(envLong("GPUOPT_FAKE_CUDA_SM", 90)); }

/// Whether [p, p + bytes) lies in one live allocation.
bool inAllocation(CUdeviceptr p, size_t bytes) {
  auto &allocs = state().allocations;
  auto it = allocs.upper_bound(uintptr_t(p));
  if (it == allocs.begin())
    return false;
  --it;
  return uintptr_t(p) >= it->first &&
         uintptr_t(p) - it->first + bytes <= it->second;
}

} // namespace

struct CUctx_st {};
struct CUfunc_st {
  std::string name;
  /// -1: unknown (no PTX to read it from).
  int params = -1;
  int maxThreads = 1024;
};
struct CUmod_st {
  std::vector<std::unique_ptr<CUfunc_st>> functions;
  std::string bytes;
};
struct CUstream_st {
  bool capturing = false;
  std::vector<Launch> captured;
};
struct CUevent_st {
  double us = -1;
};
struct CUgraph_st {
  std::vector<Launch> launches;
};
struct CUgraphExec_st {
  std::vector<Launch> launches;
};

namespace {

CUctx_st theContext;

/// A synchronization: a pending fault becomes the context's.
CUresult reportFault() {
  State &s = state();
  if (s.pending != CUDA_SUCCESS)
    s.fault = s.pending;
  return s.fault;
}

/// Runs (logs, checks the arguments of, counts) one launch.
CUresult execute(const Launch &l, const char *how) {
  State &s = state();
  long index = s.launches++;
  s.clockUs += 1;
  std::string args;
  for (CUdeviceptr a : l.args) {
    auto it = s.allocations.upper_bound(uintptr_t(a));
    if (it == s.allocations.begin() || !inAllocation(a, 1)) {
      // Every argument of gpuopt's kernels is a buffer address (bare
      // pointers): one outside every allocation faults.
      s.pending = CUDA_ERROR_ILLEGAL_ADDRESS;
      args += " ?";
      continue;
    }
    --it;
    args += " a" + std::to_string(s.ids[it->first]) + "+" +
            std::to_string(uintptr_t(a) - it->first);
  }
  logLine(std::string("launch ") + l.fn->name + " grid " +
          std::to_string(l.grid[0]) + "," + std::to_string(l.grid[1]) + "," +
          std::to_string(l.grid[2]) + " block " + std::to_string(l.block[0]) +
          "," + std::to_string(l.block[1]) + "," + std::to_string(l.block[2]) +
          " args " + std::to_string(l.args.size()) + args + how);
  if (index == envLong("GPUOPT_FAKE_CUDA_FAULT_LAUNCH", -1))
    s.pending = CUDA_ERROR_ILLEGAL_ADDRESS;
  return CUDA_SUCCESS;
}

/// The kernels of a PTX module (its `.entry` directives): name, parameter
/// count, largest block.
void readPtx(CUmod_st &m) {
  const std::string &b = m.bytes;
  for (size_t at = b.find(".entry "); at != std::string::npos;
       at = b.find(".entry ", at + 1)) {
    size_t nameStart = at + 7;
    size_t nameEnd = b.find_first_of("( \n", nameStart);
    if (nameEnd == std::string::npos)
      break;
    auto fn = std::make_unique<CUfunc_st>();
    fn->name = b.substr(nameStart, nameEnd - nameStart);
    size_t close = b.find(')', nameEnd);
    size_t body = b.find('{', nameEnd);
    if (close == std::string::npos || body == std::string::npos)
      break;
    fn->params = 0;
    for (size_t p = b.find(".param", nameEnd); p < close;
         p = b.find(".param", p + 1))
      ++fn->params;
    for (const char *directive : {".maxntid ", ".reqntid "}) {
      size_t d = b.find(directive, close);
      if (d < body) {
        unsigned x = 1, y = 1, z = 1;
        std::sscanf(b.c_str() + d + std::strlen(directive), "%u, %u, %u", &x,
                    &y, &z);
        fn->maxThreads = int(x * y * z);
      }
    }
    m.functions.push_back(std::move(fn));
  }
}

} // namespace

extern "C" {

CUresult cuInit(unsigned int flags) {
  if (flags != 0)
    return CUDA_ERROR_INVALID_VALUE;
  state().initialized = true;
  return CUDA_SUCCESS;
}

CUresult cuDriverGetVersion(int *version) {
  *version = CUDA_VERSION;
  return CUDA_SUCCESS;
}

CUresult cuGetErrorName(CUresult error, const char **str) {
  switch (error) {
#define GPUOPT_FAKE_NAME(e)                                                    \
  case e:                                                                      \
    *str = #e;                                                                 \
    return CUDA_SUCCESS;
    GPUOPT_FAKE_NAME(CUDA_SUCCESS)
    GPUOPT_FAKE_NAME(CUDA_ERROR_INVALID_VALUE)
    GPUOPT_FAKE_NAME(CUDA_ERROR_OUT_OF_MEMORY)
    GPUOPT_FAKE_NAME(CUDA_ERROR_NOT_INITIALIZED)
    GPUOPT_FAKE_NAME(CUDA_ERROR_NO_DEVICE)
    GPUOPT_FAKE_NAME(CUDA_ERROR_INVALID_DEVICE)
    GPUOPT_FAKE_NAME(CUDA_ERROR_INVALID_IMAGE)
    GPUOPT_FAKE_NAME(CUDA_ERROR_NO_BINARY_FOR_GPU)
    GPUOPT_FAKE_NAME(CUDA_ERROR_INVALID_HANDLE)
    GPUOPT_FAKE_NAME(CUDA_ERROR_NOT_FOUND)
    GPUOPT_FAKE_NAME(CUDA_ERROR_ILLEGAL_ADDRESS)
    GPUOPT_FAKE_NAME(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES)
    GPUOPT_FAKE_NAME(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED)
#undef GPUOPT_FAKE_NAME
  default:
    *str = nullptr;
    return CUDA_ERROR_INVALID_VALUE;
  }
}

CUresult cuGetErrorString(CUresult error, const char **str) {
  const char *name = nullptr;
  if (cuGetErrorName(error, &name) != CUDA_SUCCESS)
    return CUDA_ERROR_INVALID_VALUE;
  *str = error == CUDA_ERROR_ILLEGAL_ADDRESS
             ? "an illegal memory access was encountered (fake driver)"
             : "reported by gpuopt's fake driver";
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetCount(int *count) {
  if (!state().initialized)
    return CUDA_ERROR_NOT_INITIALIZED;
  *count = int(envLong("GPUOPT_FAKE_CUDA_DEVICES", 1));
  return CUDA_SUCCESS;
}

CUresult cuDeviceGet(CUdevice *device, int ordinal) {
  int count = 0;
  if (CUresult r = cuDeviceGetCount(&count); r != CUDA_SUCCESS)
    return r;
  if (ordinal < 0 || ordinal >= count)
    return CUDA_ERROR_INVALID_DEVICE;
  *device = ordinal;
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetName(char *name, int len, CUdevice) {
  std::snprintf(name, size_t(len), "gpuopt fake driver (sm_%d)", deviceSm());
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetAttribute(int *value, CUdevice_attribute attribute,
                              CUdevice) {
  switch (attribute) {
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
    *value = deviceSm() / 10;
    return CUDA_SUCCESS;
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
    *value = deviceSm() % 10;
    return CUDA_SUCCESS;
  case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
    *value = 132;
    return CUDA_SUCCESS;
  case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
    *value = 1024;
    return CUDA_SUCCESS;
  case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK:
    *value = 48 * 1024;
    return CUDA_SUCCESS;
  default:
    return CUDA_ERROR_INVALID_VALUE;
  }
}

CUresult cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice) {
  *ctx = &theContext;
  return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRelease(CUdevice) { return CUDA_SUCCESS; }

CUresult cuCtxSetCurrent(CUcontext ctx) {
  return ctx == &theContext ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

CUresult cuModuleLoadDataEx(CUmodule *module, const void *image,
                            unsigned int numOptions, CUjit_option *options,
                            void **optionValues) {
  const auto *bytes = static_cast<const unsigned char *>(image);
  char *log = nullptr;
  size_t logSize = 0;
  for (unsigned i = 0; i < numOptions; ++i) {
    if (options[i] == CU_JIT_ERROR_LOG_BUFFER)
      log = static_cast<char *>(optionValues[i]);
    if (options[i] == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES)
      logSize = reinterpret_cast<uintptr_t>(optionValues[i]);
  }
  auto m = std::make_unique<CUmod_st>();
  uint64_t size = 0;
  const char *format = nullptr;
  if (std::memcmp(bytes, "\x50\xed\x55\xba", 4) == 0) {
    // A fatbin: a 2-byte header size at 6, the 8-byte size after it at 8.
    uint16_t header;
    std::memcpy(&header, bytes + 6, 2);
    std::memcpy(&size, bytes + 8, 8);
    size += header;
    format = "fatbin";
  } else if (std::memcmp(bytes,
                         "\x7f"
                         "ELF",
                         4) == 0) {
    // A cubin: the section headers end it.
    uint64_t shoff;
    uint16_t shentsize, shnum;
    std::memcpy(&shoff, bytes + 0x28, 8);
    std::memcpy(&shentsize, bytes + 0x3a, 2);
    std::memcpy(&shnum, bytes + 0x3c, 2);
    size = shoff + uint64_t(shentsize) * shnum;
    format = "cubin";
  } else {
    // PTX: a NUL-terminated text.
    size = std::strlen(static_cast<const char *>(image));
    format = "ptx";
    const char *target =
        std::strstr(static_cast<const char *>(image), ".target sm_");
    int sm = target ? std::atoi(target + 11) : 0;
    if (!target || sm > deviceSm()) {
      if (log && logSize)
        std::snprintf(log, logSize,
                      "fake driver: the PTX targets sm_%d, the device is "
                      "sm_%d",
                      sm, deviceSm());
      return target ? CUDA_ERROR_NO_BINARY_FOR_GPU : CUDA_ERROR_INVALID_IMAGE;
    }
  }
  m->bytes.assign(reinterpret_cast<const char *>(bytes), size);
  readPtx(*m);
  logLine(std::string("load ") + format + " " + std::to_string(size) +
          " bytes, " + std::to_string(m->functions.size()) + " PTX entries");
  *module = m.release();
  return CUDA_SUCCESS;
}

CUresult cuModuleUnload(CUmodule module) {
  delete module;
  return CUDA_SUCCESS;
}

CUresult cuModuleGetFunction(CUfunction *fn, CUmodule module,
                             const char *name) {
  for (auto &f : module->functions)
    if (f->name == name) {
      *fn = f.get();
      return CUDA_SUCCESS;
    }
  // A cubin, or a fatbin (its PTX compressed): the name must be a string
  // of its symbol table, NUL before and after.
  if (module->bytes.find('\0' + std::string(name) + '\0') == std::string::npos)
    return CUDA_ERROR_NOT_FOUND;
  auto f = std::make_unique<CUfunc_st>();
  f->name = name;
  *fn = f.get();
  module->functions.push_back(std::move(f));
  return CUDA_SUCCESS;
}

CUresult cuFuncGetAttribute(int *value, CUfunction_attribute attribute,
                            CUfunction fn) {
  switch (attribute) {
  case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
    *value = std::min<int>(fn->maxThreads,
                           int(envLong("GPUOPT_FAKE_CUDA_MAX_THREADS", 1024)));
    return CUDA_SUCCESS;
  case CU_FUNC_ATTRIBUTE_NUM_REGS:
    *value = 32;
    return CUDA_SUCCESS;
  case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES:
    *value = 0;
    return CUDA_SUCCESS;
  default:
    return CUDA_ERROR_INVALID_VALUE;
  }
}

CUresult cuMemAlloc(CUdeviceptr *p, size_t bytes) {
  State &s = state();
  if (bytes == 0)
    return CUDA_ERROR_INVALID_VALUE;
  if (s.allocated + bytes >
      size_t(envLong("GPUOPT_FAKE_CUDA_MEMORY", 8L << 30)))
    return CUDA_ERROR_OUT_OF_MEMORY;
  void *host = std::malloc(bytes);
  if (!host)
    return CUDA_ERROR_OUT_OF_MEMORY;
  s.allocations[uintptr_t(host)] = bytes;
  s.ids[uintptr_t(host)] = s.nextId++;
  s.allocated += bytes;
  *p = CUdeviceptr(uintptr_t(host));
  return CUDA_SUCCESS;
}

CUresult cuMemFree(CUdeviceptr p) {
  State &s = state();
  auto it = s.allocations.find(uintptr_t(p));
  if (it == s.allocations.end())
    return CUDA_ERROR_INVALID_VALUE;
  s.allocated -= it->second;
  s.ids.erase(it->first);
  std::free(reinterpret_cast<void *>(uintptr_t(p)));
  s.allocations.erase(it);
  return CUDA_SUCCESS;
}

CUresult cuMemsetD8Async(CUdeviceptr p, unsigned char value, size_t n,
                         CUstream) {
  if (state().fault != CUDA_SUCCESS)
    return state().fault;
  if (!inAllocation(p, n))
    return CUDA_ERROR_INVALID_VALUE;
  std::memset(reinterpret_cast<void *>(uintptr_t(p)), value, n);
  return CUDA_SUCCESS;
}

CUresult cuMemcpyHtoDAsync(CUdeviceptr dst, const void *src, size_t n,
                           CUstream) {
  if (state().fault != CUDA_SUCCESS)
    return state().fault;
  if (!inAllocation(dst, n))
    return CUDA_ERROR_INVALID_VALUE;
  std::memcpy(reinterpret_cast<void *>(uintptr_t(dst)), src, n);
  return CUDA_SUCCESS;
}

CUresult cuMemcpyDtoHAsync(void *dst, CUdeviceptr src, size_t n, CUstream) {
  if (state().fault != CUDA_SUCCESS)
    return state().fault;
  if (!inAllocation(src, n))
    return CUDA_ERROR_INVALID_VALUE;
  std::memcpy(dst, reinterpret_cast<const void *>(uintptr_t(src)), n);
  return CUDA_SUCCESS;
}

CUresult cuStreamCreate(CUstream *stream, unsigned int) {
  *stream = new CUstream_st();
  return CUDA_SUCCESS;
}

CUresult cuStreamDestroy(CUstream stream) {
  delete stream;
  return CUDA_SUCCESS;
}

CUresult cuStreamSynchronize(CUstream stream) {
  if (stream && stream->capturing)
    return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
  return reportFault();
}

CUresult cuStreamBeginCapture(CUstream stream, CUstreamCaptureMode) {
  if (!stream || stream->capturing)
    return CUDA_ERROR_INVALID_VALUE;
  stream->capturing = true;
  stream->captured.clear();
  logLine("capture begin");
  return CUDA_SUCCESS;
}

CUresult cuStreamEndCapture(CUstream stream, CUgraph *graph) {
  if (!stream || !stream->capturing)
    return CUDA_ERROR_INVALID_VALUE;
  stream->capturing = false;
  auto g = new CUgraph_st();
  g->launches = std::move(stream->captured);
  logLine("capture end: " + std::to_string(g->launches.size()) + " launches");
  *graph = g;
  return CUDA_SUCCESS;
}

CUresult cuGraphInstantiate(CUgraphExec *exec, CUgraph graph,
                            unsigned long long) {
  *exec = new CUgraphExec_st{graph->launches};
  return CUDA_SUCCESS;
}

CUresult cuGraphLaunch(CUgraphExec exec, CUstream stream) {
  if (stream && stream->capturing)
    return CUDA_ERROR_INVALID_VALUE;
  if (state().fault != CUDA_SUCCESS)
    return state().fault;
  for (const Launch &l : exec->launches)
    execute(l, " (graph)");
  return CUDA_SUCCESS;
}

CUresult cuGraphDestroy(CUgraph graph) {
  delete graph;
  return CUDA_SUCCESS;
}

CUresult cuGraphExecDestroy(CUgraphExec exec) {
  delete exec;
  return CUDA_SUCCESS;
}

CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX,
                        unsigned int gridDimY, unsigned int gridDimZ,
                        unsigned int blockDimX, unsigned int blockDimY,
                        unsigned int blockDimZ, unsigned int sharedMemBytes,
                        CUstream stream, void **kernelParams, void **extra) {
  if (!f || extra)
    return CUDA_ERROR_INVALID_VALUE;
  if (state().fault != CUDA_SUCCESS)
    return state().fault;
  uint64_t threads = uint64_t(blockDimX) * blockDimY * blockDimZ;
  if (gridDimX == 0 || gridDimY == 0 || gridDimZ == 0 || threads == 0 ||
      gridDimX > 0x7fffffffu || gridDimY > 65535 || gridDimZ > 65535 ||
      blockDimX > 1024 || blockDimY > 1024 || blockDimZ > 64 ||
      sharedMemBytes > 48 * 1024)
    return CUDA_ERROR_INVALID_VALUE;
  int maxThreads = 0;
  cuFuncGetAttribute(&maxThreads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, f);
  if (threads > uint64_t(maxThreads))
    return f->maxThreads < 1024 ? CUDA_ERROR_INVALID_VALUE
                                : CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;
  if (state().calls++ == envLong("GPUOPT_FAKE_CUDA_FAIL_LAUNCH", -1))
    return CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;
  Launch l{
      f, {gridDimX, gridDimY, gridDimZ}, {blockDimX, blockDimY, blockDimZ}, {}};
  if (f->params >= 0) {
    if (f->params > 0 && !kernelParams)
      return CUDA_ERROR_INVALID_VALUE;
    for (int i = 0; i < f->params; ++i)
      l.args.push_back(*static_cast<CUdeviceptr *>(kernelParams[i]));
  }
  if (stream && stream->capturing) {
    stream->captured.push_back(std::move(l));
    return CUDA_SUCCESS;
  }
  return execute(l, "");
}

CUresult cuEventCreate(CUevent *event, unsigned int) {
  *event = new CUevent_st();
  return CUDA_SUCCESS;
}

CUresult cuEventRecord(CUevent event, CUstream stream) {
  // A real driver records it into the graph; the runtime never does.
  if (stream && stream->capturing)
    return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
  event->us = state().clockUs;
  return CUDA_SUCCESS;
}

CUresult cuEventSynchronize(CUevent event) {
  if (event->us < 0)
    return CUDA_ERROR_INVALID_HANDLE;
  return reportFault();
}

CUresult cuEventElapsedTime(float *ms, CUevent start, CUevent stop) {
  if (start->us < 0 || stop->us < 0)
    return CUDA_ERROR_INVALID_HANDLE;
  *ms = float((stop->us - start->us) / 1000.0);
  return CUDA_SUCCESS;
}

CUresult cuEventDestroy(CUevent event) {
  delete event;
  return CUDA_SUCCESS;
}

} // extern "C"
