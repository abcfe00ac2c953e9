//===- CpuKernelsTest.cpp - CPU kernels against a naive reference ---------===//
//
// Part of the gpuopt project.
//
// Checks the GEMM-based kernels of runtime/cpu/CpuKernels.cpp on random
// inputs against a direct double-precision loop nest over the op's
// definition (relative L2 error <= 1e-5): convolutions across strides,
// paddings, dilations, groups (depthwise included), per-channel shifts
// (cyclic and zero-filled, offsets beyond the map), per-channel frame shifts
// (TSM: clips of `frames` images, every offset in (-frames, frames)),
// residuals and activations; linear; transposed convolution with kernel ==
// stride. Every case runs on every kernel path the CPU can run (setCpuIsa; the
// others are reported as skipped with the missing feature).
// Inputs holding NaN, +Inf and -Inf must give the reference's NaN positions
// and signed infinities exactly (PyTorch's semantics: ReLU keeps NaN, GELU
// of -Inf is NaN), the finite elements within the same bound.
// (Upsampling and deformable convolution are checked against PyTorch by
// test/python/test_reference_ops.py.) Exit status 1 and one line per failing
// case otherwise. Run by lit (test/Runtime/cpu-kernels.test).
//
//===----------------------------------------------------------------------===//
#include "gpuopt/Runtime/CpuKernels.h"
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>
using namespace gpuopt::runtime;
MemRef4F d4(std::vector<float> &v, int64_t a, int64_t b, int64_t c, int64_t d) {
  return denseMemRef(v.data(), {a, b, c, d});
}
std::mt19937 rng(1);
void fill(std::vector<float> &v) {
  std::normal_distribution<float> n;
  for (auto &x : v)
    x = n(rng);
}
/// NaN, +Inf and -Inf at a few random positions of `v`.
void poison(std::vector<float> &v) {
  std::uniform_int_distribution<size_t> at(0, v.size() - 1);
  const float special[] = {NAN, INFINITY, -INFINITY};
  for (size_t i = 0; i < 3 * std::max<size_t>(1, v.size() / 200); ++i)
    v[at(rng)] = special[i % 3];
}
int fails = 0;
/// The kernel path under test (setCpuIsa).
const char *isa = "";
/// Relative L2 error over the elements where `ref` is finite, or infinity
/// when an element differs from `ref` in being NaN or an infinity.
double compare(const std::vector<float> &out, const std::vector<float> &ref) {
  double e = 0, nr = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    if (!std::isfinite(ref[i]) || !std::isfinite(out[i])) {
      bool same = std::isnan(ref[i]) ? std::isnan(out[i]) : out[i] == ref[i];
      if (!same)
        return INFINITY;
      continue;
    }
    e += (out[i] - ref[i]) * (out[i] - ref[i]);
    nr += ref[i] * ref[i];
  }
  return nr > 0 ? std::sqrt(e / nr) : std::sqrt(e);
}
void conv(int N, int C, int H, int W, int OC, int KH, int KW, int s, int p,
          int d, int g, bool shift, bool zero, bool res, int act,
          bool nan = false, int frames = 0) {
  int OH = (H + 2 * p - d * (KH - 1) - 1) / s + 1,
      OW = (W + 2 * p - d * (KW - 1) - 1) / s + 1;
  int Cg = C / g, OCg = OC / g;
  std::vector<float> in(N * C * H * W), w(OC * Cg * KH * KW), b(OC),
      r(N * OC * OH * OW), out(N * OC * OH * OW), ref(N * OC * OH * OW);
  fill(in);
  fill(w);
  fill(b);
  fill(r);
  if (nan) {
    poison(in);
    if (res)
      poison(r);
  }
  std::vector<int64_t> oh(shift ? C : 0), ow(shift ? C : 0);
  for (int c = 0; c < (shift ? C : 0); ++c) {
    oh[c] = (c % 7) - 3 + (c % 3 ? 0 : H + 1);
    ow[c] = -(c % 5) + 2 - (c % 4 ? 0 : W);
  }
  // Frame offsets covering (-frames, frames), channel by channel.
  std::vector<int64_t> ot(frames ? C : 0);
  for (int c = 0; c < (frames ? C : 0); ++c)
    ot[c] = c % (2 * frames - 1) - (frames - 1);
  auto src = [&](int n, int c, int y, int x) -> float {
    if (y < 0 || y >= H || x < 0 || x >= W)
      return 0;
    if (frames) {
      int t = n % frames - ot[c];
      if (t < 0 || t >= frames)
        return 0;
      n -= ot[c];
    }
    if (shift) {
      int sy = y - oh[c], sx = x - ow[c];
      if (!zero) {
        sy = ((sy % H) + H) % H;
        sx = ((sx % W) + W) % W;
      } else if (sy < 0 || sy >= H || sx < 0 || sx >= W)
        return 0;
      y = sy;
      x = sx;
    }
    return in[((n * C + c) * H + y) * W + x];
  };
  for (int n = 0; n < N; ++n)
    for (int o = 0; o < OC; ++o)
      for (int y = 0; y < OH; ++y)
        for (int x = 0; x < OW; ++x) {
          int gg = o / OCg;
          double acc = b[o];
          for (int c = 0; c < Cg; ++c)
            for (int i = 0; i < KH; ++i)
              for (int j = 0; j < KW; ++j)
                acc +=
                    (double)w[((o * Cg + c) * KH + i) * KW + j] *
                    src(n, gg * Cg + c, y * s - p + i * d, x * s - p + j * d);
          int idx = ((n * OC + o) * OH + y) * OW + x;
          float v = acc;
          if (act == kActRelu)
            v = v < 0 ? 0 : v;
          if (act == kActGelu)
            v = 0.5f * v * (1 + std::erf(v / std::sqrt(2.f)));
          if (act == kActGeluTanh)
            v = 0.5 * v *
                (1 +
                 std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
          if (res)
            v += r[idx];
          ref[idx] = v;
        }
  MemRef4F mo = d4(out, N, OC, OH, OW), mi = d4(in, N, C, H, W),
           mw = d4(w, OC, Cg, KH, KW), mr = d4(r, N, OC, OH, OW);
  MemRef1F mb = denseMemRef(b.data(), {int64_t(OC)});
  MemRef1I mh = denseMemRef(oh.data(), {int64_t(oh.size())}),
           mwo = denseMemRef(ow.data(), {int64_t(ow.size())}),
           mt = denseMemRef(ot.data(), {int64_t(ot.size())});
  _mlir_ciface_gpuopt_cpu_conv2d(
      &mo, &mi, &mw, &mb, &mr, &mh, &mwo, &mt, s, s, p, p, d, d, g, frames,
      kConvHasBias | (res ? kConvHasResidual : 0) | (zero ? kConvZeroMode : 0),
      act);
  double rel = compare(out, ref);
  if (!(rel <= 1e-5)) {
    fails++;
    printf("FAIL %s conv N%d C%d H%d W%d OC%d K%dx%d s%d p%d d%d g%d shift%d "
           "zero%d res%d act%d nan%d frames%d rel=%g\n",
           isa, N, C, H, W, OC, KH, KW, s, p, d, g, shift, zero, res, act, nan,
           frames, rel);
  }
}
void linear(int M, int K, int N) {
  std::vector<float> x(M * K), w(N * K), b(N), o(M * N);
  fill(x);
  fill(w);
  fill(b);
  MemRef2F mo = denseMemRef(o.data(), {M, N}),
           mx = denseMemRef(x.data(), {M, K}),
           mw = denseMemRef(w.data(), {N, K});
  MemRef1F mb = denseMemRef(b.data(), {N});
  _mlir_ciface_gpuopt_cpu_linear(&mo, &mx, &mw, &mb, 1);
  double e = 0, nr = 0;
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double a = b[j];
      for (int k = 0; k < K; ++k)
        a += (double)x[i * K + k] * w[j * K + k];
      e += (a - o[i * N + j]) * (a - o[i * N + j]);
      nr += a * a;
    }
  if (!(std::sqrt(e / nr) <= 1e-5)) {
    fails++;
    printf("FAIL %s linear M%d K%d N%d %g\n", isa, M, K, N, std::sqrt(e / nr));
  }
}
/// conv_transpose2d with kernel == stride (KH x KW) against the direct sum.
void convTranspose(int C, int H, int W, int OC, int KH = 2, int KW = 2,
                   int N = 1) {
  int OH = KH * H, OW = KW * W;
  std::vector<float> x(N * C * H * W), w(C * OC * KH * KW), b(OC),
      o(N * OC * OH * OW);
  fill(x);
  fill(w);
  fill(b);
  MemRef4F mo = d4(o, N, OC, OH, OW), mx = d4(x, N, C, H, W),
           mw = d4(w, C, OC, KH, KW);
  MemRef1F mb = denseMemRef(b.data(), {int64_t(OC)});
  _mlir_ciface_gpuopt_cpu_conv_transpose2d(&mo, &mx, &mw, &mb, 1);
  double e = 0, nr = 0;
  for (int n = 0; n < N; ++n)
    for (int oc = 0; oc < OC; ++oc)
      for (int y = 0; y < OH; ++y)
        for (int xx = 0; xx < OW; ++xx) {
          double a = b[oc];
          for (int c = 0; c < C; ++c)
            a += (double)x[((n * C + c) * H + y / KH) * W + xx / KW] *
                 w[((c * OC + oc) * KH + y % KH) * KW + xx % KW];
          double v = o[((n * OC + oc) * OH + y) * OW + xx];
          e += (a - v) * (a - v);
          nr += a * a;
        }
  if (!(std::sqrt(e / nr) <= 1e-5)) {
    fails++;
    printf("FAIL %s convT C%d H%d W%d OC%d K%dx%d N%d %g\n", isa, C, H, W, OC,
           KH, KW, N, std::sqrt(e / nr));
  }
}
/// The GELU epilogue's vectorised erf against the double std::erf: max abs
/// error <= 1e-6 over a dense sweep of [-10, 10] (every 2^-14) and the
/// specials (+-0, +-Inf exactly +-1, NaN stays NaN, denormals, +-FLT_MAX).
void erfSweep() {
  std::vector<float> x;
  for (int i = -10 * 16384; i <= 10 * 16384; ++i)
    x.push_back(i / 16384.f);
  const float special[] = {0.f,     -0.f,     INFINITY, -INFINITY,
                           NAN,     1e-40f,   -1e-40f,  FLT_MIN,
                           FLT_MAX, -FLT_MAX, 3.925f,   -3.925f};
  x.insert(x.end(), std::begin(special), std::end(special));
  std::vector<float> y = x;
  if (!cpuErf(y.data(), static_cast<int64_t>(y.size()))) {
    fails++;
    printf("FAIL %s erf: no kernel path\n", isa);
    return;
  }
  double worst = 0;
  float at = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    double ref = std::erf(static_cast<double>(x[i]));
    if (std::isnan(x[i]) ? !std::isnan(y[i])
                         : !(std::fabs(y[i] - ref) <= worst)) {
      worst = std::isnan(x[i]) ? INFINITY : std::fabs(y[i] - ref);
      at = x[i];
    }
  }
  bool infExact = y[x.size() - 10] == 1.f && y[x.size() - 9] == -1.f;
  if (!(worst <= 1e-6) || !infExact) {
    fails++;
    printf("FAIL %s erf: max abs error %g at %g, erf(+-Inf) exact %d\n", isa,
           worst, at, infExact);
  } else {
    printf("%s erf: max abs error %g at %g\n", isa, worst, at);
  }
}
void runCases() {
  erfSweep();
  conv(1, 3, 16, 15, 5, 3, 3, 2, 1, 1, 1, false, false, false, kActNone);
  conv(1, 3, 17, 19, 16, 3, 3, 1, 1, 1, 1, false, false, false, kActRelu);
  conv(2, 16, 8, 8, 32, 3, 3, 1, 1, 1, 1, true, false, true, kActGelu);
  conv(1, 16, 9, 11, 20, 3, 3, 1, 1, 1, 1, true, true, false, kActNone);
  conv(1, 8, 12, 12, 8, 1, 1, 1, 0, 1, 1, true, false, false, kActNone);
  conv(1, 8, 12, 12, 13, 1, 1, 1, 0, 1, 1, false, false, true, kActRelu);
  conv(1, 8, 13, 12, 8, 3, 3, 2, 1, 1, 1, false, false, false, kActNone);
  conv(1, 8, 13, 12, 8, 3, 3, 1, 2, 2, 1, true, true, false, kActNone);
  conv(1, 8, 10, 10, 8, 3, 3, 1, 1, 1, 8, false, false, false, kActNone);
  // Depthwise (direct stencil): shifts, residual, GELU, stride, dilation.
  conv(2, 8, 10, 11, 8, 3, 3, 1, 1, 1, 8, true, true, true, kActGelu);
  conv(1, 8, 13, 10, 8, 3, 3, 2, 1, 1, 8, false, false, true, kActRelu);
  conv(1, 8, 13, 10, 8, 3, 3, 1, 2, 2, 8, true, false, false, kActRelu);
  conv(1, 40, 9, 9, 40, 1, 1, 1, 0, 1, 40, false, false, false, kActNone);
  conv(1, 8, 10, 10, 12, 3, 3, 1, 0, 1, 4, false, false, false, kActNone);
  conv(1, 64, 56, 56, 64, 3, 3, 1, 1, 1, 1, false, false, false, kActRelu);
  conv(1, 5, 7, 33, 9, 5, 3, 2, 2, 1, 1, true, false, true, kActRelu);
  // Sizes that are no multiple of any path's micro-tile (6x8, 6x16, 12x32)
  // nor of a parallel block (96 x 256): M, N = OH * W', K = C * 9 odd.
  conv(1, 7, 23, 29, 25, 3, 3, 1, 1, 1, 1, true, false, true, kActRelu);
  conv(1, 13, 5, 3, 97, 3, 3, 1, 1, 1, 1, false, true, false, kActGelu);
  conv(1, 13, 5, 3, 97, 3, 3, 1, 1, 1, 1, false, true, true, kActGeluTanh);
  conv(1, 11, 31, 37, 13, 1, 1, 1, 0, 1, 1, false, false, true, kActNone);
  conv(1, 3, 47, 41, 7, 3, 3, 1, 1, 1, 1, true, false, false, kActRelu);
  conv(1, 9, 21, 19, 11, 3, 3, 2, 1, 1, 1, false, false, true, kActRelu);
  // Strided GEMM convolutions (phase planes): even and odd sizes, stride 3,
  // stride with dilation, shifts (cyclic and zero), groups, 1x1 stride 2,
  // an unpadded 2x2 stride 2 (patch embedding) and a 5x5 stride 2.
  conv(1, 4, 14, 14, 6, 3, 3, 2, 1, 1, 1, false, false, false, kActNone);
  conv(2, 5, 15, 17, 7, 3, 3, 2, 1, 1, 1, true, false, true, kActGelu);
  conv(1, 6, 16, 13, 9, 3, 3, 3, 1, 1, 1, true, true, false, kActRelu);
  conv(1, 4, 17, 16, 5, 3, 3, 2, 2, 2, 1, false, false, true, kActNone);
  conv(1, 8, 13, 14, 12, 3, 3, 2, 1, 1, 2, true, false, false, kActRelu);
  conv(1, 8, 12, 15, 16, 1, 1, 2, 0, 1, 1, false, false, true, kActNone);
  conv(1, 3, 16, 16, 24, 2, 2, 2, 0, 1, 1, false, false, false, kActGelu);
  conv(1, 7, 19, 18, 33, 5, 5, 2, 2, 1, 1, true, true, true, kActRelu);
  conv(1, 128, 28, 28, 160, 3, 3, 2, 1, 1, 1, false, false, false, kActNone);
  // NaN/Inf inputs (and residuals) through every epilogue: GEMM with ReLU
  // alone (the vectorised store loop), ReLU/GELU with a residual, the
  // depthwise stencil, stride 2 (phase planes) and a 1x1 copy-free conv.
  conv(1, 3, 17, 19, 16, 3, 3, 1, 1, 1, 1, false, false, false, kActRelu, true);
  conv(1, 8, 12, 12, 13, 1, 1, 1, 0, 1, 1, false, false, false, kActRelu, true);
  conv(1, 8, 12, 12, 13, 1, 1, 1, 0, 1, 1, false, false, true, kActRelu, true);
  conv(2, 16, 8, 8, 32, 3, 3, 1, 1, 1, 1, true, false, true, kActGelu, true);
  conv(1, 8, 13, 10, 8, 3, 3, 2, 1, 1, 8, false, false, true, kActRelu, true);
  conv(2, 8, 10, 11, 8, 3, 3, 1, 1, 1, 8, true, true, false, kActRelu, true);
  conv(2, 8, 10, 11, 8, 3, 3, 1, 1, 1, 8, false, false, false, kActGelu, true);
  conv(2, 8, 10, 11, 8, 3, 3, 1, 1, 1, 8, false, false, true, kActGeluTanh,
       true);
  conv(1, 8, 12, 12, 13, 1, 1, 1, 0, 1, 1, false, false, false, kActGeluTanh,
       true);
  conv(1, 8, 12, 12, 13, 1, 1, 1, 0, 1, 1, false, false, true, kActGelu, true);
  conv(1, 8, 13, 12, 8, 3, 3, 2, 1, 1, 1, false, false, false, kActRelu, true);
  // Frame shifts (TSM): the GEMM over the padded grid, with a zero-filled
  // (dh, dw) shift and a residual, the 1x1 conv that has no copy without
  // one, depthwise, stride 2 (phase planes), one clip, clips of one frame, NaN.
  conv(8, 8, 5, 6, 8, 3, 3, 1, 1, 1, 1, false, false, false, kActNone, false,
       4);
  conv(4, 16, 9, 11, 20, 3, 3, 1, 1, 1, 1, true, true, true, kActRelu, false,
       2);
  conv(6, 8, 12, 12, 13, 1, 1, 1, 0, 1, 1, false, false, true, kActRelu, false,
       3);
  conv(6, 8, 12, 12, 13, 1, 1, 1, 0, 1, 1, true, false, false, kActNone, false,
       3);
  conv(4, 8, 10, 11, 8, 3, 3, 1, 1, 1, 8, true, false, false, kActGelu, false,
       4);
  conv(4, 8, 13, 12, 8, 3, 3, 2, 1, 1, 1, false, false, false, kActNone, false,
       2);
  conv(3, 5, 7, 9, 6, 3, 3, 1, 1, 1, 1, true, true, false, kActNone, false, 3);
  conv(2, 4, 6, 6, 4, 3, 3, 1, 1, 1, 1, false, false, false, kActNone, false,
       1);
  conv(4, 8, 12, 12, 13, 1, 1, 1, 0, 1, 1, false, false, true, kActRelu, true,
       4);
  conv(4, 8, 10, 10, 12, 3, 3, 1, 0, 1, 4, false, false, false, kActNone, false,
       2);
  linear(37, 70, 45);
  linear(1, 3, 1);
  linear(13, 129, 33);
  linear(197, 31, 7);
  convTranspose(6, 5, 7, 9);
  convTranspose(5, 4, 3, 7, 3, 2, 2); // Non-square taps, two images.
  // The GEMM's K blocks (runGemm: from K > 256..768, blocks of at most
  // 128..512 rows, sized from the L1 data cache: kBlocking) with a K that is
  // no multiple of any block length, M and N tails, every epilogue; and A
  // packed per task (M * K > 2^20 floats, one column task: N = 5 * 7 = 35).
  conv(1, 113, 9, 11, 29, 3, 3, 1, 1, 1, 1, true, false, true, kActGelu);
  conv(1, 113, 9, 11, 29, 3, 3, 1, 1, 1, 1, false, true, false, kActRelu, true);
  conv(1, 90, 13, 12, 31, 3, 3, 2, 1, 1, 1, false, false, true, kActGeluTanh);
  conv(1, 120, 5, 5, 1000, 3, 3, 1, 1, 1, 1, true, false, true, kActRelu);
  conv(1, 120, 5, 5, 1000, 3, 3, 1, 1, 1, 1, false, false, false, kActGelu,
       true);
  linear(37, 1000, 45);
  linear(300, 3500, 40);
  // K = C = 800 blocked, with the zero-padded copy of B's last strip
  // (N = 15 columns, no slack).
  convTranspose(800, 3, 5, 20);
  // A (the weights read with contiguous rows) packed per task: M = 500 * 4,
  // K = 600, M * K > 2^20 floats, one column task.
  convTranspose(600, 3, 5, 500);
}

