// RUN: gpuopt-opt %s --gpuopt-gpu-lowering="serialize=0" | FileCheck %s --check-prefix=NVVM
// RUN: gpuopt-opt %s --gpuopt-gpu-lowering="format=isa chip=sm_86" | FileCheck %s --check-prefix=PTX
// RUN: gpuopt-opt %s --gpuopt-gpu-lowering="serialize=0 gpu-conv=auto gpu-conv-device=rtx3080" | FileCheck %s --check-prefix=AUTO
// RUN: gpuopt-opt %s --gpuopt-gpu-lowering="serialize=0 chip=sm_90,sm_100,sm_120" | FileCheck %s --check-prefix=NEWER
// RUN: gpuopt-opt %s --gpuopt-gpu-lowering="serialize=0 chip=sm_120,sm_121 features=+ptx90" | FileCheck %s --check-prefix=NEWEST
// RUN: gpuopt-opt %s --gpuopt-gpu-lowering="format=isa chip=sm_120" | FileCheck %s --check-prefix=ISA120

// The host function only launches kernels; the convolution's output fill,
// accumulation (padding read in the load: no padded copy), bias and ReLU
// are one kernel. Kernels take bare pointers, noalias (readonly when never
// written), read the thread indices, accumulate in registers (loop-carried
// values starting from the fill's zero, no scratch buffer) with fused multiply-adds: four
// output channels per thread (the default register tile), which share one
// load of the input per step.
// NVVM-LABEL: func.func @forward
// NVVM-SAME: {seg.param = "conv.weight"}
// NVVM-SAME: {seg.param = "conv.bias"}
// NVVM-COUNT-1: gpu.launch_func @kernels::
// NVVM-NOT: gpu.launch_func
// NVVM: return
// NVVM: gpu.module @kernels [#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">]
// The accumulator buffer of the fill and reduction is gone
// (--eliminate-private-kernel-buffers): input, weight, bias, output.
// NVVM: llvm.func @forward_kernel0(%{{.*}}: !llvm.ptr {llvm.noalias, llvm.readonly}, %{{.*}}: !llvm.ptr {llvm.noalias, llvm.readonly}, %{{.*}}: !llvm.ptr {llvm.noalias, llvm.readonly}, %{{.*}}: !llvm.ptr {llvm.noalias}) attributes {gpu.kernel, gpu.known_block_size = array<i32: 64, 1, 1>, nvvm.kernel, nvvm.maxntid = array<i32: 64, 1, 1>}
// NVVM: nvvm.read.ptx.sreg.ctaid.x
// NVVM: nvvm.read.ptx.sreg.tid.x
// NVVM: ^bb6(%{{.*}}: i64, %[[ACC:[^:]*]]: f32, %[[ACC1:[^:]*]]: f32, %[[ACC2:[^:]*]]: f32, %[[ACC3:[^:]*]]: f32):
// NVVM-NOT: llvm.store
// NVVM: llvm.call @__nv_fmaf(%[[X:[^,]*]], %{{.*}}, %[[ACC]])
// NVVM-NEXT: llvm.call @__nv_fmaf(%[[X]], %{{.*}}, %[[ACC1]])
// NVVM-NEXT: llvm.call @__nv_fmaf(%[[X]], %{{.*}}, %[[ACC2]])
// NVVM-NEXT: llvm.call @__nv_fmaf(%[[X]], %{{.*}}, %[[ACC3]])
// NVVM-NOT: llvm.store
// NVVM: llvm.br ^bb6
// NVVM: llvm.intr.maximum
// NVVM-NOT: llvm.func @forward_kernel1

// gpu-conv=auto on the RTX 3080's model: a 4-channel convolution of an 8x8
// map is too small for a library call to pay its overhead; the same one
// generated kernel.
// AUTO-LABEL: func.func @forward
// AUTO-COUNT-1: gpu.launch_func @kernels::@forward_kernel0
// AUTO-NOT: gpu.launch_func
// AUTO: return

// Chips newer than PTX 8.0 get their own minimum PTX version (the back end
// aborts on an older one): sm_100 8.6, sm_120 8.7; sm_90 keeps 8.0, and a
// newer version asked for is kept.
// NEWER: gpu.module @kernels [#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">, #nvvm.target<O = 3, chip = "sm_100", features = "+ptx86">, #nvvm.target<O = 3, chip = "sm_120", features = "+ptx87">]
// NEWEST: gpu.module @kernels [#nvvm.target<O = 3, chip = "sm_120", features = "+ptx90">, #nvvm.target<O = 3, chip = "sm_121", features = "+ptx90">]
// ISA120: assembly = "
// ISA120-SAME: .version 8.7
// ISA120-SAME: .target sm_120

// PTX: gpu.binary @kernels [#gpu.object<#nvvm.target<O = 3, chip = "sm_86", features = "+ptx80">, properties = {{.*}}assembly = "
// PTX-SAME: .target sm_86
// PTX-SAME: .entry forward_kernel0
// PTX-SAME: ld.global.nc.b32
// PTX-SAME: fma.rn.f32
// PTX-NOT: mul.rn.f32
// PTX-NOT: .entry forward_kernel1
func.func @forward(%x: tensor<1x3x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %w = seg.param "conv.weight" : tensor<4x3x3x3xf32>
  %b = seg.param "conv.bias" : tensor<4xf32>
  %y = seg.conv2d %x, %w, %b stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 1 : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32> -> tensor<1x4x8x8xf32>
  %r = seg.relu %y : tensor<1x4x8x8xf32>
  return %r : tensor<1x4x8x8xf32>
}
