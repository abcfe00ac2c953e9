// RUN: gpuopt-opt %s --gpuopt-cpu-lowering | FileCheck %s
// RUN: gpuopt-opt %s --gpuopt-cpu-lowering=kernels=false | FileCheck %s --check-prefix=LOOPS

// The convolution is a call of the kernel's C interface, buffers come from
// gpuopt's allocator, the entry has a C interface with the result as an
// out-parameter.
// CHECK-LABEL: llvm.func @forward(
// CHECK: llvm.call @_mlir_memref_to_llvm_alloc
// CHECK: llvm.call @gpuopt_cpu_conv2d(
// CHECK: llvm.call @_mlir_memref_to_llvm_free
// CHECK-LABEL: llvm.func @_mlir_ciface_forward(
// CHECK: llvm.call @_mlir_ciface_gpuopt_cpu_conv2d(
// CHECK: llvm.func @_mlir_ciface_gpuopt_cpu_conv2d(!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64)
// CHECK-NOT: seg.

// Without kernels: loops only, no call.
// LOOPS-LABEL: llvm.func @forward(
// LOOPS-NOT: gpuopt_cpu_
// LOOPS: llvm.fmul
// LOOPS-NOT: gpuopt_cpu_
func.func @forward(%x: tensor<1x3x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %w = seg.param "conv.weight" : tensor<4x3x3x3xf32>
  %b = seg.param "conv.bias" : tensor<4xf32>
  %y = seg.conv2d %x, %w, %b stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 1 : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32> -> tensor<1x4x8x8xf32>
  %r = seg.relu %y : tensor<1x4x8x8xf32>
  return %r : tensor<1x4x8x8xf32>
}
