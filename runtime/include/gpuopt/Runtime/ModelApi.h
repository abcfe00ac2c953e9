//===- ModelApi.h - load and run any gpuopt artifact ------------*- C++ -*-===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// The C++ side of libgpuopt_runtime.so (runtime/api/): one interface over
// every artifact gpuopt-compile writes, whichever the target.
//
//  - A CPU model library (an ELF file) is checked before dlopen
//    (checkModelLibrary), loaded with RTLD_NOW | RTLD_LOCAL and run through
//    its own C ABI (ModelAbi.h, resolved with dlsym on its handle). A library
//    once loaded stays loaded (its thread pool's code must outlive every
//    worker), and a second load of the same path is the same library.
//  - A CUDA artifact (model.gpuopt: the bytes 4..7 are the FlatBuffers
//    identifier "GPOA"; a file of the earlier "GPUOCUDA" format is refused
//    with a message to recompile it) runs through CudaModel on GPU `device`
//    (GPUOPT_CUDA_SYNC_EACH_STEP=1 in the environment: each launch waited
//    for, a fault naming its step; CudaModelOptions); in a runtime built
//    without the CUDA toolkit it is an error saying so.
//    With `device` GPUOPT_DEVICE_EMULATE it runs through CudaEmulator (its
//    host image and launch plan on the CPU) in any build.
//
// gpuopt-run links this library (GpuoptModelApi) statically; the C functions
// of ModelAbi.h are defined only in libgpuopt_runtime.so (ModelApiExports.cpp)
// so that a program that also links the CPU kernels (which define
// gpuopt_set_num_threads) has one definition of each.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_RUNTIME_MODELAPI_H
#define GPUOPT_RUNTIME_MODELAPI_H

#include "gpuopt/Runtime/ModelAbi.h"
#include "gpuopt/Runtime/Tensor.h"

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace gpuopt {
namespace runtime {

/// What a file is, from its first 8 bytes: an ELF file is a model library,
/// "GPOA" at bytes 4..7 a CUDA artifact, a leading "GPUOCUDA" a CUDA artifact
/// of the earlier JSON format (refused with a message to recompile). Only a
/// regular file is opened (a FIFO never blocks here); a file that cannot be
/// opened is Unknown.
enum class ArtifactKind { ModelLibrary, Cuda, OldCuda, Unknown };
ArtifactKind identifyArtifact(const std::string &path);

/// A loaded model of either target.
class LoadedModel {
public:
  /// Loads `options.artifact_path` (required) as described above; every
  /// failure is a message naming the file.
  static Status create(const gpuopt_model_options &options,
                       std::unique_ptr<LoadedModel> &out);
  virtual ~LoadedModel();

  /// "cpu" or "cuda".
  virtual const char *target() const = 0;
  /// For reports: " (avx2 kernels)", " (CUDA device 0: NAME)", or "".
  virtual std::string describe() const = 0;

  const std::vector<std::vector<int64_t>> &inputShapes() const {
    return inputs;
  }
  const std::vector<std::vector<int64_t>> &outputShapes() const {
    return outputs;
  }

  /// One forward: `in[i]`, `out[i]` point to dense f32 buffers of the
  /// declared shapes (a NULL array or buffer is an error). Calls are
  /// serialised.
  Status run(const float *const *in, float *const *out);

protected:
  LoadedModel() = default;
  virtual Status runImpl(const float *const *in, float *const *out) = 0;
  std::vector<std::vector<int64_t>> inputs, outputs;

private:
  std::mutex runMutex;
};

/// gpuopt_set_num_threads / gpuopt_get_num_threads of libgpuopt_runtime.so:
/// applied to every model library loaded so far and to those loaded later;
/// the count of the last one loaded (before any: the count that was set, or
/// the default a library would choose).
void setModelNumThreads(int numThreads);
int getModelNumThreads();
/// gpuopt_cpu_kernel_isa of the model library loaded last; nullptr before.
const char *getLastModelCpuKernelIsa();

} // namespace runtime
} // namespace gpuopt

#endif // GPUOPT_RUNTIME_MODELAPI_H
