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

#include "CpuKernelsInternal.h"
#include "gpuopt/Runtime/ThreadPool.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <utility>
#include <vector>

namespace gpuopt::runtime {
namespace {

//===----------------------------------------------------------------------===//
// Micro-kernel (one template; instantiated per target in CpuKernelsIsa.inc)
//===----------------------------------------------------------------------===//

using MicroKernelFn = void (*)(int64_t k, const float *a, const float *b,
                               const int64_t *bOff, float *tile);
template <int MaxMR> struct MicroKernelTable { MicroKernelFn fns[MaxMR + 1]; };

/// tile[i][j] = sum_k a[k * MR + i] * b[bOff[k] + j] for an MR x (NV * lanes
/// of V) tile (Accumulate: added to the tile's values, the partial sums of
/// the K blocks before); `a` is the packed panel of the tile's rows
/// (runGemm). MR * NV accumulators in registers; per k, NV vectors of B are
/// loaded and MR consecutive floats of A broadcast (one pointer: no address
/// registers to spill). Prefetch: also fetch the B rows of the next
/// micro-tile column (the first row tile of a column; the others find them
/// in L1, and without the prefetches UNet's convolutions were 4% faster on
/// AVX-512). Inlined into each target's micro-kernel (a callee
/// without target attributes may be), so it is compiled for that target's
/// registers.
template <bool Prefetch, typename V, int MR, int NV>
__attribute__((always_inline)) inline void
microKernelLoop(int64_t kSize, const float *a, const float *b,
                const int64_t *bOff, V (&acc)[MR][NV]) {
  constexpr int lanes = sizeof(V) / sizeof(float);
  constexpr int kStrip = NV * lanes; // Floats of B per k.
  constexpr int kLine = 64 / static_cast<int>(sizeof(float)); // Per line.
  for (int64_t k = 0; k < kSize; ++k, a += MR) {
    const float *row = b + bOff[k];
    // The next micro-tile column of the same task reads this row kStrip
    // floats on: fetch it now (the k rows are up to C*KH*KW streams, more
    // than the hardware prefetchers follow). A row starts anywhere in a
    // line (a 3x3 tap is one float from the next), so the next strip's
    // first line is usually this strip's last, already here: each
    // prefetch aims at the end of one line-sized piece of the next strip,
    // which is the line after its start whenever the row is not aligned.
    if (Prefetch)
#pragma GCC unroll 4
      for (int c = 0; c < kStrip; c += kLine)
        __builtin_prefetch(row + kStrip + c + kLine - 1);
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
}

template <bool Accumulate, bool Prefetch, typename V, int MR, int NV>
__attribute__((always_inline)) inline void
microKernelBody(int64_t kSize, const float *a, const float *b,
                const int64_t *bOff, float *tile) {
  constexpr int lanes = sizeof(V) / sizeof(float);
  V acc[MR][NV];
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) {
      V init{};
      if (Accumulate)
        std::memcpy(&init, tile + (i * NV + v) * lanes, sizeof(V));
      acc[i][v] = init;
    }
  microKernelLoop<Prefetch>(kSize, a, b, bOff, acc);
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v)
      std::memcpy(tile + (i * NV + v) * lanes, &acc[i][v], sizeof(V));
}

/// The variants of a micro-kernel (the Mode template argument of each
/// target's microKernel<MR, Mode>): one function each, so that no branch
/// merges between the accumulators' set-up and their store (where paths
/// merged, GCC kept the 12 AVX2 accumulators on the stack around the
/// k-loop).
enum MicroKernelMode { kAccumulate = 1, kPrefetch = 2, kNumModes = 4 };

//===----------------------------------------------------------------------===//
// Dense views of descriptors
//===----------------------------------------------------------------------===//

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

#ifdef GPUOPT_HAVE_X86_ISAS
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
#define GPUOPT_ISA_KMIN 768
#define GPUOPT_ISA_KC 256
#define GPUOPT_ISA_VBYTES 64
#define GPUOPT_ISA_NV 2
#define GPUOPT_ISA_MR 12
#include "CpuKernelsIsa.inc"
#undef GPUOPT_ISA_NAME
#undef GPUOPT_ISA_VBYTES
#undef GPUOPT_ISA_NV
#undef GPUOPT_ISA_MR
#undef GPUOPT_ISA_KC
#undef GPUOPT_ISA_KMIN
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
#define GPUOPT_ISA_KMIN 512
#define GPUOPT_ISA_KC 384
#define GPUOPT_ISA_VBYTES 32
#define GPUOPT_ISA_NV 2
#define GPUOPT_ISA_MR 6
#include "CpuKernelsIsa.inc"
#undef GPUOPT_ISA_NAME
#undef GPUOPT_ISA_VBYTES
#undef GPUOPT_ISA_NV
#undef GPUOPT_ISA_MR
#undef GPUOPT_ISA_KC
#undef GPUOPT_ISA_KMIN
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
#define GPUOPT_ISA_KMIN 512
#define GPUOPT_ISA_KC 512
#define GPUOPT_ISA_VBYTES 16
#define GPUOPT_ISA_NV 2
#define GPUOPT_ISA_MR 6
#include "CpuKernelsIsa.inc"
#undef GPUOPT_ISA_NAME
#undef GPUOPT_ISA_VBYTES
#undef GPUOPT_ISA_NV
#undef GPUOPT_ISA_MR
#undef GPUOPT_ISA_KC
#undef GPUOPT_ISA_KMIN
} // namespace generic
} // namespace
} // namespace gpuopt::runtime

namespace gpuopt::runtime {
#ifdef GPUOPT_HAVE_X86_ISAS
const IsaKernels kAvx512Kernels = avx512::kKernels;
const IsaKernels kAvx2Kernels = avx2::kKernels;
#endif
const IsaKernels kGenericKernels = generic::kKernels;
} // namespace gpuopt::runtime
