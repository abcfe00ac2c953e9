//===- CudaLibraryPlan.cpp - Library steps as cuDNN/cuBLASLt calls --------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// describeLibraryStep (CudaLibraryPlan.h): the operands and scalars of a
// Library step, in CpuKernelAbi.def order, checked and turned into the
// geometry and call sequence of cuDNN or cuBLASLt. Nothing here touches a
// GPU or a vendor library, so the unit test runs it anywhere.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Runtime/CudaLibraryPlan.h"

#include "gpuopt/Runtime/CpuKernelAbi.h"

#include <algorithm>
#include <climits>

using namespace gpuopt::runtime;

namespace {

/// The CpuKernelAbi.def arguments of `kernel`: memref ranks and the number
/// of scalars.
void abiCounts(CpuKernel kernel, std::vector<int> &ranks, size_t &scalars) {
  const CpuKernelSignature &sig = getCpuKernelSignature(kernel);
  scalars = 0;
  for (int i = 0; i < sig.numArgs; ++i) {
    if (sig.args[i].rank == 0)
      ++scalars;
    else
      ranks.push_back(sig.args[i].rank);
  }
}

std::string dimsText(const int64_t *dims, size_t n) {
  std::string s;
  for (size_t i = 0; i < n; ++i)
    s += (i ? "x" : "") + std::to_string(dims[i]);
  return s;
}

std::string dimsText(const std::vector<int64_t> &dims) {
  return dimsText(dims.data(), dims.size());
}

/// The element range [first, last] a non-empty view touches.
void viewSpan(const CudaOperand &o, int64_t &first, int64_t &last) {
  first = o.offset;
  last = o.offset;
  for (size_t i = 0; i < o.sizes.size(); ++i)
    last += (o.sizes[i] - 1) * o.strides[i];
}

/// Whether `o` is dense row-major (a dimension of size 1 may have any
/// stride: it is never stepped over).
bool isDense(const CudaOperand &o) {
  int64_t expect = 1;
  for (size_t i = o.sizes.size(); i-- > 0;) {
    if (o.sizes[i] != 1 && o.strides[i] != expect)
      return false;
    expect *= o.sizes[i];
  }
  return true;
}

unsigned addressAlignment(uint64_t byteAddress) {
  unsigned a = 256;
  while (a > 1 && byteAddress % a != 0)
    a /= 2;
  return a;
}

/// Checks and converts one step; every message starts with `where`.
struct Translator {
  const CudaArtifact &art;
  const CudaStep &step;
  LibraryCallPlan &out;

  Status fail(const std::string &why) const {
    return Status::error(out.where + ": " + why);
  }

  /// Operand `i` (named `name`) as a checked view; `required` refuses an
  /// empty one.
  Status view(size_t i, const char *name, bool required) const {
    const CudaOperand &o = step.operands[i];
    std::string what =
        "operand " + std::to_string(i) + " (" + std::string(name) + ")";
    if (o.empty()) {
      if (required)
        return fail(what + " is empty (absent), but the routine needs it");
      return Status::ok();
    }
    if (o.buffer >= art.buffers.size())
      return fail(what + " names buffers[" + std::to_string(o.buffer) +
                  "], which does not exist");
    const CudaBuffer &b = art.buffers[o.buffer];
    if (b.dtype != DType::F32)
      return fail(what + " is a view of " + describeCudaBuffer(art, o.buffer) +
                  ", which is not f32");
    if (o.offset < 0)
      return fail(what + " has a negative offset");
    for (size_t d = 0; d < o.sizes.size(); ++d) {
      if (o.sizes[d] < 0 || o.strides[d] < 0)
        return fail(what + " has a negative size or stride (sizes " +
                    dimsText(o.sizes) + ", strides " + dimsText(o.strides) +
                    ")");
      if (o.sizes[d] > INT_MAX || o.strides[d] > INT_MAX)
        return fail(what +
                    " has a size or stride beyond the int range of "
                    "cuDNN and cuBLASLt (sizes " +
                    dimsText(o.sizes) + ", strides " + dimsText(o.strides) +
                    ")");
    }
    int64_t first, last;
    viewSpan(o, first, last);
    if (static_cast<uint64_t>(last) >= b.bytes / 4)
      return fail(what + " (sizes " + dimsText(o.sizes) + ", strides " +
                  dimsText(o.strides) + ", offset " + std::to_string(o.offset) +
                  ") reaches element " + std::to_string(last) + " of " +
                  describeCudaBuffer(art, o.buffer) + ", which holds " +
                  std::to_string(b.bytes / 4));
    return Status::ok();
  }

