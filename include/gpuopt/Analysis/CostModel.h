//===- CostModel.h - static cost of a seg graph -----------------*- C++ -*-===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// SegCostAnalysis walks a function of seg ops and records, per op, what it
// computes (MACs, FLOPs, the thop-compatible MAC count the papers report),
// the parameters it reads and the kernels it costs in two executions:
//
//  - Eager: PyTorch eager mode on CUDA, one ATen call per op, with PyTorch's
//    view semantics (permute/slice/viewable reshape are free, a non-viewable
//    reshape is a copy) and its extra kernels (cuDNN's separate bias add, the
//    contiguous copy before a library kernel, ...).
//  - Compiled: gpuopt's compiled code, one kernel per op, layout ops folded
//    into addressing, chains of elementwise ops fused.
//
// Ops computed from parameters and constants only (seg.param,
// seg.fold_batch_norm, seg.shift_offsets, ...) are load-time computations and
// cost nothing per inference. LatencyModel turns the kernels into time on a
// DeviceModel. docs/CostModel.md states every assumption.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_ANALYSIS_COSTMODEL_H
#define GPUOPT_ANALYSIS_COSTMODEL_H

#include "gpuopt/Analysis/DeviceModel.h"
#include "gpuopt/Analysis/WorkgroupTiling.h"

#include "mlir/IR/Operation.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cassert>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlir {
namespace gpuopt {

/// How a graph is executed.
enum class ExecMode { Eager, Compiled };

/// `eager` or `compiled`.
llvm::StringRef stringifyExecMode(ExecMode mode);

/// The implicit-GEMM shape of a dense contraction: `batch` independent
/// (M x K) · (K x N) products.
struct GemmShape {
  int64_t batch = 1;
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
  /// The product gpuopt's generated workgroup tiles cut, when it is not
  /// n x m (a convolution's output channels, split by BM, x its pixels; a
  /// transposed convolution's taps x input pixels): `tileRows` x `tileCols`
  /// (a linear's rows x its output features). 0: n x m.
  int64_t tileRows = 0;
  int64_t tileCols = 0;

  /// The workgroup tiles' rows (M: the operand that does not index the
  /// output's innermost dimension) and columns (N).
  int64_t getTileRows() const { return tileRows ? tileRows : n; }
  int64_t getTileCols() const { return tileRows ? tileCols : m; }
};

/// One kernel launch.
struct KernelCost {
  double flops = 0;
  /// Bytes read plus bytes written, each tensor once.
  double bytes = 0;
  /// Set for GEMM-like kernels (convolutions, linears).
  std::optional<GemmShape> gemm;
};

/// The cost of one op.
struct OpCost {
  Operation *op = nullptr;
  /// True multiply-accumulates of convolutions and linears.
  int64_t macs = 0;
  /// thop's count: conv/linear MACs, 4·numel per BatchNorm/LayerNorm output,
  /// a transposed convolution counted as output numel × C_in × kernel area.
  int64_t thopMacs = 0;
  /// All arithmetic: 2 × MACs plus the elementwise work (bias, activations,
  /// normalizations, pooling, interpolation).
  double flops = 0;
  /// Elements of the load-time operands (weights) the op reads.
  int64_t params = 0;
  /// Computed once per loaded checkpoint, not per inference.
  bool loadTime = false;
  /// False for ops the model does not know (costed as one memory-bound
  /// kernel reading the operands and writing the results).
  bool modeled = true;
  /// The kernels of each execution mode.
  llvm::SmallVector<KernelCost, 2> eager;
  llvm::SmallVector<KernelCost, 1> compiled;
  /// In compiled mode, the index of the op this elementwise op is fused into
  /// (its kernel is counted there).
  std::optional<size_t> fusedInto;
  /// `fp32`, `fp16`, `bf16` or `fp64`: the element type of the result.
  std::string precision;

  llvm::ArrayRef<KernelCost> getKernels(ExecMode mode) const {
    return mode == ExecMode::Eager ? llvm::ArrayRef<KernelCost>(eager)
                                   : llvm::ArrayRef<KernelCost>(compiled);
  }
};

/// Static costs of the seg ops of one function (any op nested in
/// `funcOp`, terminators excluded, in program order).
class SegCostAnalysis {
public:
  explicit SegCostAnalysis(Operation *funcOp);

  llvm::ArrayRef<OpCost> getOps() const { return ops; }
  /// Elements of the distinct learned parameters (seg.param by name, the
  /// BatchNorm running statistics excluded).
  int64_t getParams() const { return params; }
  /// Elements of the BatchNorm running statistics (buffers in PyTorch).
  int64_t getBuffers() const { return buffers; }
  /// The leading dimension of the first argument (1 without arguments).
  int64_t getBatch() const { return batch; }
  int64_t getMacs() const;
  int64_t getThopMacs() const;
  double getFlops() const;
  /// Ops the model does not know.
  int64_t getNumUnmodeled() const;

private:
  std::vector<OpCost> ops;
  int64_t params = 0;
  int64_t buffers = 0;
  int64_t batch = 1;
};

/// How the compiled column runs convolutions and linear layers on a GPU.
enum class ConvRoute {
  /// Every GEMM-like kernel at the device's compute efficiency and library
  /// tiles, as in eager mode (the generic model).
  Model,
  /// gpuopt-compile --gpu-conv=generated: the workgroup-tiled kernels.
  Generated,
  /// --gpu-conv=library: cuDNN/cuBLASLt calls where the library route
  /// covers the op (isCudaLibraryEligible), generated kernels elsewhere.
  Library,
  /// --gpu-conv=auto: per eligible op the route predicted faster.
  Auto,
};

/// The route of `name`: `model` (or empty), `generated`, `library`, `auto`.
std::optional<ConvRoute> parseConvRoute(llvm::StringRef name);
llvm::StringRef stringifyConvRoute(ConvRoute route);

/// Whether the CUDA library route computes `op` (a seg.conv2d,
/// seg.conv_transpose2d or seg.linear, or a seg.fused_conv2d without a
/// shift whose activation is none, or ReLU without a residual); the others
/// stay generated (--convert-seg-to-cuda-library).
bool isCudaLibraryEligible(Operation *op);

/// What bounds a kernel, an op or a graph.
enum class Bound { Compute, Memory, Launch };

/// `compute`, `memory` or `launch`.
llvm::StringRef stringifyBound(Bound bound);

/// Predicted time of kernels, split by what bounds each kernel.
struct TimeSplit {
  int64_t kernels = 0;
  double flops = 0;
  double bytes = 0;
  /// Sum of the compute times of the compute-bound kernels.
  double computeSeconds = 0;
  /// Sum of the memory times of the memory-bound kernels.
  double memorySeconds = 0;
  /// Kernels × launch cost.
  double launchSeconds = 0;

