//===- CudaArtifact.h - file format of a compiled CUDA model ----*- C++ -*-===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// `gpuopt-compile --target=cuda -o model.gpuopt` writes, and the CUDA runtime
// reads, one file:
//
//   bytes 0..7    magic "GPUOCUDA"
//   bytes 8..15   N, little-endian uint64: length of the JSON header
//   N bytes       JSON header (below)
//   the rest      the payload; "image" addresses the kernel image in it
//
//   {"version": 1, "entry": "forward",
//    "images": [{"chip": "sm_90", "format": "fatbin" | "cubin" | "ptx",
//                "offset": 0, "size": 123}, ...],
//    "arena_bytes": 4096,
//    "buffers": [{"kind": "input" | "output" | "param" | "constant" | "temp",
//                 "dtype": "F32", "shape": [1, 3, 32, 32], "bytes": 12288,
//                 "offset": 0, "name": "conv.weight"}, ...],
//    "inputs": [0], "outputs": [5],
//    "kernels": [{"name": "forward_kernel0",
//                 "args": [{"dtype": "F32", "bytes": 12288}, ...]}, ...],
//    "init": [STEP, ...], "run": [STEP, ...]}
//
//   STEP = {"kernel": K, "grid": [x, y, z], "block": [x, y, z],
//           "args": [B, ...], "loc": "model.mlir:12:3"}
//
// "images" hold the kernels, one object per chip (offsets into the payload);
// the runtime loads the one built for the device's compute capability, else
// one whose PTX the driver can compile for it (a fatbin or PTX of an older
// chip). Every buffer lives in one device arena at "offset" (256-byte aligned);
// "name" is the seg.param (state_dict) name of a "param" buffer. "constant"
// buffers are written once by the "init" steps (load-time computations on
// parameters, e.g. folded BatchNorm); "temp" buffers share arena space by
// liveness. A step launches kernel K of the image with shared memory 0 and
// one kernel parameter per argument: the device address of buffer B (the
// bare-pointer ABI of convert-gpu-to-nvvm with use-bare-ptr-memref-call-conv).
// A kernel's "args" is its signature (each parameter a dense buffer of that
// dtype and size): the reader checks every step's argument count, dtypes and
// sizes against it, so a damaged plan is refused before any launch.
//
//===----------------------------------------------------------------------===//

#ifndef GPUOPT_RUNTIME_CUDAARTIFACT_H
#define GPUOPT_RUNTIME_CUDAARTIFACT_H

#include <cstdint>

namespace gpuopt {
namespace runtime {

/// The first 8 bytes of a CUDA artifact.
constexpr char kCudaArtifactMagic[8] = {'G', 'P', 'U', 'O', 'C', 'U', 'D', 'A'};
/// Version of the JSON header schema.
constexpr int64_t kCudaArtifactVersion = 2;
/// Alignment of every buffer in the arena.
constexpr uint64_t kCudaArenaAlignment = 256;

} // namespace runtime
} // namespace gpuopt

#endif // GPUOPT_RUNTIME_CUDAARTIFACT_H
