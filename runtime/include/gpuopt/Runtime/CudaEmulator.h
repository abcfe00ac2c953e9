//===- CudaEmulator.h - run a CUDA artifact's plan on the host --*- C++ -*-===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// Runs a CUDA artifact without a GPU: its own launch plan (the same arena,
// offsets and sizes, load-time steps and launch order) with the kernels of
// its host-so image (gpuopt-compile --target=cuda --cuda-host-image; each
// kernel K exports `void gpuopt_host_K(const int64_t ids[12], void *const
// *args)`, one thread: block id, thread id, block size, grid size). Every
// launch calls the kernel once per thread of every block, blocks and threads
// in the chosen order, one at a time; a kernel whose threads synchronize
// (gpu.barrier, gpu.shuffle) runs them as fibers, each to its next barrier
// or shuffle, phase after phase, and barrier or shuffle divergence is an
// error naming the block and the threads. A block's workgroup memory is NaN
// at its start. The arena is filled with quiet NaNs
// (0x7fc00000) at load, before the parameters are copied and the init steps
// run, and before each forward over every byte that is not a parameter,
// constant or input buffer: a read of a byte the plan has not written in
// this forward shows as NaN. Every load and store of the image's kernels is
// bounds-checked (CudaArtifact.h, kCudaHostAbiVersion): an access outside
// its memref's dimensions or its buffer is skipped and fails the launch with
// the step, the first violating thread, the argument and buffer and the
// element ("run[7] (kernel 'k' at m.py:4:9): thread (44,0,0) of block
// (1,0,0) stores out of bounds of argument 1, buffers[2] (output 0): element
// 300 of 300 (index [300] of shape [300])"); an image without the checks is
// refused. Needs no CUDA toolkit or driver.
// docs/CUDABackend.md, "Emulation on the host", says what this proves.
//
// The host image is code: loading it runs it, like a model library; only
// artifacts one trusts may be emulated.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_RUNTIME_CUDAEMULATOR_H
#define GPUOPT_RUNTIME_CUDAEMULATOR_H

#include "gpuopt/Runtime/CudaModel.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace gpuopt {
namespace runtime {

/// The order in which the blocks of a launch, and the threads of each block,
/// run.
enum class EmulationOrder { Forward, Reversed, Shuffled };

struct EmulationOptions {
  EmulationOrder order = EmulationOrder::Forward;
  /// The seed of the Shuffled order (a fresh permutation of the blocks per
  /// launch and of the threads per block, reproducible from it).
  uint64_t seed = 0;
  /// Whether the plan's data-flow checks (checkCudaPlan) run at load, as
  /// they do for a GPU. Without them the emulator runs a plan they refuse,
  /// to show what it computes (the mutation tests); the checks that keep
  /// every launch inside the arena always run.
  bool planChecks = true;
};

/// Parses `forward`, `reversed`, `shuffled` or `shuffled:SEED`.
Status parseEmulationOrder(const std::string &text, EmulationOptions &out);

/// The chip name of host images this runtime can run ("host-x86_64").
const char *hostImageChip();

class CudaEmulator {
public:
  /// Reads `artifactPath`, loads its host image, binds the weights of
  /// `weightsPath` (as CudaModel does; with `strict`, unused tensors are an
  /// error) and runs the load-time steps once (an out-of-bounds access of
  /// one is an error).
  static Status create(const std::string &artifactPath,
                       const std::string &weightsPath, bool strict,
                       const EmulationOptions &options,
                       std::unique_ptr<CudaEmulator> &out);
  ~CudaEmulator();
  CudaEmulator(const CudaEmulator &) = delete;
  CudaEmulator &operator=(const CudaEmulator &) = delete;

  const CudaArtifact &artifact() const { return art; }

  /// Copies `inputs` (dense f32 of the declared shapes, in order) into their
  /// buffers.
  Status setInputs(const std::vector<const float *> &inputs);
  /// Fills the non-persistent bytes with NaN and runs the forward steps; an
  /// out-of-bounds access fails the first launch that makes one.
  Status forward();
  /// Times `runs` forwards after `warmup` untimed ones with the host's
  /// steady clock (milliseconds per run, NaN refill included): the shape of
  /// CudaModel::time, for dry runs of the benchmark, not a GPU's time.
  Status time(int warmup, int runs, std::vector<double> &ms);
  /// Times each forward step alone with the host's clock, `passes` times
  /// (the NaN refill before each pass, outside the steps); `ms` receives one
  /// duration per step, the median of its passes (CudaModel::profileSteps).
  Status profileSteps(int passes, std::vector<double> &ms);
  /// Copies the outputs out (dense f32 of the declared shapes).
  Status getOutputs(const std::vector<float *> &outputs);

private:
  CudaEmulator() = default;
  struct Impl;
  std::unique_ptr<Impl> impl;
  CudaArtifact art;
};

} // namespace runtime
} // namespace gpuopt

#endif // GPUOPT_RUNTIME_CUDAEMULATOR_H
