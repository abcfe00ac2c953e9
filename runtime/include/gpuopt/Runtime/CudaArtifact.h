//===- CudaArtifact.h - file format of a compiled CUDA model ----*- C++ -*-===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// `gpuopt-compile --target=cuda -o model.gpuopt` writes, and the CUDA runtime
// reads, one file: a FlatBuffer of the artifact schema every target shares
// (Artifact.fbs, root gpuopt.artifact.Model, identifier "GPOA") whose program
// is a CudaProgram. `gpuopt-cuda-run model.gpuopt --dump` prints it as text.
//
//   Model.entry, .params (name and type of each weight the model binds),
//   .inputs, .outputs (the entry's f32 tensor types, in order)
//   CudaProgram
//     images       one per chip: chip "sm_NN", format Fatbin|Cubin|Ptx, data;
//                  optionally chip "host-ARCH", format HostSo: the kernels
//                  built for the host CPU, for the emulator (CudaEmulator.h),
//                  never loaded on a GPU
//     arena_bytes  the size of the one device allocation
//     buffers      kind Input|Output|Param|Constant|Temp, name, type, bytes,
//                  offset in the arena
//     inputs, outputs   buffer indices, in the order of Model.inputs/outputs
//     kernels      name and signature: per parameter a dtype and byte size,
//                  whether the kernel reads and writes it (reads, writes:
//                  required by this reader) and in_place (both)
//     init, run    steps: kernel index, grid and block (Dim3), args (buffer
//                  indices), loc (source location of the op), sources (the
//                  distinct locations of the launch and its kernel's ops)
//
// The runtime loads the image built for the device's compute capability,
// else one whose PTX the driver can compile for it (a fatbin or PTX of an
// older chip). Every buffer lives in the arena at `offset`, a multiple of
// kCudaArenaAlignment; `name` is the seg.param (state_dict) name of a Param
// buffer, whose type is that of the parameter in Model.params. Constant
// buffers are written once by the init steps (load-time computations on
// parameters, e.g. folded BatchNorm); Temp buffers share arena space by
// liveness. A step launches kernel K of the image with shared memory 0 and
// one kernel parameter per argument: the device address of the buffer (the
// bare-pointer ABI of convert-gpu-to-nvvm with use-bare-ptr-memref-call-conv).
// The reader (runtime/cuda/CudaArtifact.cpp) verifies the buffer against the
// schema, then checks every index, offset and size of the plan and each
// step's argument count, dtypes and sizes against its kernel's signature,
// then the plan's data flow (checkCudaPlan, CudaModel.h), so a damaged plan
// is refused before any launch. Library steps (calls into
// vendor libraries) are room in the schema, refused by this runtime.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_RUNTIME_CUDAARTIFACT_H
#define GPUOPT_RUNTIME_CUDAARTIFACT_H

#include <cstdint>

namespace gpuopt {
namespace runtime {

/// Alignment of every buffer in the arena.
constexpr uint64_t kCudaArenaAlignment = 256;

/// The prefix of each kernel's entry point in a HostSo image:
/// `void gpuopt_host_<kernel>(const int64_t ids[12], void *const *args)`
/// runs one thread (ids: block id, thread id, block size, grid size, each
/// x, y, z; args: the kernel's buffers, then the violation record).
constexpr const char *kCudaHostKernelPrefix = "gpuopt_host_";

/// A HostSo image exports this `const int32_t` equal to
/// kCudaHostAbiVersion: its kernels check every load and store and take,
/// after their buffers, the violation record (int64_t[kCudaHostRecordSize]):
/// [0] the number of out-of-bounds accesses, then, written by the first
/// only, [1] 0 load / 1 store, [2] the kernel argument whose memory it
/// addresses (-1 a memref.global, -2 an allocation of the kernel), [3] the
/// element it addresses, counted from that memory's first element, [4] the
/// memory's number of elements, [5] the rank of the accessed memref,
/// [6..14) its indices, [14..22) its dimensions (the first eight). A
/// violating access is skipped (a load yields NaN).
constexpr const char *kCudaHostAbiSymbol = "gpuopt_host_abi_version";
constexpr int32_t kCudaHostAbiVersion = 2;
constexpr unsigned kCudaHostRecordSize = 24;

} // namespace runtime
} // namespace gpuopt

#endif // GPUOPT_RUNTIME_CUDAARTIFACT_H