  /// Refuses a view of `i` that shares elements with the written operand 0
  /// (the libraries' outputs may not alias their inputs).
  Status disjointFromOutput(size_t i, const char *name) const {
    const CudaOperand &o = step.operands[i], &w = step.operands[0];
    if (o.empty() || o.buffer != w.buffer)
      return Status::ok();
    int64_t f0, l0, f1, l1;
    viewSpan(w, f0, l0);
    viewSpan(o, f1, l1);
    if (f1 > l0 || f0 > l1)
      return Status::ok();
    return fail("operand " + std::to_string(i) + " (" + name +
                ") overlaps the output (operand 0) in " +
                describeCudaBuffer(art, w.buffer) +
                ": the library writes its output while it reads its inputs");
  }

  LibraryTensor tensor(size_t i) const {
    const CudaOperand &o = step.operands[i];
    LibraryTensor t;
    t.buffer = o.buffer;
    t.offset = o.offset;
    std::copy(o.sizes.begin(), o.sizes.end(), t.dims);
    t.packed = isDense(o);
    if (t.packed) {
      t.strides[3] = 1;
      t.strides[2] = t.dims[3];
      t.strides[1] = t.dims[2] * t.dims[3];
      t.strides[0] = t.dims[1] * t.dims[2] * t.dims[3];
    } else {
      std::copy(o.strides.begin(), o.strides.end(), t.strides);
    }
    return t;
  }

  LibraryMatrix matrix(size_t i) const {
    const CudaOperand &o = step.operands[i];
    LibraryMatrix m;
    m.buffer = o.buffer;
    m.offset = o.offset;
    // Row-major [r, c] with row stride s is column-major c x r with ld s.
    m.rows = o.sizes[1];
    m.cols = o.sizes[0];
    m.ld = o.sizes[0] == 1 ? std::max(o.strides[0], o.sizes[1]) : o.strides[0];
    m.alignment = addressAlignment(art.buffers[o.buffer].offset +
                                   static_cast<uint64_t>(o.offset) * 4);
    return m;
  }

  Status weight(size_t i) {
    const CudaOperand &w = step.operands[i];
    if (!isDense(w))
      return fail("operand " + std::to_string(i) +
                  " (w) is not packed (sizes " + dimsText(w.sizes) +
                  ", strides " + dimsText(w.strides) +
                  "): the library route takes contiguous weights");
    out.weightBuffer = w.buffer;
    out.weightOffset = w.offset;
    std::copy(w.sizes.begin(), w.sizes.end(), out.filter);
    return Status::ok();
  }

  Status bias(size_t i, bool present, int64_t channels) {
    out.hasBias = present;
    if (!present)
      return Status::ok();
    const CudaOperand &b = step.operands[i];
    if (b.empty())
      return fail("the step has a bias, but operand " + std::to_string(i) +
                  " (bias) is empty");
    if (Status s = view(i, "bias", true); !s)
      return s;
    if (b.sizes[0] != channels)
      return fail("the bias has " + std::to_string(b.sizes[0]) +
                  " elements for " + std::to_string(channels) +
                  " output channels");
    if (b.sizes[0] != 1 && b.strides[0] != 1)
      return fail("the bias has stride " + std::to_string(b.strides[0]) +
                  ": the library route takes a contiguous bias");
    out.biasBuffer = b.buffer;
    out.biasOffset = b.offset;
    out.biasSize = b.sizes[0];
    return Status::ok();
  }

