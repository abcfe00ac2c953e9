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
// Every driver call is checked.
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

/// One kernel launch of the launch plan.
struct CudaStep {
  unsigned kernel = 0;
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {1, 1, 1};
  std::vector<unsigned> args;
  std::string loc;
};

/// One parameter of a kernel: a dense buffer of this dtype and size.
struct CudaKernelArg {
  DType dtype = DType::F32;
  uint64_t bytes = 0;
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
};

/// Artifacts larger than this are refused before reading (kernel images of
/// every zoo model take a few MiB).
constexpr uint64_t kMaxCudaArtifactBytes = 1ull << 30;

/// Reads and validates an artifact; needs no GPU. Only a regular file of at
/// most kMaxCudaArtifactBytes is read (a FIFO or device is refused, never
/// opened).
Status readCudaArtifact(const std::string &path, CudaArtifact &out);

/// Validates the `size` bytes of a whole artifact file: verifyArtifact
/// (Artifact.h: the FlatBuffers verifier and the checks every target shares)
/// first, then the CudaProgram (CudaArtifact.h); `what` (the path) starts
/// every message. Every step's arguments are checked against its kernel's
/// signature and every buffer lies inside the arena.
Status parseCudaArtifact(const uint8_t *bytes, size_t size,
                         const std::string &what, CudaArtifact &out);

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

/// A loaded model on one GPU: one device arena, the kernels, one stream.
class CudaModel {
public:
  /// Loads `artifactPath` onto GPU `device`, binds the weights of
  /// `weightsPath` by seg.param name (with `strict`, tensors of the file the
  /// model does not use are an error) and runs the load-time steps once.
  static Status create(const std::string &artifactPath,
                       const std::string &weightsPath, bool strict, int device,
                       std::unique_ptr<CudaModel> &out);
  ~CudaModel();
  CudaModel(const CudaModel &) = delete;
  CudaModel &operator=(const CudaModel &) = delete;

  const CudaArtifact &artifact() const { return art; }
  const CudaDeviceInfo &deviceInfo() const { return info; }

  /// Copies `inputs` (dense f32 of the declared shapes, in order) to the GPU.
  Status setInputs(const std::vector<const float *> &inputs);
  /// Launches the forward steps on the model's stream and waits; with
  /// `graph`, replays a CUDA graph captured on first use.
  Status forward(bool graph);
  /// Copies the outputs back (dense f32 of the declared shapes).
  Status getOutputs(const std::vector<float *> &outputs);
  /// Times `runs` forwards after `warmup` untimed ones, each with CUDA events
  /// around it; `ms` receives one duration per run.
  Status time(int warmup, int runs, bool graph, std::vector<double> &ms);
  /// Times each forward step alone (events around each launch, one pass
  /// after a warm-up); `ms` receives one duration per step.
  Status profileSteps(std::vector<double> &ms);

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
