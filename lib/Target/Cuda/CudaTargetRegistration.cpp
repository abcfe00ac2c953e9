//===- CudaTargetRegistration.cpp - gpuopt-compile --target=cuda ----------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// The flags of --target=cuda and their translation into CudaCompileOptions;
// their defaults are CudaTargetOptions' (include/gpuopt/Pipelines/
// GpuPipeline.h).
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Target/Cuda/CudaTarget.h"
#include "gpuopt/Target/TargetRegistry.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::gpuopt;
namespace cl = llvm::cl;

namespace {
/// The --cuda-format name of gpu-module-to-binary's `format`.
const char *imageName(StringRef format) {
  for (const CudaImageFormat &f : kCudaImageFormats)
    if (format == f.format)
      return f.image;
  return "";
}

class CudaCompileTarget : public CompileTarget {
public:
  explicit CudaCompileTarget(cl::OptionCategory &category)
      : arch("cuda-arch",
             cl::desc("--target=cuda: GPU architectures, sm_NN[,sm_MM] "
                      "(sm_90: H100/H200, sm_86: RTX 30xx/A10); one "
                      "kernel image each"),
             cl::init(CudaTargetOptions().chip), cl::cat(category)),
        format("cuda-format",
               cl::desc("--target=cuda: kernel images, fatbin (cubin "
                        "and PTX), cubin (assembled by ptxas now) or "
                        "ptx (compiled by the driver at load)"),
               cl::init(imageName(CudaTargetOptions().format)),
               cl::cat(category)),
        toolkit("cuda-toolkit",
                cl::desc("--target=cuda: CUDA toolkit root (ptxas, "
                         "libdevice)"),
                cl::init(CudaTargetOptions().toolkit), cl::cat(category)),
        blockSize("cuda-block-size",
                  cl::desc("--target=cuda: threads per block of the kernels"),
                  cl::init(CudaTargetOptions().blockSize), cl::cat(category)),
        registerTile(
            "cuda-register-tile",
            cl::desc("--target=cuda: outputs per thread of the convolution "
                     "and linear kernels, sharing their input loads (1: one "
                     "output per thread)"),
            cl::init(CudaTargetOptions().registerTile), cl::cat(category)),
        workgroupTile(
            "cuda-workgroup-tile",
            cl::desc("--target=cuda: convolutions and linear layers as "
                     "thread blocks computing output tiles from operand "
                     "tiles staged in workgroup memory (false: register "
                     "tiles only)"),
            cl::init(CudaTargetOptions().workgroupTile), cl::cat(category)),
        workgroupTileFuseNests(
            "cuda-workgroup-tile-fuse-nests",
            cl::desc("--target=cuda: a reduction the workgroup tiles would "
                     "take may fuse with a loop of another nest, untiled "
                     "(false: its own kernel, tiled; one launch more)"),
            cl::init(CudaTargetOptions().workgroupTileFuseNests),
            cl::cat(category)),
        workgroupTilePrefetch(
            "cuda-workgroup-tile-prefetch",
            cl::desc("--target=cuda: workgroup tiles load each step's "
                     "operands into registers while the step before "
                     "multiplies (false: at the step)"),
            cl::init(CudaTargetOptions().workgroupTilePrefetch),
            cl::cat(category)),
        workgroupTileDoubleBuffer(
            "cuda-workgroup-tile-double-buffer",
            cl::desc("--target=cuda: workgroup tiles have two buffers used "
                     "in turn, one barrier per step (false: one buffer, two "
                     "barriers per step)"),
            cl::init(CudaTargetOptions().workgroupTileDoubleBuffer),
            cl::cat(category)),
        workgroupTileAsyncCopy(
            "cuda-workgroup-tile-async-copy",
            cl::desc("--target=cuda: workgroup tiles copy plain operand "
                     "reads from global to workgroup memory without "
                     "registers (PTX cp.async) where every chip is sm_80 or "
                     "newer (false: through registers)"),
            cl::init(CudaTargetOptions().workgroupTileAsyncCopy),
            cl::cat(category)),
        workgroupTileStages(
            "cuda-workgroup-tile-stages",
            cl::desc("--target=cuda: buffers of the workgroup tiles whose "
                     "operands are all copied asynchronously, that many "
                     "minus one steps in flight where they fit 48 KiB (at "
                     "least 2)"),
            cl::init(CudaTargetOptions().workgroupTileStages),
            cl::cat(category)),
        workgroupTileMaxThreadOutputs(
            "cuda-workgroup-tile-max-thread-outputs",
            cl::desc("--target=cuda: outputs a thread of a workgroup tile "
                     "may compute (at least 4; 16: 4 x 4 thread tiles at "
                     "most, 32: 8 x 4, 64: 8 x 8)"),
            cl::init(CudaTargetOptions().workgroupTileMaxThreadOutputs),
            cl::cat(category)),
        workgroupTileSplitK(
            "cuda-workgroup-tile-split-k",
            cl::desc("--target=cuda: parts (a power of two) a deep reduction "
                     "of a workgroup tile may be split into where its blocks "
                     "would leave multiprocessors idle or run 2 x 2 thread "
                     "tiles; a second kernel adds them (1: never)"),
            cl::init(CudaTargetOptions().workgroupTileSplitK),
            cl::cat(category)),
        gpuConv("gpu-conv",
                cl::desc("--target=cuda: convolutions and linear layers as "
                         "generated kernels (generated), where eligible as "
                         "cuDNN/cuBLASLt calls (library), or as those calls "
                         "where the cost model predicts them faster (auto)"),
                cl::init(CudaTargetOptions().gpuConv), cl::cat(category)),
        gpuConvDevice("gpu-conv-device",
                      cl::desc("--target=cuda --gpu-conv=auto: the device of "
                               "data/devices.json the cost model predicts for"),
                      cl::init(CudaTargetOptions().gpuConvDevice),
                      cl::cat(category)),
        precision("gpu-precision",
                  cl::desc("--target=cuda: arithmetic of the workgroup-tiled "
                           "kernels and the library calls, fp32 (strict) or "
                           "tf32 (tensor cores)"),
                  cl::init(CudaTargetOptions().precision), cl::cat(category)),
        hostImage("cuda-host-image",
                  cl::desc("--target=cuda: also embed the kernels built for "
                           "the host CPU, which gpuopt-cuda-run --emulate "
                           "runs without a GPU"),
                  cl::init(CudaCompileOptions().hostImage), cl::cat(category)),
        writeKernels("cuda-write-kernels",
                     cl::desc("--target=cuda: write the gpu.module the host "
                              "image is built from to this file (MLIR)"),
                     cl::value_desc("file"), cl::cat(category)),
        hostKernels("cuda-host-kernels",
                    cl::desc("--target=cuda: build the host image from this "
                             "file's gpu.module @kernels instead (hand-edited "
                             "kernels, emulated with this compile's plan)"),
                    cl::value_desc("file"), cl::cat(category)) {}