  /// The staging of non-packed tensors and the staged element counts.
  void stage() {
    if (!out.in.packed) {
      out.ops.insert(out.ops.begin(), LibraryOp::StageInput);
      out.stagedInElements = out.in.elements();
    }
    if (!out.out.packed) {
      out.ops.push_back(LibraryOp::UnstageOutput);
      out.stagedOutElements = out.out.elements();
    }
    if (out.fallback.empty())
      return;
    if (!out.in.packed)
      out.fallback.insert(out.fallback.begin(), LibraryOp::StageInput);
    if (!out.out.packed)
      out.fallback.push_back(LibraryOp::UnstageOutput);
  }

  Status conv2d() {
    const std::vector<int64_t> &sc = step.scalars;
    int64_t strideH = sc[0], strideW = sc[1], padH = sc[2], padW = sc[3],
            dilH = sc[4], dilW = sc[5], groups = sc[6], frames = sc[7],
            flags = sc[8], activation = sc[9];
    for (size_t i = 5; i < 8; ++i)
      if (!step.operands[i].empty())
        return fail(std::string(i == 7 ? "a per-channel frame shift (offT)"
                                       : "a per-channel shift (offH/offW)") +
                    " is not executed by cuDNN: the compiler keeps such "
                    "convolutions on generated kernels");
    if (frames != 0)
      return fail("frames = " + std::to_string(frames) +
                  ": frame-shifted convolutions are not executed by cuDNN");
    if (flags & ~(kConvHasBias | kConvHasResidual | kConvZeroMode))
      return fail("unknown flag bits " + std::to_string(flags));
    if (activation != kActNone && activation != kActRelu)
      return fail("activation code " + std::to_string(activation) +
                  ": the library route fuses none or relu");
    out.relu = activation == kActRelu;
    out.hasResidual = flags & kConvHasResidual;
    if (out.relu && out.hasResidual)
      return fail("relu with a residual: the library route adds a residual "
                  "only without activation");
    if (strideH < 1 || strideW < 1 || dilH < 1 || dilW < 1 || padH < 0 ||
        padW < 0 || groups < 1)
      return fail("invalid geometry: stride " + std::to_string(strideH) + "," +
                  std::to_string(strideW) + " pad " + std::to_string(padH) +
                  "," + std::to_string(padW) + " dilation " +
                  std::to_string(dilH) + "," + std::to_string(dilW) +
                  " groups " + std::to_string(groups));
    if (std::max({strideH, strideW, padH, padW, dilH, dilW, groups}) > INT_MAX)
      return fail("geometry beyond cuDNN's int range");
    for (size_t i = 0; i < 3; ++i)
      if (Status s = view(i, i == 0 ? "out" : i == 1 ? "in" : "w", true); !s)
        return s;
    if (out.hasResidual) {
      if (Status s = view(4, "residual", true); !s)
        return s;
    }
    if (Status s = weight(2); !s)
      return s;
    out.in = tensor(1);
    out.out = tensor(0);
    const int64_t *x = out.in.dims, *y = out.out.dims, *f = out.filter;
    if (x[1] % groups != 0 || f[0] % groups != 0 || f[1] * groups != x[1])
      return fail("channels do not agree with groups " +
                  std::to_string(groups) + ": in " + dimsText(x, 4) + ", w " +
                  dimsText(f, 4));
    int64_t expect[4] = {x[0], f[0], 0, 0};
    for (int d = 0; d < 2; ++d) {
      int64_t st = d ? strideW : strideH, p = d ? padW : padH,
              dl = d ? dilW : dilH;
      int64_t span = x[2 + d] + 2 * p - dl * (f[2 + d] - 1) - 1;
      expect[2 + d] = span < 0 ? 0 : span / st + 1;
    }
    if (!std::equal(expect, expect + 4, y))
      return fail("the output is " + dimsText(y, 4) +
                  ", but a convolution of " + dimsText(x, 4) + " by " +
                  dimsText(f, 4) + " (stride " + std::to_string(strideH) + "," +
                  std::to_string(strideW) + ", pad " + std::to_string(padH) +
                  "," + std::to_string(padW) + ", dilation " +
                  std::to_string(dilH) + "," + std::to_string(dilW) +
                  ") gives " + dimsText(expect, 4));
    if (Status s = bias(3, flags & kConvHasBias, f[0]); !s)
      return s;
    out.pad[0] = padH;
    out.pad[1] = padW;
    out.stride[0] = strideH;
    out.stride[1] = strideW;
    out.dilation[0] = dilH;
    out.dilation[1] = dilW;
    out.groups = groups;
    if (Status s = disjointFromOutput(1, "in"); !s)
      return s;
    if (out.hasResidual) {
      const CudaOperand &r = step.operands[4], &o = step.operands[0];
      if (r.sizes != o.sizes)
        return fail("the residual is " + dimsText(r.sizes) + ", the output " +
                    dimsText(o.sizes));
      out.residual = tensor(4);
      out.residualInPlace =
          r.buffer == o.buffer && r.offset == o.offset &&
          (r.strides == o.strides || (out.residual.packed && out.out.packed));
      if (!out.residualInPlace)
        if (Status s = disjointFromOutput(4, "residual"); !s)
          return s;
      // The convolution adds to the residual copied into its output.
      out.convBeta = 1;
      if (!out.residualInPlace || !out.out.packed)
        out.ops.push_back(LibraryOp::CopyResidual);
    }
    if (out.relu && out.hasBias) {
      // cuDNN's fused form (any algorithm with RELU); its unfused
      // equivalent is kept for a cuDNN that refuses it at load.
      out.ops.push_back(LibraryOp::ConvBiasRelu);
      out.fallback = {LibraryOp::ConvForward, LibraryOp::AddBias,
                      LibraryOp::Relu};
    } else {
      out.ops.push_back(LibraryOp::ConvForward);
      if (out.hasBias)
        out.ops.push_back(LibraryOp::AddBias);
      if (out.relu)
        out.ops.push_back(LibraryOp::Relu);
    }
    stage();
    return Status::ok();
  }

