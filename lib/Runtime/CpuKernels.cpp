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
// The micro-kernel computes an MR x 32 tile (MR <= 12) in registers with GCC
// vector extensions; it is compiled three times (AVX-512, AVX2, baseline)
// and the best one for the running CPU is chosen once. Tiles are spread over
// the pool of ThreadPool.h. Epilogues (bias, residual, activation) are
// applied while a tile is stored.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Runtime/CpuKernels.h"
#include "gpuopt/Runtime/Allocator.h"
#include "gpuopt/Runtime/ThreadPool.h"

#include <algorithm>
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
#include <vector>

namespace gpuopt::runtime {
namespace {

constexpr int kNR = 32;      // Columns of a micro-tile.
constexpr int kMaxMR = 12;   // Rows of a micro-tile.
constexpr int64_t kMB = 96;  // Rows of a parallel task.
constexpr int64_t kNB = 256; // Columns of a parallel task.

typedef float V16 __attribute__((vector_size(64), aligned(4)));

// Activation codes shared with the lowering (SegToCpuKernels.cpp).
enum Activation : int64_t { kNone = 0, kRelu = 1, kGelu = 2, kGeluTanh = 3 };
// Flag bits of gpuopt_cpu_conv2d.
enum ConvFlags : int64_t { kHasBias = 1, kHasResidual = 2, kZeroMode = 4 };

/// max(v, 0) as torch.relu: NaN stays NaN (`v > 0 ? v : 0` would give 0).
/// Branch-free, so the loops calling it still vectorise (cmp + blend).
inline float relu(float v) { return v < 0.f ? 0.f : v; }

/// The activations follow PyTorch's NaN/Inf semantics by construction: NaN
/// propagates through every formula, GELU(-Inf) = -Inf * 0 = NaN.
inline float activate(float v, int64_t act) {
  switch (act) {
  case kRelu:
    return relu(v);
  case kGelu:
    return 0.5f * v * (1.f + std::erf(v * 0.70710678118654752f));
  case kGeluTanh: {
    float inner = 0.7978845608028654f * (v + 0.044715f * v * v * v);
    return 0.5f * v * (1.f + std::tanh(inner));
  }
  default:
    return v;
  }
}

//===----------------------------------------------------------------------===//
// Micro-kernel
//===----------------------------------------------------------------------===//

using MicroKernelFn = void (*)(int64_t k, const float *a, int64_t aRow,
                               int64_t aCol, const float *b,
                               const int64_t *bOff, float *tile);

template <int MR>
__attribute__((always_inline)) inline void
microKernelBody(int64_t kSize, const float *a, int64_t aRow, int64_t aCol,
                const float *b, const int64_t *bOff, float *tile) {
  V16 acc[MR][2];
#pragma GCC unroll 12
  for (int i = 0; i < MR; ++i)
    acc[i][0] = acc[i][1] = V16{};
  for (int64_t k = 0; k < kSize; ++k) {
    const float *row = b + bOff[k];
    V16 b0, b1;
    std::memcpy(&b0, row, sizeof(V16));
    std::memcpy(&b1, row + 16, sizeof(V16));
    const float *ak = a + k * aCol;
#pragma GCC unroll 12
    for (int i = 0; i < MR; ++i) {
      V16 av = V16{} + ak[i * aRow];
      acc[i][0] += av * b0;
      acc[i][1] += av * b1;
    }
  }
#pragma GCC unroll 12
  for (int i = 0; i < MR; ++i) {
    std::memcpy(tile + i * kNR, &acc[i][0], sizeof(V16));
    std::memcpy(tile + i * kNR + 16, &acc[i][1], sizeof(V16));
  }
}

template <int MR>
__attribute__((target("avx512f,avx512vl,fma"))) void
microKernelAvx512(int64_t k, const float *a, int64_t aRow, int64_t aCol,
                  const float *b, const int64_t *bOff, float *tile) {
  microKernelBody<MR>(k, a, aRow, aCol, b, bOff, tile);
}

template <int MR>
__attribute__((target("avx2,fma"))) void
microKernelAvx2(int64_t k, const float *a, int64_t aRow, int64_t aCol,
                const float *b, const int64_t *bOff, float *tile) {
  microKernelBody<MR>(k, a, aRow, aCol, b, bOff, tile);
}

template <int MR>
void microKernelBase(int64_t k, const float *a, int64_t aRow, int64_t aCol,
                     const float *b, const int64_t *bOff, float *tile) {
  microKernelBody<MR>(k, a, aRow, aCol, b, bOff, tile);
}

struct KernelTable {
  MicroKernelFn fns[kMaxMR + 1];
};

template <template <int> class> struct Unused;

KernelTable makeTable() {
  KernelTable t{};
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl")) {
    t.fns[1] = microKernelAvx512<1>;
    t.fns[2] = microKernelAvx512<2>;
    t.fns[3] = microKernelAvx512<3>;
    t.fns[4] = microKernelAvx512<4>;
    t.fns[5] = microKernelAvx512<5>;
    t.fns[6] = microKernelAvx512<6>;
    t.fns[7] = microKernelAvx512<7>;
    t.fns[8] = microKernelAvx512<8>;
    t.fns[9] = microKernelAvx512<9>;
    t.fns[10] = microKernelAvx512<10>;
    t.fns[11] = microKernelAvx512<11>;
    t.fns[12] = microKernelAvx512<12>;
  } else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    t.fns[1] = microKernelAvx2<1>;
    t.fns[2] = microKernelAvx2<2>;
    t.fns[3] = microKernelAvx2<3>;
    t.fns[4] = microKernelAvx2<4>;
    t.fns[5] = microKernelAvx2<5>;
    t.fns[6] = microKernelAvx2<6>;
    t.fns[7] = microKernelAvx2<7>;
    t.fns[8] = microKernelAvx2<8>;
    t.fns[9] = microKernelAvx2<9>;
    t.fns[10] = microKernelAvx2<10>;
    t.fns[11] = microKernelAvx2<11>;
    t.fns[12] = microKernelAvx2<12>;
  } else {
    t.fns[1] = microKernelBase<1>;
    t.fns[2] = microKernelBase<2>;
    t.fns[3] = microKernelBase<3>;
    t.fns[4] = microKernelBase<4>;
    t.fns[5] = microKernelBase<5>;
    t.fns[6] = microKernelBase<6>;
    t.fns[7] = microKernelBase<7>;
    t.fns[8] = microKernelBase<8>;
    t.fns[9] = microKernelBase<9>;
    t.fns[10] = microKernelBase<10>;
    t.fns[11] = microKernelBase<11>;
    t.fns[12] = microKernelBase<12>;
  }
  return t;
}

