//===- CudaLibraryPlan.h - Library steps as cuDNN/cuBLASLt calls -*- C++
//-*-===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// The translation of a Library step of a CUDA launch plan (CudaModel.h:
// CudaStep::isLibrary) into the vendor-library calls that compute it: which
// routine, the dims and strides of every tensor, the convolution's
// geometry, the GEMM's m/n/k, transposes and leading dimensions, the fused
// epilogue and the call sequence. Pure: no GPU, no cuDNN, no cuBLASLt; the
// GPU runtime (runtime/cuda/CudaLibraries.cpp) turns a plan into
// descriptors and calls. What the library route does not execute (the
// contract in docs/CUDABackend.md, "Vendor libraries") is refused here,
// each message naming the step.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_RUNTIME_CUDALIBRARYPLAN_H
#define GPUOPT_RUNTIME_CUDALIBRARYPLAN_H

#include "gpuopt/Runtime/CudaModel.h"

#include <cstdint>
#include <string>
#include <vector>

namespace gpuopt {
namespace runtime {

/// The routines a Library step may name (CpuKernelAbi.def kernel names).
enum class LibraryRoutine { Conv2d, ConvTranspose2d, Linear };

/// A 4-D NCHW view of a plan buffer (offset and strides in elements).
struct LibraryTensor {
  unsigned buffer = 0;
  int64_t offset = 0;
  int64_t dims[4] = {0, 0, 0, 0};
  int64_t strides[4] = {0, 0, 0, 0};
  /// Fully packed NCHW (strides are the dense ones): cuDNN reads or writes
  /// it in place. Any other view is staged through packed scratch.
  bool packed = true;
  int64_t elements() const { return dims[0] * dims[1] * dims[2] * dims[3]; }
};

/// A column-major matrix of cuBLASLt over a plan buffer: `rows` x `cols`
/// with leading dimension `ld` (elements), starting at `offset`.
struct LibraryMatrix {
  unsigned buffer = 0;
  int64_t offset = 0;
  int64_t rows = 0, cols = 0, ld = 0;
  /// The largest power of two (<= 256) dividing the byte address: the
  /// arena is 256-byte aligned, so this is the buffer offset's and the
  /// view offset's (cuBLASLt's heuristic is told, it assumes 256).
  unsigned alignment = 256;
};

/// One library call of a step's sequence, in order.
enum class LibraryOp {
  /// cudnnTransformTensor: the strided input into packed scratch.
  StageInput,
  /// cudnnTransformTensor: the residual into the convolution's output
  /// (output or its scratch), which the convolution then adds to (beta 1).
  CopyResidual,
  /// cudnnConvolutionForward.
  ConvForward,
  /// cudnnConvolutionBiasActivationForward with CUDNN_ACTIVATION_RELU.
  ConvBiasRelu,
  /// cudnnConvolutionBackwardData (conv_transpose2d).
  ConvBackwardData,
  /// cudnnAddTensor of the [1, C, 1, 1] bias onto the output.
  AddBias,
  /// cudnnActivationForward (ReLU) in place on the output.
  Relu,
  /// cudnnTransformTensor: packed scratch into the strided output.
  UnstageOutput,
  /// cublasLtMatmul (bias in its epilogue when there is one).
  Matmul,
};

/// The library functions `op` calls ("cudnnAddTensor", ...).
const char *libraryOpCall(LibraryOp op);

/// How one Library step is computed.
struct LibraryCallPlan {
  LibraryRoutine routine = LibraryRoutine::Conv2d;
  /// "run[3] (library 'conv2d' at a.py:4:9)": the step, for messages.
  std::string where;
  CudaPrecision precision = CudaPrecision::FP32;

  // conv2d (x = in, y = out) and conv_transpose2d (the backward data of
  // the convolution mapping out to in: dy = in, dx = out).
  LibraryTensor in, out, residual;
  /// The filter as cuDNN's K x C x kh x kw (packed): conv2d's OIHW with C
  /// the channels per group; conv_transpose2d's [in, out, kh, kw].
  unsigned weightBuffer = 0;
  int64_t weightOffset = 0;
  int64_t filter[4] = {0, 0, 0, 0};
  bool hasBias = false;
  unsigned biasBuffer = 0;
  int64_t biasOffset = 0, biasSize = 0;
  int64_t pad[2] = {0, 0}, stride[2] = {1, 1}, dilation[2] = {1, 1};
  int64_t groups = 1;
  bool relu = false, hasResidual = false;
  /// The residual is the output's own view: the convolution adds to it.
  bool residualInPlace = false;
  /// beta of the convolution call: 1 when it adds to a residual.
  float convBeta = 0;
  /// Packed scratch elements for a staged input and a staged output.
  int64_t stagedInElements = 0, stagedOutElements = 0;

  // linear: out[rows, N] = in[rows, K] . w[N, K]^T (+ bias), row-major,
  // computed column-major as D[N, rows] = op(A)[N, K] . B[K, rows]:
  // A = w (K x N, transposed), B = in (K x rows), D = out (N x rows).
  LibraryMatrix a, b, d;
  int64_t m = 0, n = 0, k = 0;
  bool transA = true, transB = false;

  /// The calls, in order; `fallback` (empty when none) is the unfused
  /// sequence the runtime uses when cuDNN refuses the fused call at load.
  std::vector<LibraryOp> ops, fallback;

  bool needsCudnn() const { return routine != LibraryRoutine::Linear; }
  bool needsCublasLt() const { return routine == LibraryRoutine::Linear; }
  /// Bytes of packed scratch the step's staging needs (each part 256-byte
  /// aligned).
  uint64_t scratchBytes() const;
};

/// Translates step `index` of plan `plan` ("init" or "run") of `art`, a
/// Library step, into `out`. Refuses (an error naming the step) what the
/// GPU runtime does not execute: an unknown routine, wrong operand or
/// scalar counts, a view outside its buffer or with a negative stride,
/// sizes beyond cuDNN's int range, conv2d with per-channel shifts, frames,
/// an activation other than none/relu or relu with a residual, a
/// non-packed weight, dims that do not agree (channels, groups, output
/// size), conv_transpose2d outside kernel == stride / no padding / groups
/// 1, a linear operand without unit inner stride, a non-unit bias stride.
Status describeLibraryStep(const CudaArtifact &art, const char *plan,
                           size_t index, LibraryCallPlan &out);

/// "run[3] (library 'conv2d' at a.py:4:9)".
std::string describeLibraryStepName(const CudaArtifact &art, const char *plan,
                                    size_t index);

/// One line for --inspect: routine, shapes, geometry, precision, calls.
std::string formatLibraryCall(const LibraryCallPlan &plan);

} // namespace runtime
} // namespace gpuopt

#endif // GPUOPT_RUNTIME_CUDALIBRARYPLAN_H