  Status convTranspose2d() {
    int64_t hasBias = step.scalars[0];
    if (hasBias != 0 && hasBias != 1)
      return fail("hasBias must be 0 or 1, got " + std::to_string(hasBias));
    for (size_t i = 0; i < 3; ++i)
      if (Status s = view(i, i == 0 ? "out" : i == 1 ? "in" : "w", true); !s)
        return s;
    if (Status s = weight(2); !s)
      return s;
    out.in = tensor(1);
    out.out = tensor(0);
    const int64_t *x = out.in.dims, *y = out.out.dims, *f = out.filter;
    int64_t expect[4] = {x[0], f[1], x[2] * f[2], x[3] * f[3]};
    if (f[0] != x[1] || !std::equal(expect, expect + 4, y))
      return fail("conv_transpose2d of " + dimsText(x, 4) + " by " +
                  dimsText(f, 4) + " into " + dimsText(y, 4) +
                  ": the library route executes kernel == stride, no "
                  "padding, groups 1 (output " +
                  dimsText(expect, 4) + ")");
    if (Status s = bias(3, hasBias == 1, f[1]); !s)
      return s;
    if (Status s = disjointFromOutput(1, "in"); !s)
      return s;
    // The convolution mapping out to in: stride = kernel, no padding.
    out.stride[0] = f[2];
    out.stride[1] = f[3];
    out.ops.push_back(LibraryOp::ConvBackwardData);
    if (out.hasBias)
      out.ops.push_back(LibraryOp::AddBias);
    stage();
    return Status::ok();
  }

