//===- GpuPipeline.h - the NVPTX lowering pipeline --------------*- C++ -*-===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_PIPELINES_GPUPIPELINE_H
#define GPUOPT_PIPELINES_GPUPIPELINE_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <string>

namespace mlir {
namespace gpuopt {

/// What the NVPTX back end generates, with its defaults: the one options
/// struct from gpuopt-compile's --cuda-* flags (tools/gpuopt-compile)
/// through --gpuopt-gpu-lowering (GpuLoweringOptions takes its defaults from
/// here) to the artifact (CudaCompileOptions::target).
struct CudaTargetOptions {
  /// NVPTX chips, `sm_NN[,sm_MM...]` (parseCudaChips): one kernel object
  /// each.
  std::string chip = "sm_90";
  /// NVPTX features: the PTX ISA version (8.0, CUDA 12.0, covers sm_50 to
  /// sm_90), raised per chip to what a newer chip needs (sm_100/101 8.6,
  /// sm_120 8.7, sm_103/121 8.8, sm_110 9.0).
  std::string features = "+ptx80";
  /// gpu-module-to-binary's format: "fatbin" (cubin and PTX), "bin" (cubin,
  /// assembled by the toolkit's ptxas), "isa" (PTX, which the driver
  /// compiles when loading it); the pipeline also takes "llvm".
  std::string format = "fatbin";
  /// CUDA toolkit root (bin/ptxas, nvvm/libdevice).
  std::string toolkit = "/usr/local/cuda";
  /// Threads per block of the elementwise-mapped kernels.
  int64_t blockSize = 256;
  /// Outputs per thread of the convolution and linear kernels, along a
  /// dimension their input does not depend on (--convert-parallel-loops-to-
  /// kernels' register-tile; 1: one output per thread). 4 from the ld/FMA
  /// ratios and registers measured in docs/CUDABackend.md.
  int64_t registerTile = 4;
  /// Convolutions and linear layers that are matrix products with at least
  /// 16 output rows as thread blocks of 256 computing output tiles from
  /// operand tiles in workgroup memory (--convert-parallel-loops-to-
  /// kernels' workgroup-tile); the others keep registerTile.
  bool workgroupTile = true;
  /// Blocks such a kernel should have at least: H200's 132 multiprocessors
  /// (smaller tiles where larger ones would leave some idle).
  int64_t workgroupTileMinBlocks = 132;
  /// Whether a reduction those kernels would take may fuse with a loop of
  /// another nest, untiled (--convert-parallel-loops-to-kernels'
  /// workgroup-tile-fuse-nests): one launch less per such pair.
  bool workgroupTileFuseNests = true;
  /// Whether those kernels load each step's operand tiles a step ahead
  /// (--convert-parallel-loops-to-kernels' workgroup-tile-prefetch).
  bool workgroupTilePrefetch = true;
  /// Whether their tiles have two buffers used in turn
  /// (--convert-parallel-loops-to-kernels' workgroup-tile-double-buffer).
  bool workgroupTileDoubleBuffer = true;
  /// Whether their FP32 operands that are plain reads of plan buffers are
  /// copied into the tiles without registers (--convert-parallel-loops-to-
  /// kernels' workgroup-tile-async-copy, PTX cp.async) where every chip is
  /// sm_80 or newer.
  bool workgroupTileAsyncCopy = true;
  /// Buffers of the tiles whose operands are all copied asynchronously
  /// (--convert-parallel-loops-to-kernels' workgroup-tile-stages): 3, the
  /// usual depth of cp.async pipelines on sm_80 and newer, where it fits.
  int64_t workgroupTileStages = 3;
  /// Outputs a thread of those kernels may compute
  /// (--convert-parallel-loops-to-kernels' workgroup-tile-max-thread-
  /// outputs): 64, the 8 x 8 thread tiles where they give enough blocks.
  int64_t workgroupTileMaxThreadOutputs = 64;
  /// Parts a deep reduction of those kernels may be split into
  /// (--convert-parallel-loops-to-kernels' workgroup-tile-split-k).
  int64_t workgroupTileSplitK = 8;
  /// LLVM optimization level of the kernels.
  int optLevel = 3;
  /// How convolutions and linear layers are computed: "generated" (kernels
  /// of the gpu.module), "library" (--convert-seg-to-cuda-library: the
  /// eligible ones as Library steps, cuDNN/cuBLASLt on the GPU) or "auto"
  /// (the eligible ones the cost model predicts faster as Library steps on
  /// gpuConvDevice).
  std::string gpuConv = "generated";
  /// The device model (data/devices.json) gpuConv "auto" predicts for.
  std::string gpuConvDevice = "h200";
  /// The arithmetic of the Library steps (CudaProgram.precision): "fp32"
  /// (strict) or "tf32" (tensor cores; 10-bit mantissa operands).
  std::string precision = "fp32";
};

/// The values of CudaTargetOptions::gpuConv and ::precision.
inline constexpr const char *kGpuConvModes[] = {"generated", "library", "auto"};
inline constexpr const char *kGpuPrecisions[] = {"fp32", "tf32"};

/// Whether `options`' gpuConv and precision are known and, where
/// `deviceGiven` (the user set gpuConvDevice), gpuConv is "auto" (the only
/// route that reads it); failure otherwise, with "gpu-conv must be
/// generated, library or auto, got 'x'" (or the same of gpu-precision), or
/// "gpu-conv-device applies to gpu-conv=auto, not gpu-conv=x", in `error`,
/// each option spelled with `dashes` before it ("--" for gpuopt-compile).
LogicalResult checkGpuConvOptions(const CudaTargetOptions &options,
                                  bool deviceGiven, StringRef dashes,
                                  std::string &error);

/// The chips of `sm_NN[,sm_MM...]` with every NN >= 50; failure otherwise,
/// with "must be sm_NN[,sm_MM...] with NN >= 50, got '<chips>'" in `error`
/// (the caller names what it parsed). The one parser of a chip list.
FailureOr<SmallVector<std::string>> parseCudaChips(StringRef chips,
                                                   std::string &error);

/// The kernel image kinds of the artifact and gpuopt-compile's
/// --cuda-format, with their gpu-module-to-binary format.
struct CudaImageFormat {
  /// "fatbin", "cubin" or "ptx".
  const char *image;
  /// "fatbin", "bin" or "isa".
  const char *format;
};
inline constexpr CudaImageFormat kCudaImageFormats[] = {
    {"fatbin", "fatbin"}, {"cubin", "bin"}, {"ptx", "isa"}};

/// Options of --gpuopt-gpu-lowering (defaults: CudaTargetOptions).
struct GpuLoweringOptions : public PassPipelineOptions<GpuLoweringOptions> {
  Option<std::string> chip{
      *this, "chip",
      llvm::cl::desc("NVPTX target chips, comma-separated (sm_90,sm_86): "
                     "one kernel object per chip"),
      llvm::cl::init(CudaTargetOptions().chip)};
  Option<std::string> features{
      *this, "features",
      llvm::cl::desc("NVPTX target features; sm_90 needs +ptx80 or newer, "
                     "and a +ptxNN older than a chip needs is raised to its "
                     "minimum (sm_120: +ptx87)"),
      llvm::cl::init(CudaTargetOptions().features)};
  Option<std::string> format{
      *this, "format",
      llvm::cl::desc("Kernel object format: bin (cubin, through ptxas), isa "
                     "(PTX), fatbin (cubin and PTX) or llvm"),
      llvm::cl::init(CudaTargetOptions().format)};
  Option<std::string> toolkit{
      *this, "toolkit",
      llvm::cl::desc("CUDA toolkit root holding bin/ptxas and libdevice"),
      llvm::cl::init(CudaTargetOptions().toolkit)};
  Option<int64_t> blockSize{
      *this, "block-size",
      llvm::cl::desc("Threads per block of the elementwise-mapped kernels"),
      llvm::cl::init(CudaTargetOptions().blockSize)};
  Option<int64_t> registerTile{
      *this, "register-tile",
      llvm::cl::desc("Outputs per thread of the convolution and linear "
                     "kernels (1: one per thread)"),
      llvm::cl::init(CudaTargetOptions().registerTile)};
  Option<bool> workgroupTile{
      *this, "workgroup-tile",
      llvm::cl::desc("Convolutions and linear layers as block tiles staged "
                     "in workgroup memory (false: register tiles only)"),
      llvm::cl::init(CudaTargetOptions().workgroupTile)};
  Option<bool> workgroupTileFuseNests{
      *this, "workgroup-tile-fuse-nests",
      llvm::cl::desc("A reduction the workgroup tiles would take may fuse "
                     "with a loop of another nest, untiled (false: its own "
                     "kernel, tiled)"),
      llvm::cl::init(CudaTargetOptions().workgroupTileFuseNests)};
  Option<bool> workgroupTilePrefetch{
      *this, "workgroup-tile-prefetch",
      llvm::cl::desc("Workgroup tiles load each step's operands into "
                     "registers during the step before (false: at the step)"),
      llvm::cl::init(CudaTargetOptions().workgroupTilePrefetch)};
  Option<bool> workgroupTileDoubleBuffer{
      *this, "workgroup-tile-double-buffer",
      llvm::cl::desc("Workgroup tiles have two buffers used in turn, one "
                     "barrier per step (false: one buffer, two barriers)"),
      llvm::cl::init(CudaTargetOptions().workgroupTileDoubleBuffer)};
  Option<bool> workgroupTileAsyncCopy{
      *this, "workgroup-tile-async-copy",
      llvm::cl::desc("Workgroup tiles copy plain operand reads from "
                     "global to workgroup memory without registers (PTX "
                     "cp.async) where every chip is sm_80 or newer"),
      llvm::cl::init(CudaTargetOptions().workgroupTileAsyncCopy)};
  Option<int64_t> workgroupTileStages{
      *this, "workgroup-tile-stages",
      llvm::cl::desc("Buffers of the workgroup tiles whose operands are all "
                     "copied asynchronously (at least 2)"),
      llvm::cl::init(CudaTargetOptions().workgroupTileStages)};
  Option<int64_t> workgroupTileMaxThreadOutputs{
      *this, "workgroup-tile-max-thread-outputs",
      llvm::cl::desc("Outputs a thread of a workgroup tile may compute (at "
                     "least 4; 16: 4 x 4 thread tiles at most)"),
      llvm::cl::init(CudaTargetOptions().workgroupTileMaxThreadOutputs)};
  Option<int64_t> workgroupTileSplitK{
      *this, "workgroup-tile-split-k",
      llvm::cl::desc("Parts (a power of two) a deep reduction of a workgroup "
                     "tile may be split into (1: never)"),
      llvm::cl::init(CudaTargetOptions().workgroupTileSplitK)};
  Option<bool> serialize{
      *this, "serialize",
      llvm::cl::desc("Serialize the kernels into a gpu.binary; false stops "
                     "at the NVVM/LLVM dialects, for inspection"),
      llvm::cl::init(true)};
  Option<int> optLevel{*this, "opt-level",
                       llvm::cl::desc("LLVM optimization level of the kernels"),
                       llvm::cl::init(CudaTargetOptions().optLevel)};
  Option<std::string> gpuConv{
      *this, "gpu-conv",
      llvm::cl::desc("Convolutions and linear layers: generated (kernels), "
                     "library (the eligible ones as library calls, "
                     "--convert-seg-to-cuda-library) or auto (those the "
                     "cost model predicts faster as library calls)"),
      llvm::cl::init(CudaTargetOptions().gpuConv)};
  Option<std::string> gpuConvDevice{
      *this, "gpu-conv-device",
      llvm::cl::desc("gpu-conv=auto: the device model to predict for"),
      llvm::cl::init(CudaTargetOptions().gpuConvDevice)};
  Option<std::string> precision{
      *this, "gpu-precision",
      llvm::cl::desc("Arithmetic of the library calls: fp32 or tf32"),
      llvm::cl::init(CudaTargetOptions().precision)};

