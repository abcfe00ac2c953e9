//===- CpuKernels.cpp - Kernels called by CPU-compiled gpuopt code --------===//
//
// Convolutions and linear layers as one GEMM core:
//
//   C(i, j) = sum_k A(i, k) * B(k, j)
//
// A is read in place (any row/column stride): conv weights [OC, C*KH*KW],
// transposed-conv weights, or the rows of a linear layer's input. B is given
// row by row: row k starts at b + bRowOffset[k] and is contiguous in j. For a
// stride-1 convolution the rows of B are the channels of a zero-padded copy
// of the input shifted by (kh*dilation, kw*dilation): the output is computed
// on the padded grid (oh, ow') with ow' < W + 2*pad and the columns past the
// real output width are dropped when stored. So there is no im2col: the only
// data movement is the padded copy, and that copy is where the per-channel
// (dh, dw) shift of seg.fused_conv2d is applied — a roll costs nothing but a
// different source row in a copy that is made anyway (the wrap point is
// split out: at most two memcpy's per row, no `mod` in any inner loop).
//
// The kernels (CpuKernelsIsa.inc) are compiled once per instruction set —
// AVX-512 (12x32 micro-tile in zmm), AVX2+FMA (6x16 in ymm), baseline x86-64
// SSE2 (6x8 in xmm) — each with a micro-tile that fits its register file.
// One is chosen at the first call: GPUOPT_CPU_ISA when set (refused with a
// message when this CPU cannot run it), else the best the CPU has. Tiles are
// spread over the pool of ThreadPool.h. Epilogues (bias, residual,
// activation) are applied while a tile is stored.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Runtime/CpuKernels.h"
#include "gpuopt/Runtime/Allocator.h"
#include "gpuopt/Runtime/ModelAbi.h"
#include "gpuopt/Runtime/ThreadPool.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace gpuopt::runtime {
namespace {

// Activation codes shared with the lowering (SegToCpuKernels.cpp).
enum Activation : int64_t { kNone = 0, kRelu = 1, kGelu = 2, kGeluTanh = 3 };
// Flag bits of gpuopt_cpu_conv2d.
enum ConvFlags : int64_t { kHasBias = 1, kHasResidual = 2, kZeroMode = 4 };

//===----------------------------------------------------------------------===//
// Micro-kernel (one template; instantiated per target in CpuKernelsIsa.inc)
//===----------------------------------------------------------------------===//

using MicroKernelFn = void (*)(int64_t k, const float *a, const float *b,
                               const int64_t *bOff, float *tile);
template <int MaxMR> struct MicroKernelTable { MicroKernelFn fns[MaxMR + 1]; };

/// tile[i][j] = sum_k a[k * MR + i] * b[bOff[k] + j] for an MR x (NV * lanes
/// of V) tile; `a` is the packed panel of the tile's rows (runGemm). MR * NV
/// accumulators in registers; per k, NV vectors of B are loaded and MR
/// consecutive floats of A broadcast (one pointer: no address registers to
/// spill). Inlined into each target's micro-kernel (a callee without target
/// attributes may be), so it is compiled for that target's registers.
template <typename V, int MR, int NV>
__attribute__((always_inline)) inline void
microKernelBody(int64_t kSize, const float *a, const float *b,
                const int64_t *bOff, float *tile) {
  constexpr int lanes = sizeof(V) / sizeof(float);
  constexpr int kVectorsPerLine = sizeof(V) >= 64 ? 1 : 64 / sizeof(V);
  V acc[MR][NV];
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v)
      acc[i][v] = V{};
  for (int64_t k = 0; k < kSize; ++k, a += MR) {
    const float *row = b + bOff[k];
    // The next micro-tile column of the same task reads this row kNR
    // floats on: fetch it now (the k rows are up to C*KH*KW streams, more
    // than the hardware prefetchers follow).
#pragma GCC unroll 4
    for (int v = 0; v < NV; v += kVectorsPerLine)
      __builtin_prefetch(row + (NV + v) * lanes);
    V bv[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v)
      std::memcpy(&bv[v], row + v * lanes, sizeof(V));
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) {
      V av = V{} + a[i];
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v)
        acc[i][v] += av * bv[v];
    }
  }
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v)
      std::memcpy(tile + (i * NV + v) * lanes, &acc[i][v], sizeof(V));
}