  Status linear() {
    int64_t hasBias = step.scalars[0];
    if (hasBias != 0 && hasBias != 1)
      return fail("hasBias must be 0 or 1, got " + std::to_string(hasBias));
    const char *names[3] = {"out", "in", "w"};
    for (size_t i = 0; i < 3; ++i) {
      if (Status s = view(i, names[i], true); !s)
        return s;
      const CudaOperand &o = step.operands[i];
      if (o.sizes[1] != 1 && o.strides[1] != 1)
        return fail("operand " + std::to_string(i) + " (" + names[i] +
                    ") has inner stride " + std::to_string(o.strides[1]) +
                    ": cuBLASLt needs unit inner stride");
      if (o.sizes[0] > 1 && o.strides[0] < o.sizes[1])
        return fail("operand " + std::to_string(i) + " (" + names[i] +
                    ") has row stride " + std::to_string(o.strides[0]) +
                    " below its " + std::to_string(o.sizes[1]) +
                    " columns (rows overlap)");
    }
    const CudaOperand &y = step.operands[0], &x = step.operands[1],
                      &w = step.operands[2];
    if (x.sizes[0] != y.sizes[0] || x.sizes[1] != w.sizes[1] ||
        w.sizes[0] != y.sizes[1])
      return fail("linear of in " + dimsText(x.sizes) + " by w " +
                  dimsText(w.sizes) + " into " + dimsText(y.sizes) +
                  ": expected out[rows, N] = in[rows, K] . w[N, K]^T");
    if (Status s = bias(3, hasBias == 1, w.sizes[0]); !s)
      return s;
    if (Status s = disjointFromOutput(1, "in"); !s)
      return s;
    if (Status s = disjointFromOutput(2, "w"); !s)
      return s;
    out.a = matrix(2);
    out.b = matrix(1);
    out.d = matrix(0);
    out.m = w.sizes[0];
    out.n = x.sizes[0];
    out.k = x.sizes[1];
    out.ops.push_back(LibraryOp::Matmul);
    return Status::ok();
  }

  Status run() {
    CpuKernel kernel;
    if (step.library == "conv2d") {
      out.routine = LibraryRoutine::Conv2d;
      kernel = CpuKernel::conv2d;
    } else if (step.library == "conv_transpose2d") {
      out.routine = LibraryRoutine::ConvTranspose2d;
      kernel = CpuKernel::conv_transpose2d;
    } else if (step.library == "linear") {
      out.routine = LibraryRoutine::Linear;
      kernel = CpuKernel::linear;
    } else {
      return fail("library routine '" + step.library +
                  "' is not executed by the GPU runtime (cuDNN: conv2d, "
                  "conv_transpose2d; cuBLASLt: linear)");
    }
    std::vector<int> ranks;
    size_t scalars = 0;
    abiCounts(kernel, ranks, scalars);
    if (step.operands.size() != ranks.size() || step.scalars.size() != scalars)
      return fail(step.library + " takes " + std::to_string(ranks.size()) +
                  " operands and " + std::to_string(scalars) +
                  " scalars (CpuKernelAbi.def), the step has " +
                  std::to_string(step.operands.size()) + " and " +
                  std::to_string(step.scalars.size()));
    for (size_t i = 0; i < ranks.size(); ++i) {
      const CudaOperand &o = step.operands[i];
      if (o.sizes.size() != static_cast<size_t>(ranks[i]) ||
          o.strides.size() != o.sizes.size())
        return fail("operand " + std::to_string(i) + " has " +
                    std::to_string(o.sizes.size()) + " sizes and " +
                    std::to_string(o.strides.size()) + " strides, the ABI " +
                    std::to_string(ranks[i]) + " dimensions");
    }
    out.precision = art.precision;
    switch (out.routine) {
    case LibraryRoutine::Conv2d:
      return conv2d();
    case LibraryRoutine::ConvTranspose2d:
      return convTranspose2d();
    case LibraryRoutine::Linear:
      return linear();
    }
    return fail("unreachable routine");
  }
};

std::string opsText(const std::vector<LibraryOp> &ops) {
  std::string s;
  for (LibraryOp op : ops)
    s += (s.empty() ? "" : ", ") + std::string(libraryOpCall(op));
  return s;
}

} // namespace

