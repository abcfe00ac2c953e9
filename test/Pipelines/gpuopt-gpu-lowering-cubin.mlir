// REQUIRES: ptxas
// RUN: gpuopt-opt %s --gpuopt-gpu-lowering="chip=sm_90 format=bin" | FileCheck %s --check-prefix=SM90
// RUN: gpuopt-opt %s --gpuopt-gpu-lowering="chip=sm_86 format=bin" | FileCheck %s --check-prefix=SM86
// RUN: gpuopt-opt %s --gpuopt-gpu-lowering | FileCheck %s --check-prefix=DEFAULT

// ptxas assembles the kernels into an ELF cubin (GELU through libdevice's
// erf, which gpu-module-to-binary links from the toolkit).
// SM90: gpu.binary @kernels [#gpu.object<#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">{{.*}}bin = "\7FELF
// The defaults are gpuopt-compile's (CudaTargetOptions): sm_90, a fatbin
// (magic 0xBA55ED50).
// DEFAULT: gpu.binary @kernels [#gpu.object<#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">, properties = {{.*}}}, "P\EDU\BA
// SM86: gpu.binary @kernels [#gpu.object<#nvvm.target<O = 3, chip = "sm_86", features = "+ptx80">{{.*}}bin = "\7FELF
func.func @forward(%x: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %g = seg.gelu %x : tensor<1x4x8x8xf32>
  return %g : tensor<1x4x8x8xf32>
}
