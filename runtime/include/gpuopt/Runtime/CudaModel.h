//===- CudaModel.h - run a compiled CUDA model ------------------*- C++ -*-===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// The CUDA runtime: loads an artifact of `gpuopt-compile --target=cuda`
// (runtime/include/gpuopt/Runtime/CudaArtifact.h), binds the weights from a
// safetensors file and runs the launch plan with the CUDA driver API. It
// builds with a C++17 compiler and the CUDA toolkit's headers only: the
// driver library (libcuda.so.1) is opened at run time, so a machine without
// an NVIDIA driver gets an error Status saying so, not a loader failure.
// Every driver call is checked. Library steps run through cuDNN 9 and
// cuBLASLt, opened the same way and only for plans that have such steps
// (runtime/cuda/CudaLibraries.h, docs/CUDABackend.md "Vendor libraries").
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_RUNTIME_CUDAMODEL_H
#define GPUOPT_RUNTIME_CUDAMODEL_H

#include "gpuopt/Runtime/Tensor.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace gpuopt {
namespace runtime {

/// One buffer of the launch plan.
struct CudaBuffer {
  std::string kind; // input, output, param, constant, temp
  std::string name; // seg.param name of a param buffer
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  uint64_t bytes = 0;
  uint64_t offset = 0;
};

/// One memref operand of a Library step: a strided view of a plan buffer
/// (offset and strides in elements). `sizes` holding a 0 means absent (no
/// buffer; `buffer` is 0).
struct CudaOperand {
  unsigned buffer = 0;
  int64_t offset = 0;
  std::vector<int64_t> sizes, strides;
  bool empty() const {
    for (int64_t s : sizes)
      if (s == 0)
        return true;
    return false;
  }
};

/// The arithmetic of Library steps (Artifact.fbs `Precision`).
enum class CudaPrecision { FP32, TF32 };

/// One step of the launch plan: a kernel launch, or a call of a vendor
/// library routine (Artifact.fbs `CudaStep`).
struct CudaStep {
  /// A Library step calls `library` (a CpuKernelAbi.def kernel name) with
  /// `operands` and `scalars`; its `args` are the distinct buffers of its
  /// operands (operand 0's first: the one it writes); `kernel`, `grid` and
  /// `block` are unused.
  bool isLibrary = false;
  std::string library;
  std::vector<CudaOperand> operands;
  std::vector<int64_t> scalars;
  unsigned kernel = 0;
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {1, 1, 1};
  std::vector<unsigned> args;
  std::string loc;
  /// The distinct source locations of the ops the launch computes.
  std::vector<std::string> sources;
};

/// One parameter of a kernel: a dense buffer of this dtype and size, and
/// how the kernel accesses it.
struct CudaKernelArg {
  DType dtype = DType::F32;
  uint64_t bytes = 0;
  bool reads = false, writes = false;
  /// Both read and written (the only in-place arguments).
  bool inPlace = false;
};

/// A kernel of the image and its signature.
struct CudaKernel {
  std::string name;
  std::vector<CudaKernelArg> args;
};

/// The kernels compiled for one chip.
struct CudaImage {
  std::string chip;   // sm_90, or host-x86_64 for a host-so image
  std::string format; // fatbin, cubin, ptx or host-so (CudaEmulator.h)
  std::vector<uint8_t> bytes;
  /// The chip's compute capability, e.g. 90.
  int computeCapability() const;
};

/// A parsed artifact (validated: every index and offset is in range).
struct CudaArtifact {
  std::string entry;
  std::vector<CudaImage> images;
  uint64_t arenaBytes = 0;
  std::vector<CudaBuffer> buffers;
  std::vector<unsigned> inputs, outputs;
  std::vector<CudaKernel> kernels;
  std::vector<CudaStep> init, run;
  CudaPrecision precision = CudaPrecision::FP32;
};

/// Artifacts larger than this are refused before reading (kernel images of
/// every zoo model take a few MiB).
constexpr uint64_t kMaxCudaArtifactBytes = 1ull << 30;

/// Reads and validates an artifact; needs no GPU. Only a regular file of at
/// most kMaxCudaArtifactBytes is read (a FIFO or device is refused, never
/// opened). `planChecks` as for parseCudaArtifact.
Status readCudaArtifact(const std::string &path, CudaArtifact &out,
                        bool planChecks = true);

/// Validates the `size` bytes of a whole artifact file: verifyArtifact
/// (Artifact.h: the FlatBuffers verifier and the checks every target shares)
/// first, then the CudaProgram (CudaArtifact.h); `what` (the path) starts
/// every message. Every step's arguments are checked against its kernel's
/// signature and every buffer lies inside the arena; the file must store a
/// checksum (Model.checksum; verifyArtifact compared it); then, with
/// `planChecks`, the plan's data flow (checkCudaPlan). Only the emulator
/// may skip the latter (to show what a refused plan computes): the former
/// are what make the plan safe to index and launch.
Status parseCudaArtifact(const uint8_t *bytes, size_t size,
                         const std::string &what, CudaArtifact &out,
                         bool planChecks = true);

/// The static checks of a read plan's data flow (CudaPlanCheck.cpp), walking
/// the init steps, then the run steps, over the bytes of the arena:
///   - every byte a launch reads was written before, through the same
///     buffer: by the weights file (params), the init steps (constants,
///     which persist), setInputs (inputs) or an earlier step of the same
///     plan; a byte last written through another buffer (arena space shared
///     by liveness) is a read of a dead buffer;
///   - a written argument overlaps no other argument of its launch, unless
///     both are the same buffer and in place;
///   - no step writes a param or an input, nor bytes that hold one; no run
///     step writes a constant or its bytes;
///   - at the end of the run steps every output holds what was written
///     through it.
/// Each violation is one message naming the plan, step, kernel and the
/// step's source locations (describeCudaStep); `path` starts it.
Status checkCudaPlan(const CudaArtifact &art, const std::string &path);

/// "run[3] (kernel 'k' at a.py:4:9, a.py:5:9)": a step of plan `plan`
/// ("init" or "run") for messages; at most three sources are listed (then
/// "and N more"), the step's `loc` when it records none.
std::string describeCudaStep(const CudaArtifact &art, const char *plan,
                             size_t index);

/// "buffers[3] (param 'enc.weight')", "buffers[0] (input 0)",
/// "buffers[7] (temp)": buffer `id` of `art` for messages.
std::string describeCudaBuffer(const CudaArtifact &art, unsigned id);

/// Checks that `weights` (read from `weightsPath`) hold every param buffer
/// of `art` with its dtype and shape, and with `strict` nothing else (but
/// training counters); the CUDA runtime and the emulator then copy each
/// param's tensor into its buffer.
struct SafetensorsFile;
Status checkCudaWeights(const CudaArtifact &art, const SafetensorsFile &weights,
                        const std::string &weightsPath, bool strict);

/// The image to load on a device of compute capability `cc` (e.g. 86): the
/// one built for it, else the newest PTX-carrying (fatbin, ptx) image of an
/// older chip, which the driver compiles; null when none fits. A host image
/// (format host-so, for the emulator) is never chosen.
const CudaImage *selectCudaImage(const CudaArtifact &art, int cc);

/// Driver, device and clocks, for reports.
struct CudaDeviceInfo {
  std::string name;
  int driverVersion = 0;
  int computeMajor = 0, computeMinor = 0;
  int multiprocessors = 0;
};

/// How CudaModel runs the plan.
struct CudaModelOptions {
  /// Waits for each launch (load-time and forward) to finish and reports an
  /// asynchronous fault (an illegal address, a trap) with the step, kernel
  /// and sources that caused it; without it a fault surfaces at the next
  /// synchronisation, naming no step. A debugging mode: every launch pays a
  /// round trip, and forwards never replay a CUDA graph. The environment
  /// variable GPUOPT_CUDA_SYNC_EACH_STEP=1 turns it on too (for programs
  /// that load models through the model API); 0 or unset leaves it as is.
  bool syncEachStep = false;
  /// Chooses the cuDNN algorithm of each Library step by cuDNN's
  /// heuristics (cudnnGet*Algorithm_v7) instead of timing every candidate
  /// on the arena's buffers at load (cudnnFind*AlgorithmEx, the default).
  bool libraryHeuristics = false;
};

/// Applies GPUOPT_CUDA_SYNC_EACH_STEP ("1": on, "0" or unset: as given) to
/// `options`; any other value is an error.
Status applyCudaEnvironment(CudaModelOptions &options);

/// A loaded model on one GPU: one device arena, the kernels, one stream.
class CudaModel {
public:
  /// Loads `artifactPath` onto GPU `device`, binds the weights of
  /// `weightsPath` by seg.param name (with `strict`, tensors of the file the
  /// model does not use are an error) and runs the load-time steps once.
  /// The artifact and its plan are checked (readCudaArtifact) and the
  /// weights bound before any driver call; `options` as amended by
  /// applyCudaEnvironment.
  static Status create(const std::string &artifactPath,
                       const std::string &weightsPath, bool strict, int device,
                       const CudaModelOptions &options,
                       std::unique_ptr<CudaModel> &out);
  static Status create(const std::string &artifactPath,
                       const std::string &weightsPath, bool strict, int device,
                       std::unique_ptr<CudaModel> &out) {
    return create(artifactPath, weightsPath, strict, device, CudaModelOptions(),
                  out);
  }
  ~CudaModel();
  CudaModel(const CudaModel &) = delete;
  CudaModel &operator=(const CudaModel &) = delete;

