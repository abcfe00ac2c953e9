// RUN: gpuopt-opt %s -split-input-file --gpuopt-cpu-lowering | FileCheck %s
// RUN: gpuopt-opt %s -split-input-file --convert-seg-to-linalg --fuse-gathers-into-elementwise | FileCheck %s --check-prefix=LINALG

// ShiftViT's residual add of a shift no consumer absorbs: the gather fuses
// into the add, one loop nest (one outlined op), as on CUDA (one kernel).
// CHECK-LABEL: llvm.func @forward(
// CHECK: llvm.call @forward_op0(
// CHECK-NOT: llvm.call @forward_op1(
// CHECK: llvm.return
// CHECK: llvm.func @forward_op0(
// CHECK-NOT: llvm.func @forward_op1(
// LINALG-LABEL: func.func @forward(
// LINALG-SAME: %[[X:.*]]: tensor<1x4x8x8xf32>
// LINALG: %[[Y:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<1x4x8x8xf32>)
// LINALG: tensor.extract %[[X]]
// LINALG: arith.addf
// LINALG-NOT: linalg.generic
// LINALG: return %[[Y]]
func.func @forward(%x: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %s = seg.channel_shift %x offsets_h = [0, 1, 0, -1] offsets_w = [1, 0, -1, 0] mode = zero : tensor<1x4x8x8xf32>
  %y = seg.add %x, %s : tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32> -> tensor<1x4x8x8xf32>
  return %y : tensor<1x4x8x8xf32>
}

// -----

// Not fused: an elementwise producer that is no gather (relu into add), and a
// gather with two users (an add and a mul).
// CHECK-LABEL: llvm.func @forward(
// CHECK: llvm.call @forward_op0(
// CHECK: llvm.call @forward_op1(
// CHECK: llvm.call @forward_op2(
// CHECK: llvm.call @forward_op3(
// CHECK: llvm.call @forward_op4(
// LINALG-LABEL: func.func @forward(
// LINALG-COUNT-5: linalg.generic
// LINALG-NOT: linalg.generic
func.func @forward(%x: tensor<1x4x8x8xf32>, %r: tensor<1x4x8x8xf32>) -> (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) {
  %a = seg.relu %x : tensor<1x4x8x8xf32>
  %b = seg.add %a, %r : tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32> -> tensor<1x4x8x8xf32>
  %s = seg.shift %x group_dim = 1 dims = [2] offsets = [1, 0, -1, 2] mode = zero : tensor<1x4x8x8xf32>
  %c = seg.add %s, %r : tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32> -> tensor<1x4x8x8xf32>
  %d = seg.mul %s, %c : tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32> -> tensor<1x4x8x8xf32>
  return %b, %d : tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>
}
