//===- KernelBench.cpp - Time the CPU kernels and the FMA peak from Python ===//
//
// Part of the gpuopt project.
//
// A small C API over the `_mlir_ciface_gpuopt_cpu_*` kernels for
// `python -m gpuopt.kernelbench` (loaded with ctypes): each entry builds the
// memref descriptors of dense row-major buffers, calls the kernel `iters`
// times and returns the elapsed seconds, so the per-call overhead of ctypes
// stays out of the measurement. Also the machine's FMA peak per ISA, measured
// with a loop of independent multiply-adds on `threads` threads.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Runtime/CpuKernels.h"
#include "gpuopt/Runtime/ModelAbi.h"
#include "gpuopt/Runtime/ThreadPool.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

using namespace gpuopt::runtime;

namespace {

template <typename Fn> double timeCalls(int64_t iters, Fn &&fn) {
  auto start = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < iters; ++i)
    fn();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

//===----------------------------------------------------------------------===//
// FMA peak: NACC independent vector accumulators, acc = acc * m + a.
//===----------------------------------------------------------------------===//

typedef float V4 __attribute__((vector_size(16)));
typedef float V8 __attribute__((vector_size(32)));
typedef float V16 __attribute__((vector_size(64)));

// The loop is the same for every ISA; the target attribute of the caller
// decides the instructions (vfmadd on zmm / ymm, mulps + addps on xmm for
// the baseline). acc converges to a / (1 - m) = 1: no overflow, no
// denormals. Without -ffast-math the compiler may not reassociate the chains.
template <typename V, int NACC>
__attribute__((always_inline)) inline float fmaBody(int64_t iters) {
  V acc[NACC];
#pragma GCC unroll 32
  for (int i = 0; i < NACC; ++i)
    acc[i] = V{} + (0.5f + 0.01f * i);
  V m = V{} + 0.999999f, a = V{} + 1e-6f;
  for (int64_t it = 0; it < iters; ++it) {
#pragma GCC unroll 32
    for (int i = 0; i < NACC; ++i)
      acc[i] = acc[i] * m + a;
  }
  float sum = 0;
#pragma GCC unroll 32
  for (int i = 0; i < NACC; ++i)
    for (int l = 0; l < int(sizeof(V) / 4); ++l)
      sum += acc[i][l];
  return sum;
}

constexpr int kAccAvx512 = 24, kAccAvx2 = 12, kAccBase = 8;

__attribute__((target("avx512f,fma"), noinline)) float
fmaLoopAvx512(int64_t iters) {
  return fmaBody<V16, kAccAvx512>(iters);
}
__attribute__((target("avx2,fma"), noinline)) float fmaLoopAvx2(int64_t iters) {
  return fmaBody<V8, kAccAvx2>(iters);
}
__attribute__((noinline)) float fmaLoopBase(int64_t iters) {
  return fmaBody<V4, kAccBase>(iters);
}

struct FmaLoop {
  float (*fn)(int64_t);
  double flopsPerIter; // 2 per lane per accumulator.
};

/// The loop of `isa`, or a null fn when unknown or not on this CPU (the
/// features of each kernel path: cpuIsaMissingFeature).
FmaLoop fmaLoop(const char *isa) {
  auto runs = [](CpuIsa i) { return cpuIsaMissingFeature(i) == nullptr; };
  if (!std::strcmp(isa, cpuIsaName(CpuIsa::Avx512)))
    return {runs(CpuIsa::Avx512) ? fmaLoopAvx512 : nullptr,
            2.0 * 16 * kAccAvx512};
  if (!std::strcmp(isa, cpuIsaName(CpuIsa::Avx2)))
    return {runs(CpuIsa::Avx2) ? fmaLoopAvx2 : nullptr, 2.0 * 8 * kAccAvx2};
  if (!std::strcmp(isa, cpuIsaName(CpuIsa::Generic)))
    return {fmaLoopBase, 2.0 * 4 * kAccBase};
  return {nullptr, 0};
}

/// Seconds for `threads` threads to run `iters` iterations each (started
/// together; the wall time until the last finishes).
double timeFmaThreads(const FmaLoop &loop, int threads, int64_t iters) {
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> pool;
  std::vector<float> sink(threads);
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      ready.fetch_add(1);
      while (!go.load(std::memory_order_acquire))
        std::this_thread::yield();
      sink[t] = loop.fn(iters);
    });
  while (ready.load() < threads)
    std::this_thread::yield();
  auto start = std::chrono::steady_clock::now();
  go.store(true, std::memory_order_release);
  for (std::thread &th : pool)
    th.join();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

} // namespace

