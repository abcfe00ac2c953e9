//===- CpuKernelsEntryPoints.cpp - C entry points of the CPU kernels ------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// The `_mlir_ciface_gpuopt_cpu_*` functions generated code calls
// (SegToCpuKernels.cpp; CpuKernelAbi.def declares them), each timed under
// GPUOPT_PROFILE and run with the selected target's kernels
// (CpuKernelsDispatch.cpp), and the symbol table the JIT resolves them with.
//
//===----------------------------------------------------------------------===//

#include "CpuKernelsInternal.h"
#include "gpuopt/Runtime/Allocator.h"
#include "gpuopt/Runtime/ModelAbi.h"

#include <cstdint>
#include <exception>
#include <string>

using namespace gpuopt::runtime;

namespace {

template <int Rank> std::string shapeOf(const MemRefDesc<float, Rank> &d) {
  std::string s;
  for (int r = 0; r < Rank; ++r)
    s += (r ? "x" : "") + std::to_string(d.sizes[r]);
  return s;
}
/// Runs a kernel body with the selected target's kernels; the generated code
/// that calls it cannot take an error back, so an exception (out of memory,
/// a thread that cannot start) or a GPUOPT_CPU_ISA this CPU cannot run
/// becomes the error of the enclosing callGenerated() (Allocator.h).
template <typename Fn> void guarded(const char *kernel, Fn &&fn) {
  std::string error;
  const IsaKernels *k = activeKernels(&error);
  if (!k) {
    reportKernelFailure(kernel, error.c_str());
    return;
  }
  try {
    fn(*k);
  } catch (const std::exception &e) {
    reportKernelFailure(kernel, e.what());
  }
}
/// Why conv2d's frame shift cannot be applied to `in` (nullptr when it can,
/// or when there is none): seg.fused_conv2d's verifier guarantees what the
/// padded copy's addressing needs, checked again at the kernel's boundary.
const char *checkFrameShift(const MemRef4F &in, const MemRef1I &offT,
                            int64_t frames) {
  if (offT.sizes[0] == 0)
    return nullptr;
  if (frames < 1 || in.sizes[0] % frames != 0)
    return "frame shift: the frames do not divide the batch";
  if (offT.sizes[0] != in.sizes[1])
    return "frame shift: not one offset per input channel";
  for (int64_t c = 0; c < offT.sizes[0]; ++c) {
    int64_t dt = offT.aligned[offT.offset + c * offT.strides[0]];
    if (dt <= -frames || dt >= frames)
      return "frame shift: an offset outside the clip";
  }
  return nullptr;
}
} // namespace