  SmallVector<cl::Option *> flags() override {
    return {&arch,
            &format,
            &toolkit,
            &blockSize,
            &registerTile,
            &workgroupTile,
            &workgroupTileFuseNests,
            &workgroupTilePrefetch,
            &workgroupTileDoubleBuffer,
            &workgroupTileAsyncCopy,
            &workgroupTileStages,
            &workgroupTileMaxThreadOutputs,
            &workgroupTileSplitK,
            &gpuConv,
            &gpuConvDevice,
            &precision,
            &hostImage,
            &writeKernels,
            &hostKernels};
  }

  SmallVector<FlagFile> getFlagFiles() override {
    SmallVector<FlagFile> files;
    if (!writeKernels.empty())
      files.push_back({"--cuda-write-kernels", writeKernels, /*written=*/true});
    if (!hostKernels.empty())
      files.push_back({"--cuda-host-kernels", hostKernels, /*written=*/false});
    return files;
  }

  LogicalResult validateFlags(std::string &error) override {
    if (failed(parseCudaChips(arch, error))) {
      error = "--cuda-arch " + error;
      return failure();
    }
    if (registerTile < 1) {
      error = "--cuda-register-tile must be at least 1, got " +
              std::to_string(registerTile);
      return failure();
    }
    if (workgroupTileStages < 2) {
      error = "--cuda-workgroup-tile-stages must be at least 2, got " +
              std::to_string(workgroupTileStages);
      return failure();
    }
    if (workgroupTileSplitK < 1 ||
        !llvm::isPowerOf2_64(static_cast<uint64_t>(workgroupTileSplitK))) {
      error = "--cuda-workgroup-tile-split-k must be a power of two (1: no "
              "split), got " +
              std::to_string(workgroupTileSplitK);
      return failure();
    }
    if (workgroupTileMaxThreadOutputs < 4) {
      error = "--cuda-workgroup-tile-max-thread-outputs must be at least 4, "
              "got " +
              std::to_string(workgroupTileMaxThreadOutputs);
      return failure();
    }
    CudaTargetOptions conv;
    conv.gpuConv = gpuConv;
    conv.precision = precision;
    if (failed(checkGpuConvOptions(conv, gpuConvDevice.getNumOccurrences(),
                                   "--", error)))
      return failure();
    if (!findFormat()) {
      error =
          "--cuda-format must be fatbin, cubin or ptx, got '" + format + "'";
      return failure();
    }
    if (!hostImage && (!writeKernels.empty() || !hostKernels.empty())) {
      error = "--cuda-write-kernels and --cuda-host-kernels need "
              "--cuda-host-image";
      return failure();
    }
    return success();
  }