  /// The target options these give.
  CudaTargetOptions getTargetOptions() const;
};

/// Adds the first half of the NVPTX lowering to a module-level `pm`:
/// with options.gpuConv "library" or "auto" --convert-seg-to-cuda-library,
/// then
/// --convert-seg-to-linalg, elementwise fusion, bufferization (results become
/// out-parameters), linalg to parallel loops and
/// --convert-parallel-loops-to-kernels. The host functions then only allocate
/// buffers and launch the kernels of one gpu.module.
LogicalResult buildGpuKernelPipeline(OpPassManager &pm,
                                     const CudaTargetOptions &options);

/// Adds the second half: attaches the NVVM target, lowers the gpu.module to
/// the NVVM/LLVM dialects (kernel memrefs as bare pointers) and, with
/// `serialize`, serializes it into a gpu.binary in options.format. Host
/// functions stay at memref level. Failure, with the message in `error`,
/// for a chip list parseCudaChips refuses.
LogicalResult buildGpuBinaryPipeline(OpPassManager &pm,
                                     const CudaTargetOptions &options,
                                     bool serialize, std::string &error);

/// Adds the host build of the kernels (the CUDA emulation, docs/
/// CUDABackend.md) to a module-level `pm` that runs on a module holding a
/// copy of the gpu.module of buildGpuKernelPipeline's output:
/// --convert-gpu-kernels-to-host with bounds-checks (every host kernel takes
/// the violation record as its last argument), then the LLVM lowering of the
/// CPU path's loops (memrefs as bare pointers, math through libm).
void buildGpuHostPipeline(OpPassManager &pm);

/// Registers --gpuopt-gpu-lowering (both halves).
void registerGpuPipelines();

} // namespace gpuopt
} // namespace mlir

#endif // GPUOPT_PIPELINES_GPUPIPELINE_H
