// REQUIRES: ptxas
// RUN: gpuopt-opt %s --gpuopt-gpu-lowering="chip=sm_90" | FileCheck %s --check-prefix=SM90
// RUN: gpuopt-opt %s --gpuopt-gpu-lowering="chip=sm_86" | FileCheck %s --check-prefix=SM86

// ptxas assembles the kernels into an ELF cubin (GELU through libdevice's
// erf, which gpu-module-to-binary links from the toolkit).
// SM90: gpu.binary @kernels [#gpu.object<#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">{{.*}}bin = "\7FELF
// SM86: gpu.binary @kernels [#gpu.object<#nvvm.target<O = 3, chip = "sm_86", features = "+ptx80">{{.*}}bin = "\7FELF
func.func @forward(%x: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %g = seg.gelu %x : tensor<1x4x8x8xf32>
  return %g : tensor<1x4x8x8xf32>
}