extern "C" {

/// Sets the kernels' thread count (the pool of ThreadPool.h).
void gpuopt_kb_set_num_threads(int threads) { setNumThreads(threads); }
int gpuopt_kb_num_threads() { return getNumThreads(); }

/// The ISA the kernels report dispatching to, or null when they do not say.
const char *gpuopt_kb_kernel_isa() { return gpuopt_cpu_kernel_isa(); }

/// Measured multiply-add peak of `isa` ("avx512", "avx2", "generic") on
/// `threads` threads in GFLOP/s: the best of `reps` runs of about `seconds`
/// each. -1 when the CPU cannot run `isa` (or the name is unknown).
double gpuopt_kb_fma_peak(const char *isa, int threads, double seconds,
                          int reps) {
  FmaLoop loop = fmaLoop(isa);
  if (!loop.fn || threads < 1)
    return -1;
  // Calibrate the iteration count on one thread.
  int64_t iters = 1 << 16;
  double t = 0;
  while ((t = timeFmaThreads(loop, 1, iters)) < 0.02)
    iters *= 4;
  iters = std::max<int64_t>(1, static_cast<int64_t>(iters * seconds / t));
  double best = 0;
  for (int r = 0; r < std::max(1, reps); ++r) {
    double s = timeFmaThreads(loop, threads, iters);
    best = std::max(best, loop.flopsPerIter * iters * threads / s / 1e9);
  }
  return best;
}

/// The kernels' code of the seg activation `name` (CpuKernelAbi.h), -1 for
/// an unknown name.
int64_t gpuopt_kb_activation_code(const char *name) {
  return cpuActivationCode(name).value_or(-1);
}

/// gpuopt_cpu_conv2d on dense NCHW buffers: `in` [n, c, h, w], `w` [oc, cg,
/// kh, kw], `bias` [oc] (or null), `residual` [n, oc, oh, ow] (or null),
/// `offH`/`offW` per-channel shifts (nOff of each, 0 for none). Returns the
/// seconds `iters` calls took.
double gpuopt_kb_conv2d(float *out, float *in, float *w, float *bias,
                        float *residual, int64_t *offH, int64_t *offW,
                        int64_t nOffH, int64_t nOffW, int64_t n, int64_t c,
                        int64_t h, int64_t wd, int64_t oc, int64_t cg,
                        int64_t kh, int64_t kw, int64_t oh, int64_t ow,
                        int64_t strideH, int64_t strideW, int64_t padH,
                        int64_t padW, int64_t dilH, int64_t dilW,
                        int64_t groups, int64_t zeroMode, int64_t activation,
                        int64_t iters) {
  static float noBias = 0;
  static int64_t noOff = 0;
  MemRef4F outD = denseMemRef(out, {n, oc, oh, ow});
  MemRef4F inD = denseMemRef(in, {n, c, h, wd});
  MemRef4F wD = denseMemRef(w, {oc, cg, kh, kw});
  MemRef1F biasD = denseMemRef(bias ? bias : &noBias, {bias ? oc : 0});
  MemRef4F resD = residual ? denseMemRef(residual, {n, oc, oh, ow}) : inD;
  MemRef1I offHD = denseMemRef(nOffH ? offH : &noOff, {nOffH});
  MemRef1I offWD = denseMemRef(nOffW ? offW : &noOff, {nOffW});
  MemRef1I offTD = denseMemRef(&noOff, {0}); // No frame shift.
  int64_t flags = (bias ? kConvHasBias : 0) |
                  (residual ? kConvHasResidual : 0) |
                  (zeroMode ? kConvZeroMode : 0);
  return timeCalls(iters, [&] {
    _mlir_ciface_gpuopt_cpu_conv2d(&outD, &inD, &wD, &biasD, &resD, &offHD,
                                   &offWD, &offTD, strideH, strideW, padH, padW,
                                   dilH, dilW, groups, /*frames=*/0, flags,
                                   activation);
  });
}

/// gpuopt_cpu_conv_transpose2d: `in` [n, c, h, w], `w` [c, oc, kh, kw]
/// (kernel == stride, no padding), `bias` [oc] or null.
double gpuopt_kb_conv_transpose2d(float *out, float *in, float *w, float *bias,
                                  int64_t n, int64_t c, int64_t h, int64_t wd,
                                  int64_t oc, int64_t kh, int64_t kw,
                                  int64_t oh, int64_t ow, int64_t iters) {
  static float noBias = 0;
  MemRef4F outD = denseMemRef(out, {n, oc, oh, ow});
  MemRef4F inD = denseMemRef(in, {n, c, h, wd});
  MemRef4F wD = denseMemRef(w, {c, oc, kh, kw});
  MemRef1F biasD = denseMemRef(bias ? bias : &noBias, {bias ? oc : 0});
  return timeCalls(iters, [&] {
    _mlir_ciface_gpuopt_cpu_conv_transpose2d(&outD, &inD, &wD, &biasD,
                                             bias ? 1 : 0);
  });
}

/// gpuopt_cpu_linear: `in` [m, k], `w` [nOut, k], `bias` [nOut] or null.
double gpuopt_kb_linear(float *out, float *in, float *w, float *bias, int64_t m,
                        int64_t k, int64_t nOut, int64_t iters) {
  static float noBias = 0;
  MemRef2F outD = denseMemRef(out, {m, nOut});
  MemRef2F inD = denseMemRef(in, {m, k});
  MemRef2F wD = denseMemRef(w, {nOut, k});
  MemRef1F biasD = denseMemRef(bias ? bias : &noBias, {bias ? nOut : 0});
  return timeCalls(iters, [&] {
    _mlir_ciface_gpuopt_cpu_linear(&outD, &inD, &wD, &biasD, bias ? 1 : 0);
  });
}

} // extern "C"
