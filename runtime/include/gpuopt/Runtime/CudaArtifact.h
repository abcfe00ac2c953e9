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
//                  or, kind Library, a call of a CpuKernelAbi.def routine
//                  (library: conv2d, conv_transpose2d or linear) with
//                  operands (strided views of buffers, operand 0 written)
//                  and scalars; args then are the operands' distinct buffers
//     precision    FP32 | TF32: the arithmetic of the Library steps
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
// is refused before any launch. A Library step is checked against its
// routine's signature, its views against their buffers, and against the
// subset of the routine the CUDA libraries compute (no shift; activation
// none, or relu without residual; packed weights; linear rows of unit
// stride), each refusal naming the step.
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
/// x, y, z; args: the kernel's buffers, the violation record, the block's
/// workgroup memory).
constexpr const char *kCudaHostKernelPrefix = "gpuopt_host_";

/// A HostSo image exports this `const int32_t` equal to
/// kCudaHostAbiVersion: its kernels check every load and store and take,
/// after their buffers, the violation record (int64_t[kCudaHostRecordSize]):
/// [0] the number of out-of-bounds accesses, then, written by the first
/// only, [1] 0 load / 1 store, [2] the kernel argument whose memory it
/// addresses (-1 a memref.global, -2 an allocation of the kernel, -3 - k
/// workgroup attribution k), [3] the element it addresses, counted from that
/// memory's first element, [4] the memory's number of elements, [5] the rank
/// of the accessed memref, [6..14) its indices, [14..22) its dimensions (the
/// first eight). A violating access is skipped (a load yields NaN). After
/// the record comes the block's workgroup memory (kCudaHostInfoPrefix; null
/// for a kernel without any).
constexpr const char *kCudaHostAbiSymbol = "gpuopt_host_abi_version";
constexpr int32_t kCudaHostAbiVersion = 5;
constexpr unsigned kCudaHostRecordSize = 24;

/// For each kernel K a HostSo image exports `const int64_t
/// gpuopt_hostinfo_K[2]`: the bytes of workgroup memory one block of it
/// needs (its gpu.func workgroup attributions, laid out by the image) and
/// flags (kCudaHostKernelSyncs).
constexpr const char *kCudaHostInfoPrefix = "gpuopt_hostinfo_";
/// The kernel's threads synchronize (gpu.barrier, gpu.shuffle,
/// nvgpu.mma.sync) or copy asynchronously: each thread
/// of a block must run as a fiber, suspended at the hooks below.
constexpr int64_t kCudaHostKernelSyncs = 1;

/// A HostSo image exports a `CudaHostHooks gpuopt_host_hooks`, zero until
/// the emulator fills it in; a kernel's gpu.barrier calls barrier(ctx,
/// site) and its gpu.shuffle calls shuffle(ctx, site, mode, bits, offset,
/// width), whose result holds the 32 bits of the value read in bits 0..31
/// and the `valid` flag in bit 32; its nvgpu.mma.sync (a warp's matrix
/// multiply-accumulate) calls mma(ctx, site, shape, a, b, c) with the lane's
/// fragments of A, B and C (kCudaMma* gives their sizes and layout), and
/// finds D in c when it returns. `site` numbers the kernel's barriers (and,
/// separately, its shuffles and its mmas) in the order of its text; `mode`
/// is one of kCudaShuffle*. An asynchronous copy to workgroup memory
/// (nvgpu.device_async_copy, PTX cp.async) calls asyncCopy(ctx, address,
/// bits, bytes) per element, with the element's value read at the copy (the
/// kernel has already poisoned the destination); the emulator writes it when
/// the thread's asyncWait(ctx, groups) leaves at most `groups` of its
/// committed groups pending; asyncCommit(ctx) closes the thread's open group
/// (PTX cp.async.commit_group).
constexpr const char *kCudaHostHooksSymbol = "gpuopt_host_hooks";
struct CudaHostHooks {
  void *ctx;
  void (*barrier)(void *ctx, int64_t site);
  int64_t (*shuffle)(void *ctx, int64_t site, int64_t mode, int64_t bits,
                     int64_t offset, int64_t width);
  void (*mma)(void *ctx, int64_t site, int64_t shape, const float *a,
              const float *b, float *c);
  void (*asyncCopy)(void *ctx, int64_t address, int64_t bits, int64_t bytes);
  void (*asyncCommit)(void *ctx);
  void (*asyncWait)(void *ctx, int64_t groups);
};
constexpr int64_t kCudaShuffleXor = 0, kCudaShuffleUp = 1, kCudaShuffleDown = 2,
                  kCudaShuffleIdx = 3;
/// The shapes of nvgpu.mma.sync the emulation runs: PTX's
/// mma.sync.aligned.m16n8kK.row.col.f32.tf32.tf32.f32, K = 8 (A: 4 floats a
/// lane, B: 2, C and D: 4) or K = 4 (A: 2, B: 1, C and D: 4). With g = lane
/// / 4 and t = lane % 4 a lane holds A[g][t], A[g+8][t] (K = 8 also
/// A[g][t+4], A[g+8][t+4]), B[t][g] (K = 8 also B[t+4][g]) and C[g][2t],
/// C[g][2t+1], C[g+8][2t], C[g+8][2t+1].
constexpr int64_t kCudaMmaM16N8K8Tf32 = 0, kCudaMmaM16N8K4Tf32 = 1;
/// The most bytes of private memory (private attributions and allocas) a
/// synchronizing kernel's thread may have: its fiber's stack is
/// kCudaHostFiberStack bytes.
constexpr uint64_t kCudaHostMaxPrivateBytes = 64 * 1024;
constexpr uint64_t kCudaHostFiberStack = 512 * 1024;
/// The most static workgroup memory of a block (CUDA's static limit).
constexpr uint64_t kCudaHostMaxWorkgroupBytes = 48 * 1024;

} // namespace runtime
} // namespace gpuopt

#endif // GPUOPT_RUNTIME_CUDAARTIFACT_H