extern "C" {

void _mlir_ciface_gpuopt_cpu_conv2d(MemRef4F *out, MemRef4F *in, MemRef4F *w,
                                    MemRef1F *bias, MemRef4F *residual,
                                    MemRef1I *offH, MemRef1I *offW,
                                    MemRef1I *offT, int64_t strideH,
                                    int64_t strideW, int64_t padH, int64_t padW,
                                    int64_t dilH, int64_t dilW, int64_t groups,
                                    int64_t frames, int64_t flags,
                                    int64_t activation) {
  ProfileScope scope([&] {
    std::string layout;
    if (!isDense(*in))
      layout = " strides " + std::to_string(in->strides[0]) + "," +
               std::to_string(in->strides[1]) + "," +
               std::to_string(in->strides[2]) + "," +
               std::to_string(in->strides[3]);
    return "conv2d in " + shapeOf(*in) + layout + " w " + shapeOf(*w) +
           (offH->sizes[0] || offW->sizes[0] ? " shifted" : "") +
           (offT->sizes[0] ? " frame-shifted" : "") +
           (groups > 1 ? " groups " + std::to_string(groups) : "") +
           (strideH > 1 ? " stride " + std::to_string(strideH) : "");
  });
  if (const char *error = checkFrameShift(*in, *offT, frames)) {
    reportKernelFailure("conv2d", error);
    return;
  }
  guarded("conv2d", [&](const IsaKernels &k) {
    k.conv2d({out, in, w, bias, residual, offH, offW, offT, strideH, strideW,
              padH, padW, dilH, dilW, groups, frames, flags, activation});
  });
}

void _mlir_ciface_gpuopt_cpu_conv_transpose2d(MemRef4F *out, MemRef4F *in,
                                              MemRef4F *w, MemRef1F *bias,
                                              int64_t hasBias) {
  ProfileScope scope([&] {
    return "conv_transpose2d in " + shapeOf(*in) + " w " + shapeOf(*w);
  });
  guarded("conv_transpose2d", [&](const IsaKernels &k) {
    k.convTranspose2d(out, in, w, bias, hasBias);
  });
}

void _mlir_ciface_gpuopt_cpu_linear(MemRef2F *out, MemRef2F *in, MemRef2F *w,
                                    MemRef1F *bias, int64_t hasBias) {
  ProfileScope scope(
      [&] { return "linear in " + shapeOf(*in) + " w " + shapeOf(*w); });
  guarded("linear",
          [&](const IsaKernels &k) { k.linear(out, in, w, bias, hasBias); });
}

void _mlir_ciface_gpuopt_cpu_upsample_bilinear(MemRef4F *out, MemRef4F *in,
                                               int64_t alignCorners) {
  ProfileScope scope([&] {
    return "upsample_bilinear in " + shapeOf(*in) + " out " + shapeOf(*out);
  });
  guarded("upsample_bilinear", [&](const IsaKernels &k) {
    k.upsampleBilinear(out, in, alignCorners != 0);
  });
}

void _mlir_ciface_gpuopt_cpu_deform_conv2d(
    MemRef4F *out, MemRef4F *in, MemRef4F *offset, MemRef4F *w, MemRef1F *bias,
    int64_t strideH, int64_t strideW, int64_t padH, int64_t padW, int64_t dilH,
    int64_t dilW, int64_t groups, int64_t offsetGroups, int64_t hasBias) {
  ProfileScope scope(
      [&] { return "deform_conv2d in " + shapeOf(*in) + " w " + shapeOf(*w); });
  guarded("deform_conv2d", [&](const IsaKernels &k) {
    k.deformConv2d({out, in, offset, w, bias, strideH, strideW, padH, padW,
                    dilH, dilW, groups, offsetGroups, hasBias});
  });
}

// Weak, as gpuopt_set_num_threads (ThreadPool.cpp).
__attribute__((weak)) const char *gpuopt_cpu_kernel_isa(void) {
  return getCpuIsaName();
}

} // extern "C"

// runtime/cpu/Allocator.cpp
extern "C" void *_mlir_memref_to_llvm_alloc(uint64_t size);
extern "C" void *_mlir_memref_to_llvm_aligned_alloc(uint64_t alignment,
                                                    uint64_t size);
extern "C" void _mlir_memref_to_llvm_free(void *p);
// runtime/cpu/MemRefCopy.cpp
extern "C" void memrefCopy(int64_t elemSize, void *src, void *dst);

namespace gpuopt::runtime {
const KernelSymbol *getCpuKernelSymbols() {
  static const KernelSymbol symbols[] = {
#define GPUOPT_CPU_KERNEL(NAME, ...)                                           \
  {"_mlir_ciface_gpuopt_cpu_" #NAME,                                           \
   reinterpret_cast<void *>(&_mlir_ciface_gpuopt_cpu_##NAME)},
#include "gpuopt/Runtime/CpuKernelAbi.def"
      {"_mlir_memref_to_llvm_alloc",
       reinterpret_cast<void *>(&_mlir_memref_to_llvm_alloc)},
      {"_mlir_memref_to_llvm_aligned_alloc",
       reinterpret_cast<void *>(&_mlir_memref_to_llvm_aligned_alloc)},
      {"_mlir_memref_to_llvm_free",
       reinterpret_cast<void *>(&_mlir_memref_to_llvm_free)},
      {"memrefCopy", reinterpret_cast<void *>(&memrefCopy)},
      {nullptr, nullptr}};
  return symbols;
}
} // namespace gpuopt::runtime