  double getSeconds() const {
    return computeSeconds + memorySeconds + launchSeconds;
  }
  Bound getBound() const;
  TimeSplit &operator+=(const TimeSplit &other);
};

/// A convolution's or linear layer's compiled kernels on one route.
struct ConvPrediction {
  /// A library call (else generated kernels).
  bool library = false;
  /// The generated kernel's workgroup tiling; none where the workgroup
  /// tiles leave the product to register tiles.
  std::optional<WorkgroupTiling> tiling;
  TimeSplit split;
};

/// Predicts the kernels on `device`. A kernel takes
/// max(FLOPs / attainable FLOP/s, bytes / attainable bandwidth); each launch
/// adds the device's launch cost of `mode`. The peak is the one of
/// `precision`, or of the op's element type when `precision` is empty.
class LatencyModel {
public:
  LatencyModel(const DeviceModel &device, llvm::StringRef precision)
      : device(device), precision(precision.str()) {}

  /// The precision whose peak `op` uses.
  llvm::StringRef getPrecision(const OpCost &op) const;
  /// Seconds per launch in `mode`.
  double getLaunchSeconds(ExecMode mode) const;
  /// The fraction of the attainable peak a GEMM of this shape reaches with
  /// the device's tiles and units (tile and wave quantization).
  double getGemmEfficiency(const GemmShape &gemm) const;
  /// Seconds of one kernel of `op` (no launch) when its FLOPs run at
  /// `efficiency` times the peak of its precision:
  /// max(FLOPs / rate, bytes / attainable bandwidth).
  double getKernelSeconds(const OpCost &op, const KernelCost &kernel,
                          double efficiency) const;
  /// Compiled mode predicts convolutions and linear layers as `route`
  /// runs them, generated ones with the tiling `limits` give (default:
  /// ConvRoute::Model).
  void setConvRoute(ConvRoute route, const WorkgroupTilingLimits &limits) {
    assert(limits.minBlocks >= 1 && limits.maxThreadOutputs >= 4 &&
           limits.maxSplits >= 1 && "workgroup tiling limits out of range");
    convRoute = route;
    tilingLimits = limits;
  }
  ConvRoute getConvRoute() const { return convRoute; }
  const WorkgroupTilingLimits &getTilingLimits() const { return tilingLimits; }
  /// The workgroup tiling of generated GEMM-like kernel `k` of `op`; none
  /// for a product the workgroup tiles leave to register tiles (not f32,
  /// batched, fewer than 16 tile rows or 8 reduction steps) or no GEMM.
  std::optional<WorkgroupTiling> getGeneratedTiling(const OpCost &op,
                                                    const KernelCost &k) const;
  /// Kernel `k` of `op` as gpuopt's generated kernel: FLOPs at the
  /// generated compute efficiency times the workgroup tiling's utilization
  /// of the units; a split reduction writes its parts' sums (4 bytes each)
  /// instead of the output and a second kernel reads them, adds them and
  /// writes the output. Launches included.
  ConvPrediction predictGenerated(const OpCost &op, const KernelCost &k) const;
  /// Kernel `k` of `op` as a cuDNN/cuBLASLt call: FLOPs at the compute
  /// efficiency times the library tiles' quantization or the generated
  /// tiling's utilization, whichever is better (the libraries also have
  /// small tiles and split-K); its launch plus the library call's host
  /// cost.
  ConvPrediction predictLibraryCall(const OpCost &op,
                                    const KernelCost &k) const;
  /// `op` (a convolution or linear layer: MACs and one compiled kernel) in
  /// compiled mode on the route set by setConvRoute; none for other ops or
  /// ConvRoute::Model.
  std::optional<ConvPrediction> predictConv(const OpCost &op) const;
  /// The kernels of `op` in `mode`, launches included.
  TimeSplit predict(const OpCost &op, ExecMode mode) const;
  /// The kernels of every op of `analysis` in `mode`.
  TimeSplit predict(const SegCostAnalysis &analysis, ExecMode mode) const;

  const DeviceModel &getDevice() const { return device; }

private:
  /// Adds one kernel of `op` to `split`, its FLOPs at `efficiency` times
  /// the peak (no launch).
  void addKernel(const OpCost &op, const KernelCost &kernel, double efficiency,
                 TimeSplit &split) const;

  const DeviceModel &device;
  std::string precision;
  ConvRoute convRoute = ConvRoute::Model;
  WorkgroupTilingLimits tilingLimits;
};

} // namespace gpuopt
} // namespace mlir

#endif // GPUOPT_ANALYSIS_COSTMODEL_H