const char *gpuopt::runtime::libraryOpCall(LibraryOp op) {
  switch (op) {
  case LibraryOp::StageInput:
    return "cudnnTransformTensor(in)";
  case LibraryOp::CopyResidual:
    return "cudnnTransformTensor(residual)";
  case LibraryOp::ConvForward:
    return "cudnnConvolutionForward";
  case LibraryOp::ConvBiasRelu:
    return "cudnnConvolutionBiasActivationForward";
  case LibraryOp::ConvBackwardData:
    return "cudnnConvolutionBackwardData";
  case LibraryOp::AddBias:
    return "cudnnAddTensor(bias)";
  case LibraryOp::Relu:
    return "cudnnActivationForward";
  case LibraryOp::UnstageOutput:
    return "cudnnTransformTensor(out)";
  case LibraryOp::Matmul:
    return "cublasLtMatmul";
  }
  return "?";
}

uint64_t LibraryCallPlan::scratchBytes() const {
  auto aligned = [](int64_t elements) {
    return (static_cast<uint64_t>(elements) * 4 + 255) / 256 * 256;
  };
  return aligned(stagedInElements) + aligned(stagedOutElements);
}

std::string gpuopt::runtime::describeLibraryStepName(const CudaArtifact &art,
                                                     const char *plan,
                                                     size_t index) {
  const CudaStep &s = (plan[0] == 'i' ? art.init : art.run)[index];
  std::string at;
  constexpr size_t kShown = 3;
  for (size_t i = 0; i < s.sources.size() && i < kShown; ++i)
    at += (i ? ", " : " at ") + s.sources[i];
  if (s.sources.size() > kShown)
    at += " and " + std::to_string(s.sources.size() - kShown) + " more";
  if (s.sources.empty() && !s.loc.empty())
    at = " at " + s.loc;
  return std::string(plan) + "[" + std::to_string(index) + "] (library '" +
         s.library + "'" + at + ")";
}

Status gpuopt::runtime::describeLibraryStep(const CudaArtifact &art,
                                            const char *plan, size_t index,
                                            LibraryCallPlan &out) {
  const std::vector<CudaStep> &steps = plan[0] == 'i' ? art.init : art.run;
  out = LibraryCallPlan();
  if (index >= steps.size() || !steps[index].isLibrary)
    return Status::error(std::string(plan) + "[" + std::to_string(index) +
                         "] is not a Library step");
  out.where = describeLibraryStepName(art, plan, index);
  Translator t{art, steps[index], out};
  return t.run();
}

std::string gpuopt::runtime::formatLibraryCall(const LibraryCallPlan &p) {
  const char *precision = p.precision == CudaPrecision::TF32 ? "tf32" : "fp32";
  if (p.routine == LibraryRoutine::Linear)
    return "linear in " + std::to_string(p.n) + "x" + std::to_string(p.k) +
           " -> out " + std::to_string(p.n) + "x" + std::to_string(p.m) +
           " (GEMM m " + std::to_string(p.m) + " n " + std::to_string(p.n) +
           " k " + std::to_string(p.k) + ", A transposed, lda " +
           std::to_string(p.a.ld) + " ldb " + std::to_string(p.b.ld) + " ldd " +
           std::to_string(p.d.ld) + ")" + (p.hasBias ? ", bias epilogue" : "") +
           ", " + precision + ": " + opsText(p.ops);
  std::string s =
      std::string(p.routine == LibraryRoutine::Conv2d ? "conv2d"
                                                      : "conv_transpose2d") +
      " in " + dimsText(p.in.dims, 4) + (p.in.packed ? "" : " (strided)") +
      " -> out " + dimsText(p.out.dims, 4) +
      (p.out.packed ? "" : " (strided)") + ", filter " + dimsText(p.filter, 4) +
      ", pad " + std::to_string(p.pad[0]) + "," + std::to_string(p.pad[1]) +
      " stride " + std::to_string(p.stride[0]) + "," +
      std::to_string(p.stride[1]) + " dilation " +
      std::to_string(p.dilation[0]) + "," + std::to_string(p.dilation[1]) +
      " groups " + std::to_string(p.groups) + (p.hasBias ? ", bias" : "") +
      (p.relu ? ", relu" : "") + (p.hasResidual ? ", residual" : "") + ", " +
      precision + ": " + opsText(p.ops);
  if (!p.fallback.empty())
    s += " (else " + opsText(p.fallback) + ")";
  return s;
}