//===----------------------------------------------------------------------===//
// Dense views of descriptors
//===----------------------------------------------------------------------===//

template <int Rank> bool isDense(const MemRefDesc<float, Rank> &d) {
  int64_t expect = 1;
  for (int r = Rank - 1; r >= 0; --r) {
    if (d.sizes[r] != 1 && d.strides[r] != expect)
      return false;
    expect *= d.sizes[r];
  }
  return true;
}

template <int Rank> int64_t numElements(const MemRefDesc<float, Rank> &d) {
  int64_t n = 1;
  for (int r = 0; r < Rank; ++r)
    n *= d.sizes[r];
  return n;
}

/// dst[i] = src[i * stride] for i < n.
inline void copyStrided(float *dst, const float *src, int64_t n,
                        int64_t stride) {
  if (stride == 1) {
    std::memcpy(dst, src, sizeof(float) * n);
    return;
  }
  for (int64_t i = 0; i < n; ++i)
    dst[i] = src[i * stride];
}

/// Pointer to the elements of `d` in row-major order; copies into `scratch`
/// (row by row) when the memref is strided.
template <int Rank>
const float *denseData(const MemRefDesc<float, Rank> &d,
                       std::vector<float> &scratch) {
  const float *base = d.aligned + d.offset;
  if (isDense(d))
    return base;
  scratch.resize(numElements(d));
  int64_t inner = d.sizes[Rank - 1];
  int64_t rows = inner ? numElements(d) / inner : 0;
  int64_t idx[Rank] = {};
  for (int64_t row = 0; row < rows; ++row) {
    int64_t src = 0;
    for (int r = 0; r + 1 < Rank; ++r)
      src += idx[r] * d.strides[r];
    copyStrided(scratch.data() + row * inner, base + src, inner,
                d.strides[Rank - 1]);
    for (int r = Rank - 2; r >= 0; --r) {
      if (++idx[r] < d.sizes[r])
        break;
      idx[r] = 0;
    }
  }
  return scratch.data();
}

/// Output buffer: the memref itself when dense, else a scratch copied back.
template <int Rank> struct DenseOut {
  explicit DenseOut(MemRefDesc<float, Rank> &d) : desc(d) {
    dense = isDense(d);
    if (!dense)
      scratch.resize(numElements(d));
  }
  float *data() { return dense ? desc.aligned + desc.offset : scratch.data(); }
  ~DenseOut() {
    if (dense)
      return;
    int64_t idx[Rank] = {};
    float *base = desc.aligned + desc.offset;
    for (size_t e = 0; e < scratch.size(); ++e) {
      int64_t dst = 0;
      for (int r = 0; r < Rank; ++r)
        dst += idx[r] * desc.strides[r];
      base[dst] = scratch[e];
      for (int r = Rank - 1; r >= 0; --r) {
        if (++idx[r] < desc.sizes[r])
          break;
        idx[r] = 0;
      }
    }
  }
  MemRefDesc<float, Rank> &desc;
  bool dense;
  std::vector<float> scratch;
};

struct AxisTable {
  std::vector<int64_t> low, high;
  std::vector<float> weight; // Of the high sample.
};