  LogicalResult compile(ModuleOp module,
                        const TargetCompileRequest &request) override {
    CudaCompileOptions options;
    options.entry = request.entry;
    options.pipeline = request.pipeline;
    options.outputPath = request.outputPath;
    options.target.chip = arch;
    options.target.format = findFormat()->format;
    options.target.toolkit = toolkit;
    options.target.blockSize = blockSize;
    options.target.registerTile = registerTile;
    options.target.workgroupTile = workgroupTile;
    options.target.workgroupTileFuseNests = workgroupTileFuseNests;
    options.target.workgroupTilePrefetch = workgroupTilePrefetch;
    options.target.workgroupTileDoubleBuffer = workgroupTileDoubleBuffer;
    options.target.workgroupTileAsyncCopy = workgroupTileAsyncCopy;
    options.target.workgroupTileStages = workgroupTileStages;
    options.target.workgroupTileMaxThreadOutputs =
        workgroupTileMaxThreadOutputs;
    options.target.workgroupTileSplitK = workgroupTileSplitK;
    options.target.gpuConv = gpuConv;
    options.target.gpuConvDevice = gpuConvDevice;
    options.target.precision = precision;
    options.hostImage = hostImage;
    options.writeKernels = writeKernels;
    options.hostKernels = hostKernels;
    return compileForCuda(module, options);
  }

private:
  const CudaImageFormat *findFormat() {
    const CudaImageFormat *f =
        llvm::find_if(kCudaImageFormats, [&](const CudaImageFormat &f) {
          return format == f.image;
        });
    return f == std::end(kCudaImageFormats) ? nullptr : f;
  }

  cl::opt<std::string> arch;
  cl::opt<std::string> format;
  cl::opt<std::string> toolkit;
  cl::opt<int64_t> blockSize;
  cl::opt<int64_t> registerTile;
  cl::opt<bool> workgroupTile;
  cl::opt<bool> workgroupTileFuseNests;
  cl::opt<bool> workgroupTilePrefetch;
  cl::opt<bool> workgroupTileDoubleBuffer;
  cl::opt<bool> workgroupTileAsyncCopy;
  cl::opt<int64_t> workgroupTileStages;
  cl::opt<int64_t> workgroupTileMaxThreadOutputs;
  cl::opt<int64_t> workgroupTileSplitK;
  cl::opt<std::string> gpuConv;
  cl::opt<std::string> gpuConvDevice;
  cl::opt<std::string> precision;
  cl::opt<bool> hostImage;
  cl::opt<std::string> writeKernels;
  cl::opt<std::string> hostKernels;
};
} // namespace

void mlir::gpuopt::registerCudaTarget() {
  registerTarget({"cuda", "NVIDIA GPUs", [](cl::OptionCategory &category) {
                    return std::make_unique<CudaCompileTarget>(category);
                  }});
}
