//===- CudaLibraryPlanTest.cpp - Library steps as cuDNN/cuBLASLt calls ----===//
//
// Part of the gpuopt project.
//
// describeLibraryStep (runtime/cuda/CudaLibraryPlan.cpp) on Library steps
// built in memory (the artifact reader refuses them until the compiler side
// lands): every routine, groups, dilation, stride, padding, residual (apart
// and in place), absent bias, strided views, and each refusal with its
// message. The accepted plans are also executed: a host model of the
// documented semantics of the calls the plan names (cuDNN's
// cross-correlation with groups, its backward data, cudnnAddTensor,
// cudnnActivationForward, cudnnTransformTensor; cuBLASLt's column-major
// D = op(A) op(B) + bias) runs over a random arena and must match the CPU
// kernel of the same name (CpuKernelAbi.def) to rel. L2 1e-5, and write
// nothing outside the step's output. One line per failure, exit status 1
// then. Run by lit (test/Runtime/cuda-library-plan.test).
//
//===----------------------------------------------------------------------===//
#include "gpuopt/Runtime/CudaLibraryPlan.h"
#include "gpuopt/Runtime/CpuKernelAbi.h"
#include "gpuopt/Runtime/CpuKernels.h"
#include "gpuopt/Runtime/MemRef.h"

#include "LibraryStepBuilders.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>

using namespace gpuopt::runtime;
using namespace gpuopt::runtime::testing;

static int fails = 0;

static void check(bool ok, const std::string &what) {
  if (!ok) {
    std::printf("FAIL: %s\n", what.c_str());
    ++fails;
  }
}

namespace {

//===----------------------------------------------------------------------===//
// A host model of the vendor calls, reading only the plan.
//===----------------------------------------------------------------------===//

struct Model {
  const CudaArtifact &art;
  const LibraryCallPlan &p;
  std::vector<float> &arena;
  std::vector<float> scratch;

  float *base(unsigned buffer, int64_t offset) {
    return arena.data() + art.buffers[buffer].offset / 4 + offset;
  }
  float &at(float *t, const int64_t *st, int64_t n, int64_t c, int64_t h,
            int64_t w) {
    return t[n * st[0] + c * st[1] + h * st[2] + w * st[3]];
  }
  static void packedStrides(const int64_t *d, int64_t *st) {
    st[3] = 1;
    st[2] = d[3];
    st[1] = d[2] * d[3];
    st[0] = d[1] * d[2] * d[3];
  }
  void transform(float *src, const int64_t *ss, float *dst, const int64_t *ds,
                 const int64_t *d) {
    for (int64_t n = 0; n < d[0]; ++n)
      for (int64_t c = 0; c < d[1]; ++c)
        for (int64_t h = 0; h < d[2]; ++h)
          for (int64_t w = 0; w < d[3]; ++w)
            at(dst, ds, n, c, h, w) = at(src, ss, n, c, h, w);
  }