/// Same arithmetic as the linalg lowering (DataMovementOps.cpp): f32
/// source coordinate, floor, clamp of the high index.
AxisTable axisTable(int64_t in, int64_t out, bool alignCorners) {
  AxisTable t;
  t.low.resize(out);
  t.high.resize(out);
  t.weight.resize(out);
  float scale = alignCorners
                    ? (out > 1 ? float(double(in - 1) / double(out - 1)) : 0.f)
                    : float(double(in) / double(out));
  for (int64_t i = 0; i < out; ++i) {
    float fi = static_cast<float>(i);
    float src =
        alignCorners ? scale * fi : std::max(scale * (fi + 0.5f) - 0.5f, 0.f);
    float lowF = std::floor(src);
    t.low[i] = static_cast<int64_t>(lowF);
    t.high[i] = std::min(t.low[i] + 1, in - 1);
    t.weight[i] = src - lowF;
  }
  return t;
}

struct ConvArgs {
  MemRef4F *out, *in, *w;
  MemRef1F *bias;
  MemRef4F *residual;
  MemRef1I *offH, *offW;
  int64_t strideH, strideW, padH, padW, dilH, dilW, groups, flags, act;
};

struct DeformArgs {
  MemRef4F *out, *in, *offset, *w;
  MemRef1F *bias;
  int64_t strideH, strideW, padH, padW, dilH, dilW, groups, offsetGroups,
      hasBias;
};

/// One target's kernels.
struct IsaKernels {
  const char *name;
  int mr, nr; // Micro-tile.
  void (*conv2d)(const ConvArgs &);
  void (*convTranspose2d)(MemRef4F *out, MemRef4F *in, MemRef4F *w,
                          MemRef1F *bias, int64_t hasBias);
  void (*linear)(MemRef2F *out, MemRef2F *in, MemRef2F *w, MemRef1F *bias,
                 int64_t hasBias);
  void (*upsampleBilinear)(MemRef4F *out, MemRef4F *in, bool alignCorners);
  void (*deformConv2d)(const DeformArgs &);
  void (*erfRow)(float *x, int64_t n);
};

} // namespace
} // namespace gpuopt::runtime

//===----------------------------------------------------------------------===//
// The kernels, once per target
//===----------------------------------------------------------------------===//
//
// The pragma (GCC's target pragma, clang's attribute push) makes every
// function defined in the included text — lambdas included — a function of
// that target; the standard library's templates
// are defined above it, outside any pragma, so no COMDAT function this file
// emits uses an extension the linker could hand to other code
// (utils/check_kernel_spills.py checks both properties on the object).

