// RUN: gpuopt-opt %s -split-input-file --simplify-token-layout | FileCheck %s
// RUN: gpuopt-opt %s -split-input-file --gpuopt-optimize --verify-each -o /dev/null
// RUN: gpuopt-opt %s -split-input-file --gpuopt-optimize=deform-conv=true --verify-each -o /dev/null

// Rolling-UNet's OR-MLP tail: tokens -> Linear -> GELU -> back to NCHW.
// CHECK-LABEL: func.func @linear_gelu_round_trip
// CHECK-SAME: (%[[X:.*]]: tensor<1x4x2x3xf32>, %[[W:.*]]: tensor<5x4xf32>, %[[B:.*]]: tensor<5xf32>)
// CHECK: %[[W4:.*]] = seg.reshape %[[W]] : tensor<5x4xf32> -> tensor<5x4x1x1xf32>
// CHECK: %[[C:.*]] = seg.conv2d %[[X]], %[[W4]], %[[B]] stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1
// CHECK: %[[G:.*]] = seg.gelu %[[C]] : tensor<1x5x2x3xf32>
// CHECK-NOT: seg.permute
// CHECK-NOT: seg.linear
// CHECK: return %[[G]]
func.func @linear_gelu_round_trip(%x: tensor<1x4x2x3xf32>, %w: tensor<5x4xf32>, %b: tensor<5xf32>) -> tensor<1x5x2x3xf32> {
  %f = seg.reshape %x : tensor<1x4x2x3xf32> -> tensor<1x4x6xf32>
  %t = seg.permute %f dims = [0, 2, 1] : tensor<1x4x6xf32> -> tensor<1x6x4xf32>
  %y = seg.linear %t, %w, %b : tensor<1x6x4xf32>, tensor<5x4xf32>, tensor<5xf32> -> tensor<1x6x5xf32>
  %g = seg.gelu %y : tensor<1x6x5xf32>
  %u = seg.permute %g dims = [0, 2, 1] : tensor<1x6x5xf32> -> tensor<1x5x6xf32>
  %z = seg.reshape %u : tensor<1x5x6xf32> -> tensor<1x5x2x3xf32>
  return %z : tensor<1x5x2x3xf32>
}

// -----

// An add of two token views with the same layout becomes an NCHW add.
// CHECK-LABEL: func.func @add_below_layout
// CHECK-SAME: (%[[A:.*]]: tensor<1x4x2x2xf32>, %[[B:.*]]: tensor<1x4x2x2xf32>)
// CHECK: %[[S:.*]] = seg.add %[[A]], %[[B]] : tensor<1x4x2x2xf32>, tensor<1x4x2x2xf32> -> tensor<1x4x2x2xf32>
// CHECK: %[[P:.*]] = seg.permute %[[S]] dims = [0, 2, 3, 1]
// CHECK: return %[[P]]
func.func @add_below_layout(%a: tensor<1x4x2x2xf32>, %b: tensor<1x4x2x2xf32>) -> tensor<1x2x2x4xf32> {
  %pa = seg.permute %a dims = [0, 2, 3, 1] : tensor<1x4x2x2xf32> -> tensor<1x2x2x4xf32>
  %pb = seg.permute %b dims = [0, 2, 3, 1] : tensor<1x4x2x2xf32> -> tensor<1x2x2x4xf32>
  %s = seg.add %pa, %pb : tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32> -> tensor<1x2x2x4xf32>
  return %s : tensor<1x2x2x4xf32>
}

// -----

// Different layout changes on the two sides: nothing to move.
// CHECK-LABEL: func.func @negative_add_different_layouts
// CHECK: seg.permute
// CHECK: seg.permute
// CHECK: seg.add
func.func @negative_add_different_layouts(%a: tensor<1x2x2x2xf32>, %b: tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32> {
  %pa = seg.permute %a dims = [0, 2, 3, 1] : tensor<1x2x2x2xf32> -> tensor<1x2x2x2xf32>
  %pb = seg.permute %b dims = [0, 3, 1, 2] : tensor<1x2x2x2xf32> -> tensor<1x2x2x2xf32>
  %s = seg.add %pa, %pb : tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32> -> tensor<1x2x2x2xf32>
  return %s : tensor<1x2x2x2xf32>
}

// -----

// A LayerNorm over the channels of tokens needs the token layout: it stays.
// CHECK-LABEL: func.func @negative_layer_norm_keeps_tokens
// CHECK: seg.permute
// CHECK: seg.layer_norm
func.func @negative_layer_norm_keeps_tokens(%x: tensor<1x4x2x3xf32>, %g: tensor<4xf32>) -> tensor<1x6x4xf32> {
  %f = seg.reshape %x : tensor<1x4x2x3xf32> -> tensor<1x4x6xf32>
  %t = seg.permute %f dims = [0, 2, 1] : tensor<1x4x6xf32> -> tensor<1x6x4xf32>
  %n = seg.layer_norm %t, %g, %g epsilon = 1.0e-05 : tensor<1x6x4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<1x6x4xf32>
  return %n : tensor<1x6x4xf32>
}

// -----

// A relu whose layout change has another user is not moved (it would add a
// copy, not remove one).
// CHECK-LABEL: func.func @negative_layout_with_two_uses
// CHECK: %[[P:.*]] = seg.permute
// CHECK: seg.relu %[[P]]
func.func @negative_layout_with_two_uses(%x: tensor<1x2x3x4xf32>) -> (tensor<1x3x4x2xf32>, tensor<1x3x4x2xf32>) {
  %p = seg.permute %x dims = [0, 2, 3, 1] : tensor<1x2x3x4xf32> -> tensor<1x3x4x2xf32>
  %r = seg.relu %p : tensor<1x3x4x2xf32>
  return %p, %r : tensor<1x3x4x2xf32>, tensor<1x3x4x2xf32>
}