  void run(const std::vector<LibraryOp> &ops) {
    if (p.routine == LibraryRoutine::Linear)
      return matmul();
    scratch.assign(p.stagedInElements + p.stagedOutElements, std::nanf(""));
    int64_t xs[4], ys[4];
    float *x = base(p.in.buffer, p.in.offset);
    float *y = base(p.out.buffer, p.out.offset);
    std::copy(p.in.strides, p.in.strides + 4, xs);
    std::copy(p.out.strides, p.out.strides + 4, ys);
    float *xStage = scratch.data(), *yStage = xStage + p.stagedInElements;
    float *xt = p.in.packed ? x : xStage, *yt = p.out.packed ? y : yStage;
    int64_t xts[4], yts[4];
    packedStrides(p.in.dims, xts);
    packedStrides(p.out.dims, yts);
    const float *wt = base(p.weightBuffer, p.weightOffset);
    const float *bias = p.hasBias ? base(p.biasBuffer, p.biasOffset) : nullptr;
    const int64_t *xd = p.in.dims, *yd = p.out.dims, *f = p.filter;
    for (LibraryOp op : ops) {
      switch (op) {
      case LibraryOp::StageInput:
        transform(x, xs, xStage, xts, xd);
        break;
      case LibraryOp::CopyResidual:
        transform(base(p.residual.buffer, p.residual.offset),
                  p.residual.strides, yt, yts, yd);
        break;
      case LibraryOp::ConvForward:
      case LibraryOp::ConvBiasRelu: {
        bool fused = op == LibraryOp::ConvBiasRelu;
        int64_t kPerGroup = f[0] / p.groups;
        for (int64_t n = 0; n < yd[0]; ++n)
          for (int64_t k = 0; k < yd[1]; ++k)
            for (int64_t oh = 0; oh < yd[2]; ++oh)
              for (int64_t ow = 0; ow < yd[3]; ++ow) {
                double acc = 0;
                int64_t g = k / kPerGroup;
                for (int64_t c = 0; c < f[1]; ++c)
                  for (int64_t r = 0; r < f[2]; ++r)
                    for (int64_t s = 0; s < f[3]; ++s) {
                      int64_t ih =
                          oh * p.stride[0] - p.pad[0] + r * p.dilation[0];
                      int64_t iw =
                          ow * p.stride[1] - p.pad[1] + s * p.dilation[1];
                      if (ih < 0 || iw < 0 || ih >= xd[2] || iw >= xd[3])
                        continue;
                      acc += at(xt, xts, n, g * f[1] + c, ih, iw) *
                             wt[((k * f[1] + c) * f[2] + r) * f[3] + s];
                    }
                float &o = at(yt, yts, n, k, oh, ow);
                float prior = p.convBeta != 0 ? p.convBeta * o : 0;
                float v = static_cast<float>(acc) + prior;
                if (fused)
                  v = std::max(v + bias[k], 0.0f);
                o = v;
              }
        break;
      }
      case LibraryOp::ConvBackwardData: {
        // dx = the transpose of the convolution dx -> dy (= in).
        const int64_t *dx = yd, *dy = xd;
        for (int64_t n = 0; n < dx[0]; ++n)
          for (int64_t c = 0; c < dx[1]; ++c)
            for (int64_t h = 0; h < dx[2]; ++h)
              for (int64_t w = 0; w < dx[3]; ++w)
                at(yt, yts, n, c, h, w) = 0;
        for (int64_t n = 0; n < dy[0]; ++n)
          for (int64_t k = 0; k < dy[1]; ++k)
            for (int64_t ph = 0; ph < dy[2]; ++ph)
              for (int64_t pw = 0; pw < dy[3]; ++pw)
                for (int64_t c = 0; c < f[1]; ++c)
                  for (int64_t r = 0; r < f[2]; ++r)
                    for (int64_t s = 0; s < f[3]; ++s) {
                      int64_t h =
                          ph * p.stride[0] - p.pad[0] + r * p.dilation[0];
                      int64_t w =
                          pw * p.stride[1] - p.pad[1] + s * p.dilation[1];
                      if (h < 0 || w < 0 || h >= dx[2] || w >= dx[3])
                        continue;
                      at(yt, yts, n, c, h, w) +=
                          at(xt, xts, n, k, ph, pw) *
                          wt[((k * f[1] + c) * f[2] + r) * f[3] + s];
                    }
        break;
      }
      case LibraryOp::AddBias:
      case LibraryOp::Relu:
        for (int64_t n = 0; n < yd[0]; ++n)
          for (int64_t c = 0; c < yd[1]; ++c)
            for (int64_t h = 0; h < yd[2]; ++h)
              for (int64_t w = 0; w < yd[3]; ++w) {
                float &o = at(yt, yts, n, c, h, w);
                o = op == LibraryOp::AddBias ? o + bias[c] : std::max(o, 0.f);
              }
        break;
      case LibraryOp::UnstageOutput:
        transform(yStage, yts, y, ys, yd);
        break;
      case LibraryOp::Matmul:
        check(false, p.where + ": Matmul in a convolution's sequence");
        break;
      }
    }
  }

