//===- CudaLibraries.h - cuDNN and cuBLASLt for Library steps ---*- C++ -*-===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// The GPU runtime's execution of Library steps (CudaLibraryPlan.h): cuDNN 9
// (convolutions) and cuBLASLt (linear), opened with dlopen only when the
// plan has steps that need them, their functions typed from the toolkit's
// headers (no link-time dependency, as CudaModel.cpp does for libcuda).
// Internal to runtime/cuda: CudaModel creates one CudaLibrarySteps per
// model.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_RUNTIME_CUDA_CUDALIBRARIES_H
#define GPUOPT_RUNTIME_CUDA_CUDALIBRARIES_H

#include "gpuopt/Runtime/CudaLibraryPlan.h"

#include <cuda.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace gpuopt {
namespace runtime {

/// The phrase every "cannot open a vendor library" message holds
/// (gpuopt-cuda-run maps it to the exit code of a missing GPU).
extern const char kVendorLibraryMissing[];

/// Device memory for the libraries (CudaModel's driver calls).
struct CudaLibraryMemory {
  std::function<Status(uint64_t bytes, CUdeviceptr &out)> alloc;
  std::function<void(CUdeviceptr)> free;
};

/// How the convolution algorithms are chosen.
struct CudaLibraryOptions {
  /// cudnnGet*Algorithm_v7 (heuristics, no trial runs) instead of
  /// cudnnFind*AlgorithmEx (times each algorithm on the arena's buffers).
  bool heuristics = false;
};

/// The Library steps of one artifact, from their call plans to their calls.
class CudaLibrarySteps {
public:
  /// Describes every Library step of `art` (describeLibraryStep) and opens
  /// the libraries they need; no GPU is touched. `out` stays null when the
  /// plan has no Library step.
  static Status prepare(const CudaArtifact &art,
                        std::unique_ptr<CudaLibrarySteps> &out);
  ~CudaLibrarySteps();
  CudaLibrarySteps(const CudaLibrarySteps &) = delete;
  CudaLibrarySteps &operator=(const CudaLibrarySteps &) = delete;

  /// Builds every step's descriptors (host-side calls only, no handle) and
  /// checks them against the plan: cuDNN's output size of each
  /// convolution must be the step's. Once (load calls it too).
  Status buildDescriptors();

  /// At load, on the model's context: handles on `stream`, the algorithm
  /// of each convolution and GEMM (keeping only those whose math fits the
  /// program's precision), one workspace and one staging scratch, then one
  /// trial call of every step (which falls back from a fused call cuDNN
  /// refuses, and loads the libraries' kernels before any graph capture).
  /// Run before the init steps: the trial writes only the steps' outputs.
  Status load(CUstream stream, CUdeviceptr arena, const CudaLibraryMemory &mem,
              const CudaLibraryOptions &options);

  /// Queues the calls of step `index` of `plan` ("init" or "run") on the
  /// stream; allocates nothing (so it can be captured into a CUDA graph).
  Status enqueue(const char *plan, size_t index);

  const LibraryCallPlan *plan(const char *plan, size_t index) const;
  bool needsCudnn() const { return cudnnNeeded; }
  bool needsCublasLt() const { return cublasLtNeeded; }
  /// Bytes of the workspace and the staging scratch allocated at load.
  uint64_t workspaceBytes() const { return workspaceSize; }
  uint64_t scratchBytes() const { return scratchSize; }

  struct Call;

private:
  CudaLibrarySteps() = default;
  Status chooseAlgorithms(const CudaLibraryOptions &options,
                          CUdeviceptr findSpace, uint64_t findBytes);
  Status run(Call &c, const std::vector<LibraryOp> &ops);

  const CudaArtifact *art = nullptr;
  bool cudnnNeeded = false, cublasLtNeeded = false, descriptorsBuilt = false;
  /// Per plan step: its call (null for a kernel step).
  std::vector<std::unique_ptr<Call>> init, run_;
  struct Handles;
  std::unique_ptr<Handles> handles;
  uint64_t workspaceSize = 0, scratchSize = 0;
};

/// Opens cuDNN (GPUOPT_CUDNN_LIBRARY, else libcudnn.so.9) for `neededBy`
/// (a step's description); the error names the step, the names tried,
/// dlerror and where PyTorch's wheel ships the library. No GPU needed.
Status openCudnn(const std::string &neededBy);
/// Opens cuBLASLt (GPUOPT_CUBLASLT_LIBRARY, else libcublasLt.so.13, then
/// libcublasLt.so.12) for `neededBy`, likewise.
Status openCublasLt(const std::string &neededBy);

/// The versions of the opened libraries (cudnnGetVersion,
/// cublasLtGetVersion), 0 when not opened.
size_t cudnnVersion();
size_t cublasLtVersion();

} // namespace runtime
} // namespace gpuopt

#endif // GPUOPT_RUNTIME_CUDA_CUDALIBRARIES_H
