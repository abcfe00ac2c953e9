//===- LibraryStepBuilders.h - Library steps built in memory ----*- C++ -*-===//
//
// Part of the gpuopt project.
//
// Small artifacts with one Library step (conv2d, conv_transpose2d, linear),
// for the tests of the library route (CudaLibraryPlanTest.cpp,
// CudaLibrariesTest.cpp): the artifact reader refuses Library steps until
// the compiler side writes them.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_UNITTESTS_RUNTIME_LIBRARYSTEPBUILDERS_H
#define GPUOPT_UNITTESTS_RUNTIME_LIBRARYSTEPBUILDERS_H

#include "gpuopt/Runtime/CpuKernelAbi.h"
#include "gpuopt/Runtime/CudaLibraryPlan.h"

#include <string>
#include <vector>

namespace gpuopt::runtime::testing {

using Dims = std::vector<int64_t>;

inline Dims denseStrides(const Dims &sizes) {
  Dims s(sizes.size(), 1);
  for (size_t i = sizes.size() - 1; i-- > 0;)
    s[i] = s[i + 1] * sizes[i + 1];
  return s;
}

/// An artifact with one Library step under construction.
struct Plan {
  CudaArtifact art;
  CudaStep step;

  unsigned buffer(const char *kind, int64_t elements) {
    CudaBuffer b;
    b.kind = kind;
    b.shape = {elements};
    b.bytes = static_cast<uint64_t>(elements) * 4;
    b.offset = (art.arenaBytes + 255) / 256 * 256;
    art.arenaBytes = b.offset + b.bytes;
    art.buffers.push_back(b);
    return art.buffers.size() - 1;
  }
  static CudaOperand view(unsigned buffer, Dims sizes, Dims strides = {},
                          int64_t offset = 0) {
    CudaOperand o;
    o.buffer = buffer;
    o.offset = offset;
    o.strides = strides.empty() ? denseStrides(sizes) : strides;
    o.sizes = std::move(sizes);
    return o;
  }
  static CudaOperand absent(size_t rank) {
    CudaOperand o;
    o.sizes.assign(rank, 0);
    o.strides.assign(rank, 1);
    return o;
  }
  /// A dense operand in a fresh buffer of its own.
  CudaOperand fresh(const char *kind, Dims sizes) {
    int64_t n = 1;
    for (int64_t s : sizes)
      n *= s;
    return view(buffer(kind, n), std::move(sizes));
  }
  void finish(const char *library, std::vector<CudaOperand> operands,
              std::vector<int64_t> scalars) {
    step.isLibrary = true;
    step.library = library;
    step.operands = std::move(operands);
    step.scalars = std::move(scalars);
    step.loc = "m.py:7:3";
    art.run.push_back(step);
  }
  Status describe(LibraryCallPlan &p) const {
    return describeLibraryStep(art, "run", 0, p);
  }
};

// conv2d scalars: strideH, strideW, padH, padW, dilH, dilW, groups, frames,
// flags, activation.
inline std::vector<int64_t> convScalars(int64_t stride, int64_t pad,
                                        int64_t dil, int64_t groups,
                                        int64_t flags, int64_t act) {
  return {stride, stride, pad, pad, dil, dil, groups, 0, flags, act};
}

/// A conv2d step: in N x C x H x W dense in its buffer unless `inView`.
struct ConvSpec {
  int64_t n = 1, c = 8, h = 9, w = 7, oc = 6, k = 3;
  int64_t stride = 1, pad = 1, dil = 1, groups = 1;
  bool bias = true, residual = false, residualInPlace = false;
  int64_t act = kActRelu;
  /// Views into larger buffers (a channel slice of a concatenation).
  bool stridedIn = false, stridedOut = false;
};

inline int64_t convOut(int64_t x, int64_t k, int64_t stride, int64_t pad,
                       int64_t dil) {
  return (x + 2 * pad - dil * (k - 1) - 1) / stride + 1;
}

inline Plan convPlan(const ConvSpec &s) {
  Plan p;
  int64_t oh = convOut(s.h, s.k, s.stride, s.pad, s.dil),
          ow = convOut(s.w, s.k, s.stride, s.pad, s.dil);
  CudaOperand in, out;
  if (s.stridedIn) {
    // Channels [2, 2 + c) of a N x (c + 3) x H x W buffer.
    unsigned b = p.buffer("temp", s.n * (s.c + 3) * s.h * s.w);
    in = Plan::view(b, {s.n, s.c, s.h, s.w},
                    denseStrides({s.n, s.c + 3, s.h, s.w}), 2 * s.h * s.w);
  } else {
    in = p.fresh("input", {s.n, s.c, s.h, s.w});
  }
  if (s.stridedOut) {
    unsigned b = p.buffer("output", s.n * (s.oc + 2) * oh * ow);
    out = Plan::view(b, {s.n, s.oc, oh, ow},
                     denseStrides({s.n, s.oc + 2, oh, ow}), oh * ow);
  } else {
    out = p.fresh("output", {s.n, s.oc, oh, ow});
  }
  CudaOperand w = p.fresh("param", {s.oc, s.c / s.groups, s.k, s.k});
  CudaOperand bias = s.bias ? p.fresh("param", {s.oc}) : Plan::absent(1);
  CudaOperand res = Plan::absent(4);
  if (s.residual)
    res = s.residualInPlace ? out : p.fresh("temp", {s.n, s.oc, oh, ow});
  int64_t flags =
      (s.bias ? kConvHasBias : 0) | (s.residual ? kConvHasResidual : 0);
  p.finish("conv2d",
           {out, in, w, bias, res, Plan::absent(1), Plan::absent(1),
            Plan::absent(1)},
           convScalars(s.stride, s.pad, s.dil, s.groups, flags, s.act));
  return p;
}

inline Plan transposePlan(bool bias, int64_t k = 2, int64_t kw = 2) {
  Plan p;
  int64_t n = 2, c = 6, h = 5, w = 4, oc = 3;
  CudaOperand out = p.fresh("output", {n, oc, h * k, w * kw});
  CudaOperand in = p.fresh("input", {n, c, h, w});
  CudaOperand wt = p.fresh("param", {c, oc, k, kw});
  CudaOperand b = bias ? p.fresh("param", {oc}) : Plan::absent(1);
  p.finish("conv_transpose2d", {out, in, wt, b}, {bias ? 1 : 0});
  return p;
}

inline Plan linearPlan(bool bias, int64_t rows = 5, int64_t k = 7,
                       int64_t n = 3, int64_t inRowStride = 0,
                       int64_t inOffset = 0) {
  Plan p;
  CudaOperand out = p.fresh("output", {rows, n});
  CudaOperand in;
  if (inRowStride) {
    unsigned b = p.buffer("input", rows * inRowStride + inOffset);
    in = Plan::view(b, {rows, k}, {inRowStride, 1}, inOffset);
  } else {
    in = p.fresh("input", {rows, k});
  }
  CudaOperand w = p.fresh("param", {n, k});
  CudaOperand b = bias ? p.fresh("param", {n}) : Plan::absent(1);
  p.finish("linear", {out, in, w, b}, {bias ? 1 : 0});
  return p;
}

} // namespace gpuopt::runtime::testing

#endif // GPUOPT_UNITTESTS_RUNTIME_LIBRARYSTEPBUILDERS_H