/// Every case on every kernel path this CPU can run; a path it cannot run
/// is reported as skipped (GPUOPT_CPU_ISA_PRETEND_LACKS simulates a lack).
/// `--env-only`: the cases once, on the path GPUOPT_CPU_ISA selects (exit 1
/// with the reason when it cannot run).
int main(int argc, char **argv) {
  if (argc > 1 && std::string(argv[1]) == "--env-only") {
    std::string error;
    if (!checkCpuIsa(error)) {
      fprintf(stderr, "%s\n", error.c_str());
      return 1;
    }
    int mr = 0, nr = 0;
    getCpuMicroTile(mr, nr);
    isa = getCpuIsaName();
    printf("GPUOPT_CPU_ISA selects %s (%dx%d micro-tile)\n", isa, mr, nr);
    runCases();
    printf("fails=%d\n", fails);
    return fails != 0;
  }
  for (CpuIsa path : kCpuIsas) {
    isa = cpuIsaName(path);
    if (const char *lacks = cpuIsaMissingFeature(path)) {
      printf("skipped %s: CPU lacks %s\n", isa, lacks);
      continue;
    }
    std::string error;
    if (!setCpuIsa(path, error)) {
      fails++;
      printf("FAIL %s: %s\n", isa, error.c_str());
      continue;
    }
    int before = fails;
    runCases();
    int mr = 0, nr = 0;
    getCpuMicroTile(mr, nr);
    printf("tested %s (%dx%d micro-tile, %s): %d failures\n", isa, mr, nr,
           getCpuIsaName(), fails - before);
  }
  printf("fails=%d\n", fails);
  return fails != 0;
}