const KernelTable &kernels() {
  static const KernelTable table = makeTable();
  return table;
}

//===----------------------------------------------------------------------===//
// GEMM driver
//===----------------------------------------------------------------------===//

/// A writer receives each computed tile: rows [i0, i0 + rows), columns
/// [j0, j0 + cols); tile[r * kNR + c]. (A template parameter, not a
/// std::function: it runs once per micro-tile.)

struct Gemm {
  int64_t m = 0, n = 0, k = 0;
  const float *a = nullptr;
  int64_t aRow = 0, aCol = 0;
  const float *b = nullptr;
  const int64_t *bOff = nullptr;
  /// True when every row of B may be read kNR floats past column n - 1.
  bool bSlack = false;
};

template <typename Writer> void runGemm(const Gemm &g, const Writer &write) {
  if (g.m <= 0 || g.n <= 0)
    return;
  const KernelTable &table = kernels();
  // Blocks of kMB x kNB, halved (down to 24 x 64) while there are fewer
  // than 4 tasks per thread: small maps (14x14, 28x28) would otherwise give
  // 2-3 unequal tasks and leave a core idle.
  int64_t mb = kMB, nb = kNB;
  int64_t minTasks = 4 * static_cast<int64_t>(getNumThreads());
  auto numTasks = [&] { return ((g.m + mb - 1) / mb) * ((g.n + nb - 1) / nb); };
  while (numTasks() < minTasks && (nb > 2 * kNR || mb > 2 * kMaxMR)) {
    if (nb > 2 * kNR && (g.n + nb - 1) / nb <= (g.m + mb - 1) / mb * 4)
      nb /= 2;
    else if (mb > 2 * kMaxMR)
      mb /= 2;
    else
      nb /= 2;
  }
  int64_t mTasks = (g.m + mb - 1) / mb;
  int64_t nTasks = (g.n + nb - 1) / nb;
  parallelFor(mTasks * nTasks, [&](int64_t task) {
    int64_t mt = task % mTasks, nt = task / mTasks;
    int64_t iEnd = std::min(g.m, (mt + 1) * mb);
    int64_t jEnd = std::min(g.n, (nt + 1) * nb);
    alignas(64) float tile[kMaxMR * kNR];
    static thread_local std::vector<float> tail;
    static thread_local std::vector<int64_t> tailOff;
    for (int64_t j0 = nt * nb; j0 < jEnd; j0 += kNR) {
      int cols = static_cast<int>(std::min<int64_t>(kNR, jEnd - j0));
      const float *b = g.b + j0;
      const int64_t *off = g.bOff;
      if (!g.bSlack && j0 + kNR > g.n) {
        // Last strip of a B without slack: copy it, zero-padded.
        tail.assign(static_cast<size_t>(g.k) * kNR, 0.f);
        tailOff.resize(g.k);
        for (int64_t kk = 0; kk < g.k; ++kk) {
          std::memcpy(tail.data() + kk * kNR, g.b + g.bOff[kk] + j0,
                      sizeof(float) * (g.n - j0));
          tailOff[kk] = kk * kNR;
        }
        b = tail.data();
        off = tailOff.data();
      }
      // Row tiles of near-equal height (16 rows: 8 + 8, not 12 + 4).
      int64_t blockRows = iEnd - mt * mb;
      int64_t tiles = (blockRows + kMaxMR - 1) / kMaxMR;
      for (int64_t t = 0, i0 = mt * mb; t < tiles; ++t) {
        int rows = static_cast<int>((blockRows - (i0 - mt * mb)) / (tiles - t));
        table.fns[rows](g.k, g.a + i0 * g.aRow, g.aRow, g.aCol, b, off, tile);
        write(i0, rows, j0, cols, tile);
        i0 += rows;
      }
    }
  });
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

//===----------------------------------------------------------------------===//
// Padded, shifted input copy
//===----------------------------------------------------------------------===//

/// dst[x'] for x' in [0, pad + w + padHigh) = zero padding around src shifted
/// right by `shift` (cyclic: wraps around; else zero-filled).
/// (src's elements are `sx` floats apart.)
void copyRow(float *dst, const float *src, int64_t sx, int64_t w, int64_t pad,
             int64_t padHigh, int64_t shift, bool cyclic) {
  if (pad)
    std::memset(dst, 0, sizeof(float) * pad);
  if (padHigh)
    std::memset(dst + pad + w, 0, sizeof(float) * padHigh);
  float *body = dst + pad;
  if (cyclic) {
    int64_t d = ((shift % w) + w) % w;
    // body[x] = src[(x - d) mod w]
    copyStrided(body + d, src, w - d, sx);
    copyStrided(body, src + (w - d) * sx, d, sx);
    return;
  }
  std::memset(body, 0, sizeof(float) * w);
  if (shift >= w || shift <= -w)
    return;
  int64_t lo = std::max<int64_t>(0, shift), hi = std::min(w, w + shift);
  copyStrided(body + lo, src + (lo - shift) * sx, hi - lo, sx);
}

struct Padded {
  std::vector<float> data;
  int64_t hp = 0, wp = 0; // Padded plane size.
};

/// Copies one image `in` (c channels of h x w, element strides sc, sy, sx:
/// any layout, e.g. a permuted token view) with `ph`/`pw` zero rows/columns
/// around it (`phHigh`/`pwHigh` after), channel c shifted by (offH[c],
/// offW[c]). `slack` zero floats follow the last plane.
void makePadded(Padded &p, const float *in, int64_t sc, int64_t sy, int64_t sx,
                int64_t c, int64_t h, int64_t w, int64_t ph, int64_t phHigh,
                int64_t pw, int64_t pwHigh, const int64_t *offH,
                const int64_t *offW, bool cyclic, int64_t slack) {
  p.hp = h + ph + phHigh;
  p.wp = w + pw + pwHigh;
  int64_t plane = p.hp * p.wp;
  p.data.resize(static_cast<size_t>(c * plane + slack));
  std::memset(p.data.data() + c * plane, 0, sizeof(float) * slack);
  parallelFor(c, [&](int64_t ch) {
    float *dstPlane = p.data.data() + ch * plane;
    const float *srcPlane = in + ch * sc;
    int64_t dh = offH ? offH[ch] : 0, dw = offW ? offW[ch] : 0;
    for (int64_t y = 0; y < p.hp; ++y) {
      float *dst = dstPlane + y * p.wp;
      int64_t row = y - ph - dh; // Source row of the shifted tensor.
      bool inside = y >= ph && y < ph + h;
      if (inside && cyclic)
        row = ((row % h) + h) % h;
      if (!inside || row < 0 || row >= h) {
        std::memset(dst, 0, sizeof(float) * p.wp);
        continue;
      }
      copyRow(dst, srcPlane + row * sy, sx, w, pw, pwHigh, dw, cyclic);
    }
  });
}

/// dst[t] = act(src[t] + bias) (+ res[t * resStep]) for t < len: the
/// residual comes after the activation (seg.fused_conv2d semantics).
void storeRow(float *dst, const float *src, int len, float bias,
              const float *res, int64_t resStep, int64_t act) {
  // One pass, written to the destination directly; the common cases are
  // separate loops the compiler vectorises.
  if (act == kNone && !res) {
    for (int t = 0; t < len; ++t)
      dst[t] = src[t] + bias;
  } else if (act == kRelu && !res) {
    for (int t = 0; t < len; ++t)
      dst[t] = relu(src[t] + bias);
  } else if (act == kNone && resStep == 1) {
    for (int t = 0; t < len; ++t)
      dst[t] = src[t] + bias + res[t];
  } else {
    for (int t = 0; t < len; ++t) {
      float v = activate(src[t] + bias, act);
      dst[t] = res ? v + res[t * resStep] : v;
    }
  }
}

//===----------------------------------------------------------------------===//
// Convolution
//===----------------------------------------------------------------------===//

struct ConvArgs {
  MemRef4F *out, *in, *w;
  MemRef1F *bias;
  MemRef4F *residual;
  MemRef1I *offH, *offW;
  int64_t strideH, strideW, padH, padW, dilH, dilW, groups, flags, act;
};

void conv2d(const ConvArgs &args) {
  std::vector<float> wScratch;
  const MemRef4F &inD = *args.in;
  int64_t batch = inD.sizes[0], c = inD.sizes[1], h = inD.sizes[2],
          w = inD.sizes[3];
  int64_t oc = args.w->sizes[0], cg = args.w->sizes[1], kh = args.w->sizes[2],
          kw = args.w->sizes[3];
  int64_t oh = args.out->sizes[2], ow = args.out->sizes[3];
  // The input is read in place through its strides by the padded copy; only
  // the copy-free 1x1 path needs it dense. A channels-last view (a token
  // map [N, H*W, C] seen as NCHW) is first transposed in cache-sized tiles:
  // gathering it channel by channel would touch one cache line per element.
  const float *in = inD.aligned + inD.offset;
  int64_t inStrides[4] = {inD.strides[0], inD.strides[1], inD.strides[2],
                          inD.strides[3]};
  if (inD.strides[1] == 1 && inD.strides[3] == c && inD.strides[2] == w * c &&
      c > 1) {
    static thread_local std::vector<float> nhwcScratch;
    std::vector<float> &dense = nhwcScratch;
    dense.resize(static_cast<size_t>(batch * c * h * w));
    int64_t hw = h * w;
    for (int64_t img = 0; img < batch; ++img) {
      const float *src = in + img * inStrides[0];
      float *dst = dense.data() + img * c * hw;
      int64_t pTiles = (hw + 31) / 32;
      parallelFor(pTiles, [&](int64_t t) {
        int64_t p0 = t * 32, p1 = std::min(hw, p0 + 32);
        for (int64_t c0 = 0; c0 < c; c0 += 32) {
          int64_t c1 = std::min(c, c0 + 32);
          for (int64_t pp = p0; pp < p1; ++pp)
            for (int64_t cc = c0; cc < c1; ++cc)
              dst[cc * hw + pp] = src[pp * c + cc];
        }
      });
    }
    in = dense.data();
    inStrides[0] = c * hw;
    inStrides[1] = hw;
    inStrides[2] = w;
    inStrides[3] = 1;
  }
  bool inDense = inStrides[3] == 1 && inStrides[2] == w &&
                 inStrides[1] == h * w &&
                 (batch == 1 || inStrides[0] == c * h * w);
  const float *wt = denseData(*args.w, wScratch);
  const float *bias = (args.flags & kHasBias)
                          ? args.bias->aligned + args.bias->offset
                          : nullptr;
  int64_t biasStride = bias ? args.bias->strides[0] : 0;
  const MemRef4F *res = (args.flags & kHasResidual) ? args.residual : nullptr;
  bool cyclic = !(args.flags & kZeroMode);
  const int64_t *offH =
      args.offH->sizes[0] ? args.offH->aligned + args.offH->offset : nullptr;
  const int64_t *offW =
      args.offW->sizes[0] ? args.offW->aligned + args.offW->offset : nullptr;
  DenseOut<4> outBuf(*args.out);
  float *out = outBuf.data();
  int64_t groups = args.groups, ocg = oc / groups;
  int64_t kSize = cg * kh * kw;
  int64_t sh = args.strideH, sw = args.strideW;

  // Padded planes: enough rows/columns for the strided output grid.
  int64_t phHigh = std::max<int64_t>(0, (oh - 1) * sh + (kh - 1) * args.dilH +
                                            1 - h - args.padH);
  int64_t pwHigh = std::max<int64_t>(0, (ow - 1) * sw + (kw - 1) * args.dilW +
                                            1 - w - args.padW);
  // Without a copy, B is the input itself: only for 1x1 kernels, where the
  // grid has no dropped columns that could read past the input's end.
  bool needCopy = args.padH || args.padW || phHigh || pwHigh || offH || offW ||
                  kh != 1 || kw != 1 || !inDense;
  // Scratch reused across calls (no fresh pages on every forward pass).
  // (References: the lambdas below run on pool threads, which must use the
  // calling thread's buffers, not their own thread_local ones.)
  static thread_local Padded paddedScratch;
  static thread_local std::vector<float> colsScratch;
  Padded &padded = paddedScratch;
  std::vector<float> &cols = colsScratch; // im2col rows (strided convs).
  std::vector<int64_t> bOff(kSize);

  for (int64_t img = 0; img < batch; ++img) {
    const float *src = in + img * inStrides[0];
    const float *planes = src;
    int64_t hp = h, wp = w;
    int64_t slack = (kw - 1) * args.dilW + kNR + 16;
    if (needCopy || sh != 1 || sw != 1) {
      makePadded(padded, src, inStrides[1], inStrides[2], inStrides[3], c, h, w,
                 args.padH, phHigh, args.padW, pwHigh, offH, offW, cyclic,
                 slack);
      planes = padded.data.data();
      hp = padded.hp;
      wp = padded.wp;
    }
    if (groups == c && oc == c) {
      // Depthwise: a direct stencil per channel over the padded copy (a GEMM
      // with one row per group would be all overhead).
      float *outImg = out + img * oc * oh * ow;
      parallelFor(c, [&](int64_t ch) {
        const float *plane = planes + ch * hp * wp;
        const float *wc = wt + ch * kh * kw;
        float biasV = bias ? bias[ch * biasStride] : 0.f;
        std::vector<float> acc(static_cast<size_t>(ow));
        for (int64_t y = 0; y < oh; ++y) {
          std::fill(acc.begin(), acc.end(), 0.f);
          for (int64_t r = 0; r < kh; ++r) {
            const float *row = plane + (y * sh + r * args.dilH) * wp;
            for (int64_t s = 0; s < kw; ++s) {
              float wv = wc[r * kw + s];
              const float *in0 = row + s * args.dilW;
              if (sw == 1)
                for (int64_t x = 0; x < ow; ++x)
                  acc[x] += wv * in0[x];
              else
                for (int64_t x = 0; x < ow; ++x)
                  acc[x] += wv * in0[x * sw];
            }
          }
          float *dst = outImg + (ch * oh + y) * ow;
          for (int64_t x0 = 0; x0 < ow; x0 += kNR) {
            int len = static_cast<int>(std::min<int64_t>(kNR, ow - x0));
            const float *resRow =
                res ? res->aligned + res->offset + img * res->strides[0] +
                          ch * res->strides[1] + y * res->strides[2] +
                          x0 * res->strides[3]
                    : nullptr;
            storeRow(dst + x0, acc.data() + x0, len, biasV, resRow,
                     res ? res->strides[3] : 0, args.act);
          }
        }
      });
      continue;
    }
    // Columns of the GEMM: the padded grid (stride 1) or im2col (else).
    int64_t gridW = wp, nCols = oh * wp;
    const float *b = planes;
    bool bSlack = planes != src;
    if (sh != 1 || sw != 1) {
      gridW = ow;
      nCols = oh * ow;
      int64_t rowLen = nCols + kNR;
      cols.assign(static_cast<size_t>(c * kh * kw * rowLen), 0.f);
      parallelFor(c, [&](int64_t ch) {
        for (int64_t r = 0; r < kh; ++r)
          for (int64_t s = 0; s < kw; ++s) {
            float *dst = cols.data() + ((ch * kh + r) * kw + s) * rowLen;
            const float *plane = planes + ch * hp * wp;
            for (int64_t y = 0; y < oh; ++y) {
              const float *row =
                  plane + (y * sh + r * args.dilH) * wp + s * args.dilW;
              for (int64_t x = 0; x < ow; ++x)
                dst[y * ow + x] = row[x * sw];
            }
          }
      });
      b = cols.data();
      bSlack = true;
    }
    float *outImg = out + img * oc * oh * ow;
    for (int64_t g = 0; g < groups; ++g) {
      for (int64_t ch = 0; ch < cg; ++ch)
        for (int64_t r = 0; r < kh; ++r)
          for (int64_t s = 0; s < kw; ++s) {
            int64_t k = (ch * kh + r) * kw + s;
            int64_t cAbs = g * cg + ch;
            if (sh != 1 || sw != 1)
              bOff[k] = ((cAbs * kh + r) * kw + s) * (nCols + kNR);
            else
              bOff[k] = cAbs * hp * wp + r * args.dilH * wp + s * args.dilW;
          }
      Gemm gemm;
      gemm.m = ocg;
      gemm.n = nCols;
      gemm.k = kSize;
      gemm.a = wt + g * ocg * kSize;
      gemm.aRow = kSize;
      gemm.aCol = 1;
      gemm.b = b;
      gemm.bOff = bOff.data();
      gemm.bSlack = bSlack;
      runGemm(gemm, [&](int64_t i0, int rows, int64_t j0, int ncols,
                        const float *tile) {
        // Runs of columns within one grid row; columns past ow are dropped.
        for (int jj = 0; jj < ncols;) {
          int64_t y = (j0 + jj) / gridW, x = (j0 + jj) % gridW;
          int len = static_cast<int>(std::min<int64_t>(ncols - jj, gridW - x));
          int keep = static_cast<int>(
              std::max<int64_t>(0, std::min<int64_t>(len, ow - x)));
          for (int r = 0; r < rows && keep > 0; ++r) {
            int64_t o = g * ocg + i0 + r;
            const float *src = tile + r * kNR + jj;
            float *dst = outImg + (o * oh + y) * ow + x;
            const float *resRow =
                res ? res->aligned + res->offset + img * res->strides[0] +
                          o * res->strides[1] + y * res->strides[2] +
                          x * res->strides[3]
                    : nullptr;
            int64_t resStep = res ? res->strides[3] : 0;
            storeRow(dst, src, keep, bias ? bias[o * biasStride] : 0.f, resRow,
                     resStep, args.act);
          }
          jj += len;
        }
      });
    }
  }
}

//===----------------------------------------------------------------------===//
// Transposed convolution with kernel == stride (no overlap)
//===----------------------------------------------------------------------===//

void convTranspose2d(MemRef4F *outD, MemRef4F *inD, MemRef4F *wD,
                     MemRef1F *biasD, int64_t hasBias) {
  std::vector<float> inScratch, wScratch;
  const float *in = denseData(*inD, inScratch);
  const float *wt = denseData(*wD, wScratch);
  int64_t batch = inD->sizes[0], c = inD->sizes[1], h = inD->sizes[2],
          w = inD->sizes[3];
  int64_t oc = wD->sizes[1], kh = wD->sizes[2], kw = wD->sizes[3];
  int64_t oh = outD->sizes[2], ow = outD->sizes[3];
  const float *bias = hasBias ? biasD->aligned + biasD->offset : nullptr;
  int64_t biasStride = hasBias ? biasD->strides[0] : 0;
  DenseOut<4> outBuf(*outD);
  float *out = outBuf.data();
  std::vector<int64_t> bOff(c);
  for (int64_t ch = 0; ch < c; ++ch)
    bOff[ch] = ch * h * w;
  for (int64_t img = 0; img < batch; ++img) {
    float *outImg = out + img * oc * oh * ow;
    for (int64_t r = 0; r < kh; ++r)
      for (int64_t s = 0; s < kw; ++s) {
        Gemm gemm;
        gemm.m = oc;
        gemm.n = h * w;
        gemm.k = c;
        gemm.a = wt + r * kw + s; // A(o, ch) = W[ch, o, r, s]
        gemm.aRow = kh * kw;
        gemm.aCol = oc * kh * kw;
        gemm.b = in + img * c * h * w;
        gemm.bOff = bOff.data();
        gemm.bSlack = false;
        runGemm(gemm, [&](int64_t i0, int rows, int64_t j0, int ncols,
                          const float *tile) {
          for (int jj = 0; jj < ncols; ++jj) {
            int64_t y = (j0 + jj) / w * kh + r, x = (j0 + jj) % w * kw + s;
            for (int q = 0; q < rows; ++q) {
              int64_t o = i0 + q;
              float v = tile[q * kNR + jj];
              if (bias)
                v += bias[o * biasStride];
              outImg[(o * oh + y) * ow + x] = v;
            }
          }
        });
      }
  }
}

//===----------------------------------------------------------------------===//
// Linear: out[m, n] = in[m, :] . w[n, :] + bias[n]
//===----------------------------------------------------------------------===//

void linear(MemRef2F *outD, MemRef2F *inD, MemRef2F *wD, MemRef1F *biasD,
            int64_t hasBias) {
  std::vector<float> inScratch;
  const float *in = denseData(*inD, inScratch);
  int64_t m = inD->sizes[0], k = inD->sizes[1], n = wD->sizes[0];
  const float *bias = hasBias ? biasD->aligned + biasD->offset : nullptr;
  int64_t biasStride = hasBias ? biasD->strides[0] : 0;
  // B(k, j) = W[j, k]: a transposed copy with kNR floats of slack per row.
  int64_t ldb = n + kNR;
  static thread_local std::vector<float> wt;
  wt.assign(static_cast<size_t>(k * ldb), 0.f);
  const float *wBase = wD->aligned + wD->offset;
  for (int64_t j = 0; j < n; ++j)
    for (int64_t kk = 0; kk < k; ++kk)
      wt[kk * ldb + j] = wBase[j * wD->strides[0] + kk * wD->strides[1]];
  std::vector<int64_t> bOff(k);
  for (int64_t kk = 0; kk < k; ++kk)
    bOff[kk] = kk * ldb;
  DenseOut<2> outBuf(*outD);
  float *out = outBuf.data();
  Gemm gemm;
  gemm.m = m;
  gemm.n = n;
  gemm.k = k;
  gemm.a = in;
  gemm.aRow = k;
  gemm.aCol = 1;
  gemm.b = wt.data();
  gemm.bOff = bOff.data();
  gemm.bSlack = true;
  runGemm(gemm,
          [&](int64_t i0, int rows, int64_t j0, int ncols, const float *tile) {
            for (int q = 0; q < rows; ++q)
              for (int jj = 0; jj < ncols; ++jj) {
                float v = tile[q * kNR + jj];
                if (bias)
                  v += bias[(j0 + jj) * biasStride];
                out[(i0 + q) * n + j0 + jj] = v;
              }
          });
}

//===----------------------------------------------------------------------===//
// Bilinear upsampling (PyTorch's half-pixel or align-corners coordinates)
//===----------------------------------------------------------------------===//

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

void upsampleBilinear(MemRef4F *outD, MemRef4F *inD, bool alignCorners) {
  std::vector<float> inScratch;
  const float *in = denseData(*inD, inScratch);
  int64_t planes = inD->sizes[0] * inD->sizes[1];
  int64_t h = inD->sizes[2], w = inD->sizes[3];
  int64_t oh = outD->sizes[2], ow = outD->sizes[3];
  AxisTable ty = axisTable(h, oh, alignCorners);
  AxisTable tx = axisTable(w, ow, alignCorners);
  DenseOut<4> outBuf(*outD);
  float *out = outBuf.data();
  parallelFor(planes, [&](int64_t p) {
    const float *src = in + p * h * w;
    float *dst = out + p * oh * ow;
    for (int64_t y = 0; y < oh; ++y) {
      const float *r0 = src + ty.low[y] * w, *r1 = src + ty.high[y] * w;
      float ly = ty.weight[y];
      float *row = dst + y * ow;
      for (int64_t x = 0; x < ow; ++x) {
        float lx = tx.weight[x];
        int64_t x0 = tx.low[x], x1 = tx.high[x];
        float top = (1.f - lx) * r0[x0] + lx * r0[x1];
        float bottom = (1.f - lx) * r1[x0] + lx * r1[x1];
        row[x] = (1.f - ly) * top + ly * bottom;
      }
    }
  });
}

//===----------------------------------------------------------------------===//
// Deformable convolution (torchvision.ops.deform_conv2d semantics)
//===----------------------------------------------------------------------===//

/// torchvision's bilinear sample of one plane: 0 outside (-1, h) x (-1, w),
/// corners outside the plane read 0. A NaN coordinate (a NaN offset) samples
/// NaN: it fails every comparison, and casting it to an index is undefined
/// behaviour (x86 gives INT64_MIN, whose neighbour y0 + 1 passes the bounds
/// check below and is then multiplied into an overflowing offset).
inline float sampleBilinear(const float *plane, int64_t h, int64_t w, float y,
                            float x) {
  if (y <= -1.f || y >= float(h) || x <= -1.f || x >= float(w))
    return 0.f;
  if (std::isnan(y) || std::isnan(x))
    return std::numeric_limits<float>::quiet_NaN();
  float yl = std::floor(y), xl = std::floor(x);
  int64_t y0 = static_cast<int64_t>(yl), x0 = static_cast<int64_t>(xl);
  int64_t y1 = y0 + 1, x1 = x0 + 1;
  float ly = y - yl, lx = x - xl, hy = 1.f - ly, hx = 1.f - lx;
  float v1 = (y0 >= 0 && x0 >= 0) ? plane[y0 * w + x0] : 0.f;
  float v2 = (y0 >= 0 && x1 <= w - 1) ? plane[y0 * w + x1] : 0.f;
  float v3 = (y1 <= h - 1 && x0 >= 0) ? plane[y1 * w + x0] : 0.f;
  float v4 = (y1 <= h - 1 && x1 <= w - 1) ? plane[y1 * w + x1] : 0.f;
  return hy * hx * v1 + hy * lx * v2 + ly * hx * v3 + ly * lx * v4;
}

struct DeformArgs {
  MemRef4F *out, *in, *offset, *w;
  MemRef1F *bias;
  int64_t strideH, strideW, padH, padW, dilH, dilW, groups, offsetGroups,
      hasBias;
};

/// Samples every tap into a [C*KH*KW][OH*OW] matrix (the offsets are
/// per-pixel, so no padded-copy trick), then one GEMM per group.
void deformConv2d(const DeformArgs &args) {
  std::vector<float> inScratch, offScratch, wScratch;
  const float *in = denseData(*args.in, inScratch);
  const float *off = denseData(*args.offset, offScratch);
  const float *wt = denseData(*args.w, wScratch);
  int64_t batch = args.in->sizes[0], c = args.in->sizes[1],
          h = args.in->sizes[2], w = args.in->sizes[3];
  int64_t oc = args.w->sizes[0], cg = args.w->sizes[1], kh = args.w->sizes[2],
          kw = args.w->sizes[3];
  int64_t oh = args.out->sizes[2], ow = args.out->sizes[3];
  int64_t offBatch = args.offset->sizes[0];
  int64_t cPerOffGroup = c / args.offsetGroups;
  const float *bias =
      args.hasBias ? args.bias->aligned + args.bias->offset : nullptr;
  int64_t biasStride = args.hasBias ? args.bias->strides[0] : 0;
  DenseOut<4> outBuf(*args.out);
  float *out = outBuf.data();
  int64_t nCols = oh * ow, rowLen = nCols + kNR;
  static thread_local std::vector<float> colsScratch;
  std::vector<float> &cols = colsScratch;
  cols.assign(static_cast<size_t>(c * kh * kw * rowLen), 0.f);
  int64_t ocg = oc / args.groups, kSize = cg * kh * kw;
  std::vector<int64_t> bOff(kSize);
  for (int64_t img = 0; img < batch; ++img) {
    const float *offImg = off + (offBatch == 1 ? 0 : img) *
                                    (2 * args.offsetGroups * kh * kw) * nCols;
    parallelFor(c, [&](int64_t ch) {
      const float *plane = in + (img * c + ch) * h * w;
      int64_t g = ch / cPerOffGroup;
      for (int64_t i = 0; i < kh; ++i)
        for (int64_t j = 0; j < kw; ++j) {
          int64_t tap = (g * kh + i) * kw + j;
          const float *dy = offImg + (2 * tap) * nCols;
          const float *dx = offImg + (2 * tap + 1) * nCols;
          float *dst = cols.data() + ((ch * kh + i) * kw + j) * rowLen;
          for (int64_t y = 0; y < oh; ++y)
            for (int64_t x = 0; x < ow; ++x) {
              int64_t p = y * ow + x;
              float sy =
                  float(y * args.strideH - args.padH + i * args.dilH) + dy[p];
              float sx =
                  float(x * args.strideW - args.padW + j * args.dilW) + dx[p];
              dst[p] = sampleBilinear(plane, h, w, sy, sx);
            }
        }
    });
    float *outImg = out + img * oc * nCols;
    for (int64_t g = 0; g < args.groups; ++g) {
      for (int64_t k = 0; k < kSize; ++k)
        bOff[k] = (g * kSize + k) * rowLen;
      Gemm gemm;
      gemm.m = ocg;
      gemm.n = nCols;
      gemm.k = kSize;
      gemm.a = wt + g * ocg * kSize;
      gemm.aRow = kSize;
      gemm.aCol = 1;
      gemm.b = cols.data();
      gemm.bOff = bOff.data();
      gemm.bSlack = true;
      runGemm(gemm, [&](int64_t i0, int rows, int64_t j0, int ncols,
                        const float *tile) {
        for (int r = 0; r < rows; ++r) {
          int64_t o = g * ocg + i0 + r;
          storeRow(outImg + o * nCols + j0, tile + r * kNR, ncols,
                   bias ? bias[o * biasStride] : 0.f, nullptr, 0, kNone);
        }
      });
    }
  }
}

} // namespace
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
    std::fprintf(stderr, "gpuopt kernel profile: %.1f ms in kernels\n", total);
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
/// Runs a kernel body; the generated code that calls it cannot take an
/// error back, so an exception (out of memory, a thread that cannot start)
/// becomes the error of the enclosing callGenerated() (Allocator.h).
template <typename Fn> void guarded(const char *kernel, Fn &&fn) {
  try {
    fn();
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
  guarded("conv2d", [&] {
    conv2d({out, in, w, bias, residual, offH, offW, strideH, strideW, padH,
            padW, dilH, dilW, groups, flags, activation});
  });
}

void _mlir_ciface_gpuopt_cpu_conv_transpose2d(MemRef4F *out, MemRef4F *in,
                                              MemRef4F *w, MemRef1F *bias,
                                              int64_t hasBias) {
  ProfileScope scope([&] {
    return "conv_transpose2d in " + shapeOf(*in) + " w " + shapeOf(*w);
  });
  guarded("conv_transpose2d",
          [&] { convTranspose2d(out, in, w, bias, hasBias); });
}

void _mlir_ciface_gpuopt_cpu_linear(MemRef2F *out, MemRef2F *in, MemRef2F *w,
                                    MemRef1F *bias, int64_t hasBias) {
  ProfileScope scope(
      [&] { return "linear in " + shapeOf(*in) + " w " + shapeOf(*w); });
  guarded("linear", [&] { linear(out, in, w, bias, hasBias); });
}

void _mlir_ciface_gpuopt_cpu_upsample_bilinear(MemRef4F *out, MemRef4F *in,
                                               int64_t alignCorners) {
  ProfileScope scope([&] {
    return "upsample_bilinear in " + shapeOf(*in) + " out " + shapeOf(*out);
  });
  guarded("upsample_bilinear",
          [&] { upsampleBilinear(out, in, alignCorners != 0); });
}

void _mlir_ciface_gpuopt_cpu_deform_conv2d(
    MemRef4F *out, MemRef4F *in, MemRef4F *offset, MemRef4F *w, MemRef1F *bias,
    int64_t strideH, int64_t strideW, int64_t padH, int64_t padW, int64_t dilH,
    int64_t dilW, int64_t groups, int64_t offsetGroups, int64_t hasBias) {
  ProfileScope scope(
      [&] { return "deform_conv2d in " + shapeOf(*in) + " w " + shapeOf(*w); });
  guarded("deform_conv2d", [&] {
    deformConv2d({out, in, offset, w, bias, strideH, strideW, padH, padW, dilH,
                  dilW, groups, offsetGroups, hasBias});
  });
}

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