  /// cuBLASLt: column-major D (m x n) = op(A) (m x k) . B (k x n) + bias.
  void matmul() {
    const float *a = base(p.a.buffer, p.a.offset),
                *b = base(p.b.buffer, p.b.offset);
    const float *bias = p.hasBias ? base(p.biasBuffer, p.biasOffset) : nullptr;
    float *d = base(p.d.buffer, p.d.offset);
    for (int64_t j = 0; j < p.n; ++j)
      for (int64_t i = 0; i < p.m; ++i) {
        double acc = 0;
        for (int64_t l = 0; l < p.k; ++l) {
          float av = p.transA ? a[l + i * p.a.ld] : a[i + l * p.a.ld];
          float bv = p.transB ? b[j + l * p.b.ld] : b[l + j * p.b.ld];
          acc += static_cast<double>(av) * bv;
        }
        d[i + j * p.d.ld] = static_cast<float>(acc) + (bias ? bias[i] : 0.f);
      }
  }
};

//===----------------------------------------------------------------------===//
// The CPU kernel of the same name on the same arena.
//===----------------------------------------------------------------------===//

template <int Rank>
MemRefDesc<float, Rank> desc(const CudaArtifact &art, std::vector<float> &arena,
                             const CudaOperand &o) {
  MemRefDesc<float, Rank> d;
  d.allocated = d.aligned =
      arena.data() + (o.empty() ? 0 : art.buffers[o.buffer].offset / 4);
  d.offset = o.offset;
  for (int i = 0; i < Rank; ++i) {
    d.sizes[i] = o.sizes[i];
    d.strides[i] = o.strides[i];
  }
  return d;
}

void runCpuKernel(const CudaArtifact &art, const CudaStep &s,
                  std::vector<float> &arena) {
  const std::vector<CudaOperand> &o = s.operands;
  const std::vector<int64_t> &k = s.scalars;
  if (s.library == "linear") {
    MemRef2F out = desc<2>(art, arena, o[0]), in = desc<2>(art, arena, o[1]),
             w = desc<2>(art, arena, o[2]);
    MemRef1F b = desc<1>(art, arena, o[3]);
    _mlir_ciface_gpuopt_cpu_linear(&out, &in, &w, &b, k[0]);
    return;
  }
  MemRef4F out = desc<4>(art, arena, o[0]), in = desc<4>(art, arena, o[1]),
           w = desc<4>(art, arena, o[2]);
  MemRef1F b = desc<1>(art, arena, o[3]);
  if (s.library == "conv_transpose2d") {
    _mlir_ciface_gpuopt_cpu_conv_transpose2d(&out, &in, &w, &b, k[0]);
    return;
  }
  // The ABI's absent residual is the input again, its flag clear.
  MemRef4F res = o[4].empty() ? in : desc<4>(art, arena, o[4]);
  int64_t none = 0;
  MemRef1I off = denseMemRef(&none, {int64_t(0)});
  _mlir_ciface_gpuopt_cpu_conv2d(&out, &in, &w, &b, &res, &off, &off, &off,
                                 k[0], k[1], k[2], k[3], k[4], k[5], k[6], k[7],
                                 k[8], k[9]);
}

/// Runs the plan's `ops` on the host model and the CPU kernel on copies of
/// one random arena; compares the output view and the rest of the arena.
void expectSameAsCpu(const Plan &plan, const LibraryCallPlan &p,
                     const std::vector<LibraryOp> &ops,
                     const std::string &what) {
  std::mt19937 rng(1234);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> arena(plan.art.arenaBytes / 4 + 1);
  for (float &v : arena)
    v = u(rng);
  std::vector<float> ref = arena, got = arena;
  runCpuKernel(plan.art, plan.step, ref);
  Model m{plan.art, p, got, {}};
  m.run(ops);
  double num = 0, den = 0;
  size_t changedElsewhere = 0;
  const CudaOperand &o = plan.step.operands[0];
  const float *outBase = arena.data() + plan.art.buffers[o.buffer].offset / 4;
  std::vector<bool> isOut(arena.size(), false);
  int64_t total = 1;
  for (int64_t s : o.sizes)
    total *= s;
  for (int64_t e = 0; e < total; ++e) {
    int64_t rem = e, idx = o.offset;
    for (size_t d = o.sizes.size(); d-- > 0;) {
      idx += (rem % o.sizes[d]) * o.strides[d];
      rem /= o.sizes[d];
    }
    isOut[outBase - arena.data() + idx] = true;
  }
  for (size_t i = 0; i < arena.size(); ++i) {
    if (isOut[i]) {
      num += (double(got[i]) - ref[i]) * (double(got[i]) - ref[i]);
      den += double(ref[i]) * ref[i];
    } else if (got[i] != arena[i] || ref[i] != arena[i]) {
      ++changedElsewhere;
    }
  }
  double rel = std::sqrt(num / std::max(den, 1e-30));
  check(rel <= 1e-5, what + ": rel. L2 " + std::to_string(rel) +
                         " against the CPU kernel (" + formatLibraryCall(p) +
                         ")");
  check(changedElsewhere == 0, what + ": " + std::to_string(changedElsewhere) +
                                   " elements outside the output changed");
}

/// Describes `plan`, expects success and `ops`, and runs it (and its
/// fallback) against the CPU kernel.
LibraryCallPlan expectPlan(const Plan &plan, const std::vector<LibraryOp> &ops,
                           const std::string &what) {
  LibraryCallPlan p;
  Status s = plan.describe(p);
  check(s.isOk(), what + ": refused: " + s.message());
  if (!s)
    return p;
  check(p.ops == ops, what + ": calls " + formatLibraryCall(p));
  expectSameAsCpu(plan, p, p.ops, what);
  if (!p.fallback.empty())
    expectSameAsCpu(plan, p, p.fallback, what + " (fallback)");
  return p;
}

void expectRefused(const Plan &plan, const std::string &message,
                   const std::string &what) {
  LibraryCallPlan p;
  Status s = plan.describe(p);
  std::string want =
      "run[0] (library '" + plan.step.library + "' at m.py:7:3): " + message;
  check(!s.isOk() && s.message() == want,
        what + ":\n  got:  " + (s ? "accepted" : s.message()) +
            "\n  want: " + want);
}

using Op = LibraryOp;

void testConv2d() {
  ConvSpec s;
  LibraryCallPlan p = expectPlan(convPlan(s), {Op::ConvBiasRelu},
                                 "conv2d 3x3 pad 1, bias + relu");
  check(p.fallback == std::vector<Op>({Op::ConvForward, Op::AddBias, Op::Relu}),
        "conv2d bias + relu: fallback " + formatLibraryCall(p));
  check(p.needsCudnn() && !p.needsCublasLt() && p.filter[0] == 6 &&
            p.filter[1] == 8 && p.pad[0] == 1 && p.convBeta == 0 &&
            p.scratchBytes() == 0,
        "conv2d bias + relu: geometry " + formatLibraryCall(p));

  ConvSpec g;
  g.groups = 2;
  g.stride = 2;
  g.dil = 2;
  g.pad = 2;
  g.bias = false;
  g.act = kActNone;
  g.h = 11;
  p = expectPlan(convPlan(g), {Op::ConvForward},
                 "conv2d groups 2, stride 2, dilation 2, pad 2, no bias");
  check(p.groups == 2 && p.filter[1] == 4 && p.stride[0] == 2 &&
            p.dilation[1] == 2,
        "conv2d groups: geometry " + formatLibraryCall(p));

  ConvSpec dw;
  dw.c = dw.oc = dw.groups = 4;
  dw.k = 5;
  dw.pad = 2;
  dw.act = kActNone;
  expectPlan(convPlan(dw), {Op::ConvForward, Op::AddBias},
             "conv2d depthwise 5x5 with bias");

  ConvSpec nb;
  nb.bias = false;
  nb.k = 1;
  nb.pad = 0;
  expectPlan(convPlan(nb), {Op::ConvForward, Op::Relu},
             "conv2d 1x1, relu without bias");

  ConvSpec r;
  r.act = kActNone;
  r.residual = true;
  r.n = 2;
  p = expectPlan(convPlan(r), {Op::CopyResidual, Op::ConvForward, Op::AddBias},
                 "conv2d with bias and a residual");
  check(p.convBeta == 1 && !p.residualInPlace,
        "conv2d residual: beta " + formatLibraryCall(p));

  ConvSpec ri = r;
  ri.residualInPlace = true;
  p = expectPlan(convPlan(ri), {Op::ConvForward, Op::AddBias},
                 "conv2d with the residual in its output");
  check(p.residualInPlace && p.convBeta == 1,
        "conv2d residual in place: " + formatLibraryCall(p));

  // At batch 1 a channel slice is contiguous: cuDNN reads it in place.
  ConvSpec s1;
  s1.stridedIn = s1.stridedOut = true;
  p = expectPlan(convPlan(s1), {Op::ConvBiasRelu},
                 "conv2d on channel slices at batch 1");
  check(p.in.packed && p.out.packed && p.scratchBytes() == 0,
        "conv2d batch-1 slices are packed: " + formatLibraryCall(p));

  ConvSpec si;
  si.stridedIn = true;
  si.n = 2;
  p = expectPlan(convPlan(si), {Op::StageInput, Op::ConvBiasRelu},
                 "conv2d on a channel slice");
  check(!p.in.packed && p.out.packed && p.in.strides[0] == 11 * 9 * 7 &&
            p.scratchBytes() == (2 * 8 * 9 * 7 * 4 + 255) / 256 * 256,
        "conv2d strided input: " + formatLibraryCall(p));

  ConvSpec so = r;
  so.stridedIn = so.stridedOut = true;
  p = expectPlan(convPlan(so),
                 {Op::StageInput, Op::CopyResidual, Op::ConvForward,
                  Op::AddBias, Op::UnstageOutput},
                 "conv2d strided in and out, residual");
  check(p.stagedOutElements == p.out.elements() && !p.out.packed,
        "conv2d strided output: " + formatLibraryCall(p));

  ConvSpec sr = so;
  sr.residualInPlace = true;
  sr.stridedIn = false;
  expectPlan(
      convPlan(sr),
      {Op::CopyResidual, Op::ConvForward, Op::AddBias, Op::UnstageOutput},
      "conv2d strided output that is its residual");

  ConvSpec sf = si;
  sf.stridedOut = true;
  p = expectPlan(convPlan(sf),
                 {Op::StageInput, Op::ConvBiasRelu, Op::UnstageOutput},
                 "conv2d strided in and out, bias + relu");
  check(p.fallback ==
            std::vector<Op>({Op::StageInput, Op::ConvForward, Op::AddBias,
                             Op::Relu, Op::UnstageOutput}),
        "conv2d strided fallback: " + formatLibraryCall(p));

  // The residual operand of a conv without the flag is ignored (the CPU
  // ABI passes the input there).
  Plan ig = convPlan(nb);
  ig.art.run[0].operands[4] = ig.art.run[0].operands[1];
  ig.step = ig.art.run[0];
  expectPlan(ig, {Op::ConvForward, Op::Relu},
             "conv2d whose unflagged residual operand is the input");
}

void testConv2dRefusals() {
  ConvSpec s;
  Plan p = convPlan(s);
  p.art.run[0].operands[5] = Plan::view(p.buffer("param", 8), {8});
  expectRefused(p,
                "a per-channel shift (offH/offW) is not executed by cuDNN: "
                "the compiler keeps such convolutions on generated kernels",
                "conv2d with offH");

  p = convPlan(s);
  p.art.run[0].scalars[7] = 2;
  expectRefused(p,
                "frames = 2: frame-shifted convolutions are not executed "
                "by cuDNN",
                "conv2d with frames");

  p = convPlan(s);
  p.art.run[0].scalars[9] = kActGelu;
  expectRefused(p, "activation code 2: the library route fuses none or relu",
                "conv2d with gelu");

  ConvSpec r;
  r.residual = true;
  expectRefused(convPlan(r),
                "relu with a residual: the library route adds a residual "
                "only without activation",
                "conv2d relu + residual");

  p = convPlan(s);
  p.art.run[0].operands[2].strides = {1, 6, 48, 144};
  expectRefused(p,
                "operand 2 (w) is not packed (sizes 6x8x3x3, strides "
                "1x6x48x144): the library route takes contiguous weights",
                "conv2d with a permuted weight");

  ConvSpec g;
  g.groups = 3;
  g.c = 9;
  p = convPlan(g);
  p.art.run[0].scalars[6] = 2;
  expectRefused(p, "channels do not agree with groups 2: in 1x9x9x7, w 6x3x3x3",
                "conv2d groups that do not divide");

  p = convPlan(s);
  p.art.run[0].scalars[0] = 2;
  expectRefused(p,
                "the output is 1x6x9x7, but a convolution of 1x8x9x7 by "
                "6x8x3x3 (stride 2,1, pad 1,1, dilation 1,1) gives 1x6x5x7",
                "conv2d whose output size disagrees");

  p = convPlan(s);
  p.art.run[0].scalars[8] = 0;
  p.art.run[0].scalars[8] = 16;
  expectRefused(p, "unknown flag bits 16", "conv2d unknown flags");

  p = convPlan(s);
  p.art.run[0].operands[3] = Plan::absent(1);
  expectRefused(p, "the step has a bias, but operand 3 (bias) is empty",
                "conv2d bias flag without a bias");

  p = convPlan(s);
  p.art.run[0].operands[3].strides = {2};
  p.art.run[0].operands[3].sizes = {3};
  expectRefused(p, "the bias has 3 elements for 6 output channels",
                "conv2d short bias");

  p = convPlan(s);
  p.art.buffers[p.art.run[0].operands[3].buffer].bytes = 48;
  p.art.run[0].operands[3].strides = {2};
  expectRefused(p,
                "the bias has stride 2: the library route takes a "
                "contiguous bias",
                "conv2d strided bias");

  p = convPlan(s);
  p.art.run[0].operands[1].offset = 3;
  expectRefused(p,
                "operand 1 (in) (sizes 1x8x9x7, strides 504x63x7x1, offset "
                "3) reaches element 506 of buffers[0] (input), which holds "
                "504",
                "conv2d input view past its buffer");

  p = convPlan(s);
  p.art.run[0].operands[1].strides[3] = -1;
  expectRefused(p,
                "operand 1 (in) has a negative size or stride (sizes "
                "1x8x9x7, strides 504x63x7x-1)",
                "conv2d negative stride");

  p = convPlan(s);
  p.art.run[0].operands[0] = Plan::absent(4);
  expectRefused(p,
                "operand 0 (out) is empty (absent), but the routine needs "
                "it",
                "conv2d without output");

  p = convPlan(s);
  p.art.run[0].operands.pop_back();
  expectRefused(p,
                "conv2d takes 8 operands and 10 scalars (CpuKernelAbi.def), "
                "the step has 7 and 10",
                "conv2d operand count");

  p = convPlan(s);
  p.art.run[0].operands[1].sizes.push_back(1);
  expectRefused(p, "operand 1 has 5 sizes and 4 strides, the ABI 4 dimensions",
                "conv2d operand rank");

  p = convPlan(s);
  p.art.run[0].operands[0].buffer = 99;
  expectRefused(p, "operand 0 (out) names buffers[99], which does not exist",
                "conv2d unknown buffer");

  p = convPlan(s);
  p.art.buffers[p.art.run[0].operands[1].buffer].dtype = DType::I64;
  expectRefused(p,
                "operand 1 (in) is a view of buffers[0] (input), which is "
                "not f32",
                "conv2d i64 input");

  p = convPlan(s);
  p.art.run[0].operands[1].sizes[1] = int64_t(1) << 33;
  expectRefused(p,
                "operand 1 (in) has a size or stride beyond the int range of "
                "cuDNN and cuBLASLt (sizes 1x8589934592x9x7, strides "
                "504x63x7x1)",
                "conv2d beyond int");

  // The input and output in one buffer, overlapping.
  ConvSpec o;
  o.c = o.oc = 6;
  p = convPlan(o);
  p.art.run[0].operands[1].buffer = p.art.run[0].operands[0].buffer;
  expectRefused(p,
                "operand 1 (in) overlaps the output (operand 0) in "
                "buffers[1] (output): the library writes its output while "
                "it reads its inputs",
                "conv2d in place");

  ConvSpec ro;
  ro.act = kActNone;
  ro.residual = true;
  ro.stridedOut = true;
  p = convPlan(ro);
  CudaOperand &res = p.art.run[0].operands[4];
  res = p.art.run[0].operands[0];
  res.offset += 1;
  expectRefused(p,
                "operand 4 (residual) overlaps the output (operand 0) in "
                "buffers[1] (output): the library writes its output while "
                "it reads its inputs",
                "conv2d residual shifted over its output");

  Plan u = convPlan(s);
  u.art.run[0].library = "upsample_bilinear";
  u.step.library = "upsample_bilinear";
  expectRefused(u,
                "library routine 'upsample_bilinear' is not executed by the "
                "GPU runtime (cuDNN: conv2d, conv_transpose2d; cuBLASLt: "
                "linear)",
                "unknown routine");

  LibraryCallPlan lp;
  Status st = describeLibraryStep(u.art, "init", 0, lp);
  check(!st && st.message() == "init[0] is not a Library step",
        "a step that is not there: " + st.message());
}

void testConvTranspose2d() {
  LibraryCallPlan p =
      expectPlan(transposePlan(true), {Op::ConvBackwardData, Op::AddBias},
                 "conv_transpose2d 2x2 stride 2 with bias");
  check(p.filter[0] == 6 && p.filter[1] == 3 && p.stride[0] == 2 &&
            p.pad[0] == 0 && p.groups == 1 && p.needsCudnn(),
        "conv_transpose2d geometry: " + formatLibraryCall(p));
  p = expectPlan(transposePlan(false, 3, 2), {Op::ConvBackwardData},
                 "conv_transpose2d 3x2 stride 3,2 without bias");
  check(p.stride[0] == 3 && p.stride[1] == 2 && !p.hasBias,
        "conv_transpose2d 3x2: " + formatLibraryCall(p));

  // A strided input (a channel slice) is staged.
  Plan s = transposePlan(true);
  CudaOperand &in = s.art.run[0].operands[1];
  in.buffer = s.buffer("temp", 2 * 8 * 5 * 4);
  in.strides = denseStrides({2, 8, 5, 4});
  in.offset = 20;
  s.step = s.art.run[0];
  expectPlan(s, {Op::StageInput, Op::ConvBackwardData, Op::AddBias},
             "conv_transpose2d on a channel slice");

  Plan o = transposePlan(true);
  o.art.run[0].operands[0].sizes = {2, 3, 11, 8};
  o.art.buffers[0].bytes = 2 * 3 * 11 * 8 * 4;
  o.art.run[0].operands[0].strides = denseStrides({2, 3, 11, 8});
  expectRefused(o,
                "conv_transpose2d of 2x6x5x4 by 6x3x2x2 into 2x3x11x8: the "
                "library route executes kernel == stride, no padding, groups "
                "1 (output 2x3x10x8)",
                "conv_transpose2d with padding-like output");

  Plan h = transposePlan(true);
  h.art.run[0].scalars[0] = 2;
  expectRefused(h, "hasBias must be 0 or 1, got 2", "conv_transpose2d hasBias");
}

void testLinear() {
  LibraryCallPlan p =
      expectPlan(linearPlan(true), {Op::Matmul}, "linear with bias");
  check(p.m == 3 && p.n == 5 && p.k == 7 && p.transA && !p.transB &&
            p.a.ld == 7 && p.b.ld == 7 && p.d.ld == 3 && p.hasBias &&
            p.needsCublasLt() && !p.needsCudnn() && p.d.alignment == 256,
        "linear GEMM: " + formatLibraryCall(p));
  expectPlan(linearPlan(false, 1, 16, 8), {Op::Matmul},
             "linear of one row without bias");
  p = expectPlan(linearPlan(true, 4, 6, 5, 10, 3), {Op::Matmul},
                 "linear on rows of stride 10 at offset 3");
  check(p.b.ld == 10 && p.b.alignment == 4,
        "linear strided rows: ld/alignment " + formatLibraryCall(p));

  Plan s = linearPlan(true);
  s.art.run[0].operands[1].strides = {1, 5};
  expectRefused(s,
                "operand 1 (in) has inner stride 5: cuBLASLt needs unit "
                "inner stride",
                "linear transposed input");

  s = linearPlan(true);
  s.art.run[0].operands[0].strides = {2, 1};
  expectRefused(s,
                "operand 0 (out) has row stride 2 below its 3 columns (rows "
                "overlap)",
                "linear overlapping rows");

  s = linearPlan(true);
  s.art.run[0].operands[2].sizes = {3, 6};
  expectRefused(s,
                "linear of in 5x7 by w 3x6 into 5x3: expected out[rows, N] "
                "= in[rows, K] . w[N, K]^T",
                "linear shapes");

  s = linearPlan(false);
  s.art.run[0].scalars = {};
  expectRefused(s,
                "linear takes 4 operands and 1 scalars (CpuKernelAbi.def), "
                "the step has 4 and 0",
                "linear scalar count");
}

void testPrecisionAndFormat() {
  Plan p = linearPlan(true);
  p.art.precision = CudaPrecision::TF32;
  LibraryCallPlan lp;
  Status s = p.describe(lp);
  check(s && lp.precision == CudaPrecision::TF32 &&
            formatLibraryCall(lp).find("tf32") != std::string::npos,
        "TF32 is carried: " + formatLibraryCall(lp));
  Plan c = convPlan(ConvSpec());
  s = c.describe(lp);
  std::string text = formatLibraryCall(lp);
  check(s && text == "conv2d in 1x8x9x7 -> out 1x6x9x7, filter 6x8x3x3, pad "
                     "1,1 stride 1,1 dilation 1,1 groups 1, bias, relu, fp32: "
                     "cudnnConvolutionBiasActivationForward (else "
                     "cudnnConvolutionForward, cudnnAddTensor(bias), "
                     "cudnnActivationForward)",
        "format: " + text);
  c.art.run[0].sources = {"a.py:1:2", "b.py:3:4", "c.py:5:6", "d.py:7:8"};
  check(describeLibraryStepName(c.art, "run", 0) ==
            "run[0] (library 'conv2d' at a.py:1:2, b.py:3:4, c.py:5:6 and 1 "
            "more)",
        "name: " + describeLibraryStepName(c.art, "run", 0));
}

} // namespace

int main() {
  testConv2d();
  testConv2dRefusals();
  testConvTranspose2d();
  testLinear();
  testPrecisionAndFormat();
  std::printf("fails=%d\n", fails);
  return fails ? 1 : 0;
}