  const CudaArtifact &artifact() const { return art; }
  const CudaDeviceInfo &deviceInfo() const { return info; }

  /// Copies `inputs` (dense f32 of the declared shapes, in order) to the GPU.
  Status setInputs(const std::vector<const float *> &inputs);
  /// Launches the forward steps on the model's stream and waits; with
  /// `graph` (and without syncEachStep), replays a CUDA graph captured on
  /// first use.
  Status forward(bool graph);
  /// Copies the outputs back (dense f32 of the declared shapes).
  Status getOutputs(const std::vector<float *> &outputs);
  /// Times `runs` forwards after `warmup` untimed ones, each with CUDA events
  /// around it; `ms` receives one duration per run.
  Status time(int warmup, int runs, bool graph, std::vector<double> &ms);
  /// Times each forward step alone, after a warm-up forward: in each of
  /// `passes` passes every launch (a Library step: its calls) has an event
  /// before and after it and is
  /// waited for before the next is queued (no launch gap or queueing inside
  /// a step's time); `ms` receives one duration per step, the median of its
  /// passes. Not for the timed forwards: the waits slow the forward down.
  Status profileSteps(int passes, std::vector<double> &ms);

private:
  CudaModel() = default;
  struct Impl;
  std::unique_ptr<Impl> impl;
  CudaArtifact art;
  CudaDeviceInfo info;
};

} // namespace runtime
} // namespace gpuopt

#endif // GPUOPT_RUNTIME_CUDAMODEL_H
