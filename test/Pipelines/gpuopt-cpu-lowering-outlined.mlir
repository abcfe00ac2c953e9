// RUN: gpuopt-opt %s --gpuopt-cpu-lowering | FileCheck %s

// Compile time stays linear in the op count (docs/Reliability.md, "Compile
// time"): every linalg op becomes a noinline function of its own, the graph
// function keeps only glue (allocations, kernel calls, calls of the outlined
// ops, frees) and is optnone, and each buffer is freed once, after its last
// use, by --free-buffers-after-last-use.
// CHECK-LABEL: llvm.func @forward(
// CHECK-SAME: passthrough = ["noinline", "optnone"]
// CHECK: %[[A:.*]] = llvm.call @_mlir_memref_to_llvm_alloc
// CHECK: llvm.call @gpuopt_cpu_conv2d(
// CHECK: llvm.call @forward_op0(
// CHECK: llvm.call @forward_op1(
// CHECK: llvm.call @_mlir_memref_to_llvm_free
// CHECK: llvm.return
// CHECK: llvm.func @forward_op0(
// CHECK-SAME: passthrough = ["noinline"]
// CHECK: llvm.cond_br
// CHECK: llvm.func @forward_op1(
// CHECK-SAME: passthrough = ["noinline"]
// CHECK: llvm.cond_br
func.func @forward(%x: tensor<1x3x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %w = seg.param "conv.weight" : tensor<4x3x3x3xf32>
  %b = seg.param "conv.bias" : tensor<4xf32>
  %y = seg.conv2d %x, %w, %b stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 1 : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32> -> tensor<1x4x8x8xf32>
  %r = seg.relu %y : tensor<1x4x8x8xf32>
  %s = seg.sigmoid %r : tensor<1x4x8x8xf32>
  return %s : tensor<1x4x8x8xf32>
}