#if defined(__x86_64__) || defined(__i386__)
#define GPUOPT_HAVE_X86_ISAS 1
#ifdef __clang__
#pragma clang attribute push(                                                  \
    __attribute__((target("avx512f,avx512vl,avx2,fma"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx512f,avx512vl,avx2,fma")
#endif
namespace gpuopt::runtime {
namespace {
namespace avx512 {
#define GPUOPT_ISA_NAME "avx512"
#define GPUOPT_ISA_VBYTES 64
#define GPUOPT_ISA_NV 2
#define GPUOPT_ISA_MR 12
#include "CpuKernelsIsa.inc"
#undef GPUOPT_ISA_NAME
#undef GPUOPT_ISA_VBYTES
#undef GPUOPT_ISA_NV
#undef GPUOPT_ISA_MR
} // namespace avx512
} // namespace
} // namespace gpuopt::runtime
#ifdef __clang__
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

#ifdef __clang__
#pragma clang attribute push(__attribute__((target("avx2,fma"))),              \
                             apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2,fma")
#endif
namespace gpuopt::runtime {
namespace {
namespace avx2 {
#define GPUOPT_ISA_NAME "avx2"
#define GPUOPT_ISA_VBYTES 32
#define GPUOPT_ISA_NV 2
#define GPUOPT_ISA_MR 6
#include "CpuKernelsIsa.inc"
#undef GPUOPT_ISA_NAME
#undef GPUOPT_ISA_VBYTES
#undef GPUOPT_ISA_NV
#undef GPUOPT_ISA_MR
} // namespace avx2
} // namespace
} // namespace gpuopt::runtime
#ifdef __clang__
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
#endif

namespace gpuopt::runtime {
namespace {
namespace generic {
#define GPUOPT_ISA_NAME "generic"
#define GPUOPT_ISA_VBYTES 16
#define GPUOPT_ISA_NV 2
#define GPUOPT_ISA_MR 6
#include "CpuKernelsIsa.inc"
#undef GPUOPT_ISA_NAME
#undef GPUOPT_ISA_VBYTES
#undef GPUOPT_ISA_NV
#undef GPUOPT_ISA_MR
} // namespace generic
} // namespace
} // namespace gpuopt::runtime

//===----------------------------------------------------------------------===//
// Dispatch
//===----------------------------------------------------------------------===//

namespace gpuopt::runtime {
namespace {

struct IsaEntry {
  CpuIsa isa;
  const IsaKernels *kernels;
  /// CPU features the target's pragma enables (null-terminated).
  const char *features[5];
};

/// Best first; generic (SSE2, part of x86-64) runs everywhere.
const IsaEntry kIsaEntries[] = {
#ifdef GPUOPT_HAVE_X86_ISAS
    {CpuIsa::Avx512,
     &avx512::kKernels,
     {"avx512f", "avx512vl", "avx2", "fma", nullptr}},
    {CpuIsa::Avx2, &avx2::kKernels, {"avx2", "fma", nullptr}},
#endif
    {CpuIsa::Generic, &generic::kKernels, {nullptr}},
};

/// GPUOPT_CPU_ISA_PRETEND_LACKS (test-only, docs/CPUBackend.md): a comma-
/// separated list of CPU features to treat as absent, so that the refusal of
/// a path this CPU lacks can be tested on a CPU that has every path.
bool pretendLacks(const char *feature) {
  const char *list = std::getenv("GPUOPT_CPU_ISA_PRETEND_LACKS");
  if (!list)
    return false;
  std::string all = std::string(",") + list + ",";
  return all.find(std::string(",") + feature + ",") != std::string::npos;
}

bool cpuHas(const char *feature) {
  if (pretendLacks(feature))
    return false;
#ifdef GPUOPT_HAVE_X86_ISAS
  __builtin_cpu_init();
  // (__builtin_cpu_supports takes only literals.)
  if (!std::strcmp(feature, "avx512f"))
    return __builtin_cpu_supports("avx512f");
  if (!std::strcmp(feature, "avx512vl"))
    return __builtin_cpu_supports("avx512vl");
  if (!std::strcmp(feature, "avx2"))
    return __builtin_cpu_supports("avx2");
  if (!std::strcmp(feature, "fma"))
    return __builtin_cpu_supports("fma");
#endif
  return false;
}

const IsaEntry *findEntry(CpuIsa isa) {
  for (const IsaEntry &e : kIsaEntries)
    if (e.isa == isa)
      return &e;
  return nullptr;
}

/// The first feature `e` needs that this CPU lacks, or nullptr.
const char *missing(const IsaEntry &e) {
  for (const char *const *f = e.features; *f; ++f)
    if (!cpuHas(*f))
      return *f;
  return nullptr;
}

std::string supportedList() {
  std::string s;
  for (const IsaEntry &e : kIsaEntries)
    if (!missing(e))
      s += (s.empty() ? "" : ", ") + std::string(cpuIsaName(e.isa));
  return s;
}

struct Selection {
  const IsaKernels *kernels = nullptr;
  std::string error;
};

/// GPUOPT_CPU_ISA, else the best path this CPU runs.
Selection selectFromEnvironment() {
  Selection s;
  const char *forced = std::getenv("GPUOPT_CPU_ISA");
  if (!forced || !*forced) {
    for (const IsaEntry &e : kIsaEntries)
      if (!missing(e)) {
        s.kernels = e.kernels;
        break;
      }
    return s;
  }
  for (CpuIsa isa : kCpuIsas) {
    if (std::strcmp(forced, cpuIsaName(isa)))
      continue;
    const IsaEntry *e = findEntry(isa);
    const char *lacks = e ? missing(*e) : "an x86-64 CPU";
    if (lacks)
      s.error = std::string("GPUOPT_CPU_ISA=") + forced +
                " but this CPU lacks " + lacks +
                "; it supports: " + supportedList();
    else
      s.kernels = e->kernels;
    return s;
  }
  s.error = std::string("GPUOPT_CPU_ISA='") + forced +
            "' is not a kernel path (avx512, avx2 or generic); this CPU "
            "supports: " +
            supportedList();
  return s;
}

const Selection &environmentSelection() {
  static const Selection s = selectFromEnvironment();
  return s;
}

/// Set by setCpuIsa(); overrides the environment.
std::atomic<const IsaKernels *> forcedKernels{nullptr};

/// The kernels every call uses; nullptr (and `error`) when GPUOPT_CPU_ISA
/// names a path that cannot run.
const IsaKernels *activeKernels(std::string *error = nullptr) {
  if (const IsaKernels *k = forcedKernels.load(std::memory_order_acquire))
    return k;
  const Selection &s = environmentSelection();
  if (!s.kernels && error)
    *error = s.error;
  return s.kernels;
}

} // namespace

const char *cpuIsaName(CpuIsa isa) {
  switch (isa) {
  case CpuIsa::Avx512:
    return "avx512";
  case CpuIsa::Avx2:
    return "avx2";
  case CpuIsa::Generic:
    return "generic";
  }
  return "?";
}

const char *cpuIsaMissingFeature(CpuIsa isa) {
  const IsaEntry *e = findEntry(isa);
  return e ? missing(*e) : "an x86-64 CPU";
}

bool checkCpuIsa(std::string &error) {
  return activeKernels(&error) != nullptr;
}

bool setCpuIsa(CpuIsa isa, std::string &error) {
  const IsaEntry *e = findEntry(isa);
  if (const char *lacks = cpuIsaMissingFeature(isa)) {
    error = std::string("the ") + cpuIsaName(isa) + " kernels need " + lacks +
            ", which this CPU lacks; it supports: " + supportedList();
    return false;
  }
  forcedKernels.store(e->kernels, std::memory_order_release);
  return true;
}

const char *getCpuIsaName() {
  const IsaKernels *k = activeKernels();
  return k ? k->name : nullptr;
}

void getCpuMicroTile(int &mr, int &nr) {
  const IsaKernels *k = activeKernels();
  mr = k ? k->mr : 0;
  nr = k ? k->nr : 0;
}

bool cpuErf(float *x, int64_t n) {
  const IsaKernels *k = activeKernels();
  if (!k)
    return false;
  k->erfRow(x, n);
  return true;
}

} // namespace gpuopt::runtime

using namespace gpuopt::runtime;

namespace {
/// GPUOPT_PROFILE=1: time every kernel call by kind and shape and print a
/// summary (total ms, calls, share) to stderr at exit.
class KernelProfile {
public:
  static KernelProfile *get() {
    static KernelProfile *instance =
        std::getenv("GPUOPT_PROFILE") ? new KernelProfile() : nullptr;
    return instance;
  }
  void add(const std::string &key, double ms) {
    std::lock_guard<std::mutex> lock(mutex);
    Entry &e = entries[key];
    e.ms += ms;
    ++e.calls;
  }
  ~KernelProfile() = default;

private:
  struct Entry {
    double ms = 0;
    long calls = 0;
  };
  KernelProfile() {
    std::atexit([] { get()->print(); });
  }
  void print() {
    std::vector<std::pair<std::string, Entry>> sorted(entries.begin(),
                                                      entries.end());
    std::sort(sorted.begin(), sorted.end(),
              [](auto &a, auto &b) { return a.second.ms > b.second.ms; });
    double total = 0;
    for (auto &[key, e] : sorted)
      total += e.ms;
    const char *isa = getCpuIsaName();
    std::fprintf(stderr,
                 "gpuopt kernel profile (%s kernels): %.1f ms in kernels\n",
                 isa ? isa : "no", total);
    for (auto &[key, e] : sorted)
      std::fprintf(stderr, "  %9.2f ms %6ld calls %5.1f%%  %s\n", e.ms, e.calls,
                   total > 0 ? 100 * e.ms / total : 0.0, key.c_str());
  }
  std::mutex mutex;
  std::map<std::string, Entry> entries;
};

/// Times the enclosing scope when profiling is on.
class ProfileScope {
public:
  template <typename KeyFn>
  explicit ProfileScope(KeyFn keyFn) : profile(KernelProfile::get()) {
    if (profile) {
      key = keyFn();
      start = std::chrono::steady_clock::now();
    }
  }
  ~ProfileScope() {
    if (profile)
      profile->add(key, std::chrono::duration<double, std::milli>(
                            std::chrono::steady_clock::now() - start)
                            .count());
  }

private:
  KernelProfile *profile;
  std::string key;
  std::chrono::steady_clock::time_point start;
};

template <int Rank> std::string shapeOf(const MemRefDesc<float, Rank> &d) {
  std::string s;
  for (int r = 0; r < Rank; ++r)
    s += (r ? "x" : "") + std::to_string(d.sizes[r]);
  return s;
}
/// Runs a kernel body with the selected target's kernels; the generated code
/// that calls it cannot take an error back, so an exception (out of memory,
/// a thread that cannot start) or a GPUOPT_CPU_ISA this CPU cannot run
/// becomes the error of the enclosing callGenerated() (Allocator.h).
template <typename Fn> void guarded(const char *kernel, Fn &&fn) {
  std::string error;
  const IsaKernels *k = activeKernels(&error);
  if (!k) {
    reportKernelFailure(kernel, error.c_str());
    return;
  }
  try {
    fn(*k);
  } catch (const std::exception &e) {
    reportKernelFailure(kernel, e.what());
  }
}
} // namespace

extern "C" {

void _mlir_ciface_gpuopt_cpu_conv2d(MemRef4F *out, MemRef4F *in, MemRef4F *w,
                                    MemRef1F *bias, MemRef4F *residual,
                                    MemRef1I *offH, MemRef1I *offW,
                                    int64_t strideH, int64_t strideW,
                                    int64_t padH, int64_t padW, int64_t dilH,
                                    int64_t dilW, int64_t groups, int64_t flags,
                                    int64_t activation) {
  ProfileScope scope([&] {
    std::string layout;
    if (!isDense(*in))
      layout = " strides " + std::to_string(in->strides[0]) + "," +
               std::to_string(in->strides[1]) + "," +
               std::to_string(in->strides[2]) + "," +
               std::to_string(in->strides[3]);
    return "conv2d in " + shapeOf(*in) + layout + " w " + shapeOf(*w) +
           (offH->sizes[0] || offW->sizes[0] ? " shifted" : "") +
           (groups > 1 ? " groups " + std::to_string(groups) : "") +
           (strideH > 1 ? " stride " + std::to_string(strideH) : "");
  });
  guarded("conv2d", [&](const IsaKernels &k) {
    k.conv2d({out, in, w, bias, residual, offH, offW, strideH, strideW, padH,
              padW, dilH, dilW, groups, flags, activation});
  });
}

void _mlir_ciface_gpuopt_cpu_conv_transpose2d(MemRef4F *out, MemRef4F *in,
                                              MemRef4F *w, MemRef1F *bias,
                                              int64_t hasBias) {
  ProfileScope scope([&] {
    return "conv_transpose2d in " + shapeOf(*in) + " w " + shapeOf(*w);
  });
  guarded("conv_transpose2d", [&](const IsaKernels &k) {
    k.convTranspose2d(out, in, w, bias, hasBias);
  });
}

void _mlir_ciface_gpuopt_cpu_linear(MemRef2F *out, MemRef2F *in, MemRef2F *w,
                                    MemRef1F *bias, int64_t hasBias) {
  ProfileScope scope(
      [&] { return "linear in " + shapeOf(*in) + " w " + shapeOf(*w); });
  guarded("linear",
          [&](const IsaKernels &k) { k.linear(out, in, w, bias, hasBias); });
}

void _mlir_ciface_gpuopt_cpu_upsample_bilinear(MemRef4F *out, MemRef4F *in,
                                               int64_t alignCorners) {
  ProfileScope scope([&] {
    return "upsample_bilinear in " + shapeOf(*in) + " out " + shapeOf(*out);
  });
  guarded("upsample_bilinear", [&](const IsaKernels &k) {
    k.upsampleBilinear(out, in, alignCorners != 0);
  });
}

void _mlir_ciface_gpuopt_cpu_deform_conv2d(
    MemRef4F *out, MemRef4F *in, MemRef4F *offset, MemRef4F *w, MemRef1F *bias,
    int64_t strideH, int64_t strideW, int64_t padH, int64_t padW, int64_t dilH,
    int64_t dilW, int64_t groups, int64_t offsetGroups, int64_t hasBias) {
  ProfileScope scope(
      [&] { return "deform_conv2d in " + shapeOf(*in) + " w " + shapeOf(*w); });
  guarded("deform_conv2d", [&](const IsaKernels &k) {
    k.deformConv2d({out, in, offset, w, bias, strideH, strideW, padH, padW,
                    dilH, dilW, groups, offsetGroups, hasBias});
  });
}

const char *gpuopt_cpu_kernel_isa(void) { return getCpuIsaName(); }

} // extern "C"

// lib/Runtime/Allocator.cpp
extern "C" void *_mlir_memref_to_llvm_alloc(uint64_t size);
extern "C" void *_mlir_memref_to_llvm_aligned_alloc(uint64_t alignment,
                                                    uint64_t size);
extern "C" void _mlir_memref_to_llvm_free(void *p);
// lib/Runtime/MemRefCopy.cpp
extern "C" void memrefCopy(int64_t elemSize, void *src, void *dst);

namespace gpuopt::runtime {
const KernelSymbol *getCpuKernelSymbols() {
  static const KernelSymbol symbols[] = {
      {"_mlir_ciface_gpuopt_cpu_conv2d",
       reinterpret_cast<void *>(&_mlir_ciface_gpuopt_cpu_conv2d)},
      {"_mlir_ciface_gpuopt_cpu_conv_transpose2d",
       reinterpret_cast<void *>(&_mlir_ciface_gpuopt_cpu_conv_transpose2d)},
      {"_mlir_ciface_gpuopt_cpu_linear",
       reinterpret_cast<void *>(&_mlir_ciface_gpuopt_cpu_linear)},
      {"_mlir_ciface_gpuopt_cpu_upsample_bilinear",
       reinterpret_cast<void *>(&_mlir_ciface_gpuopt_cpu_upsample_bilinear)},
      {"_mlir_ciface_gpuopt_cpu_deform_conv2d",
       reinterpret_cast<void *>(&_mlir_ciface_gpuopt_cpu_deform_conv2d)},
      {"_mlir_memref_to_llvm_alloc",
       reinterpret_cast<void *>(&_mlir_memref_to_llvm_alloc)},
      {"_mlir_memref_to_llvm_aligned_alloc",
       reinterpret_cast<void *>(&_mlir_memref_to_llvm_aligned_alloc)},
      {"_mlir_memref_to_llvm_free",
       reinterpret_cast<void *>(&_mlir_memref_to_llvm_free)},
      {"memrefCopy", reinterpret_cast<void *>(&memrefCopy)},
      {nullptr, nullptr}};
  return symbols;
}
} // namespace gpuopt::runtime
