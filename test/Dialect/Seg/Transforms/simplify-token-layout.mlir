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

// A LayerNorm over the channels of tokens is one over the channels of the
// NCHW map (axis = 1); the layout change moves below it, to the result.
// CHECK-LABEL: func.func @layer_norm_below_layout
// CHECK-SAME: (%[[X:.*]]: tensor<1x4x2x3xf32>, %[[G:.*]]: tensor<4xf32>)
// CHECK: %[[N:.*]] = seg.layer_norm %[[X]], %[[G]], %[[G]] axis = 1 epsilon = 1.000000e-05 : tensor<1x4x2x3xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<1x4x2x3xf32>
// CHECK: %[[F:.*]] = seg.reshape %[[N]] : tensor<1x4x2x3xf32> -> tensor<1x4x6xf32>
// CHECK: %[[T:.*]] = seg.permute %[[F]] dims = [0, 2, 1] : tensor<1x4x6xf32> -> tensor<1x6x4xf32>
// CHECK: return %[[T]]
func.func @layer_norm_below_layout(%x: tensor<1x4x2x3xf32>, %g: tensor<4xf32>) -> tensor<1x6x4xf32> {
  %f = seg.reshape %x : tensor<1x4x2x3xf32> -> tensor<1x4x6xf32>
  %t = seg.permute %f dims = [0, 2, 1] : tensor<1x4x6xf32> -> tensor<1x6x4xf32>
  %n = seg.layer_norm %t, %g, %g epsilon = 1.0e-05 : tensor<1x6x4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<1x6x4xf32>
  return %n : tensor<1x6x4xf32>
}

// -----

// Rolling-UNet's and UNeXt's LayerNorm over channels: NCHW -> tokens ->
// LayerNorm -> NCHW (the reshape + permute [0, 3, 1, 2] way back). No layout
// change is left.
// CHECK-LABEL: func.func @layer_norm_round_trip
// CHECK-SAME: (%[[X:.*]]: tensor<1x4x2x3xf32>, %[[G:.*]]: tensor<4xf32>, %[[B:.*]]: tensor<4xf32>)
// CHECK: %[[N:.*]] = seg.layer_norm %[[X]], %[[G]], %[[B]] axis = 1 epsilon = 1.000000e-03
// CHECK-NOT: seg.permute
// CHECK-NOT: seg.reshape
// CHECK: return %[[N]]
func.func @layer_norm_round_trip(%x: tensor<1x4x2x3xf32>, %g: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<1x4x2x3xf32> {
  %f = seg.reshape %x : tensor<1x4x2x3xf32> -> tensor<1x4x6xf32>
  %t = seg.permute %f dims = [0, 2, 1] : tensor<1x4x6xf32> -> tensor<1x6x4xf32>
  %n = seg.layer_norm %t, %g, %b epsilon = 1.0e-03 : tensor<1x6x4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<1x6x4xf32>
  %h = seg.reshape %n : tensor<1x6x4xf32> -> tensor<1x2x3x4xf32>
  %y = seg.permute %h dims = [0, 3, 1, 2] : tensor<1x2x3x4xf32> -> tensor<1x4x2x3xf32>
  return %y : tensor<1x4x2x3xf32>
}

// -----

// Two LayerNorms in a row (UNeXt's patch embedding norm and the block's) both
// move to the NCHW map, and the round trip cancels.
// CHECK-LABEL: func.func @layer_norm_chain
// CHECK-SAME: (%[[X:.*]]: tensor<1x4x2x3xf32>, %[[G:.*]]: tensor<4xf32>)
// CHECK: %[[N1:.*]] = seg.layer_norm %[[X]], %[[G]], %[[G]] axis = 1
// CHECK: %[[N2:.*]] = seg.layer_norm %[[N1]], %[[G]], %[[G]] axis = 1
// CHECK-NOT: seg.permute
// CHECK: return %[[N2]]
func.func @layer_norm_chain(%x: tensor<1x4x2x3xf32>, %g: tensor<4xf32>) -> tensor<1x4x2x3xf32> {
  %t = seg.permute %x dims = [0, 2, 3, 1] : tensor<1x4x2x3xf32> -> tensor<1x2x3x4xf32>
  %n1 = seg.layer_norm %t, %g, %g epsilon = 1.0e-05 : tensor<1x2x3x4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<1x2x3x4xf32>
  %n2 = seg.layer_norm %n1, %g, %g epsilon = 1.0e-05 : tensor<1x2x3x4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<1x2x3x4xf32>
  %y = seg.permute %n2 dims = [0, 3, 1, 2] : tensor<1x2x3x4xf32> -> tensor<1x4x2x3xf32>
  return %y : tensor<1x4x2x3xf32>
}

// -----

// A permute that leaves the last dim in place: the moved LayerNorm is still
// over the last dim, spelled without `axis`.
// CHECK-LABEL: func.func @layer_norm_keeps_last_axis
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>, %[[G:.*]]: tensor<4xf32>)
// CHECK: %[[N:.*]] = seg.layer_norm %[[X]], %[[G]], %[[G]] epsilon = 1.000000e-05 : tensor<2x3x4xf32>
// CHECK: %[[P:.*]] = seg.permute %[[N]] dims = [1, 0, 2]
// CHECK: return %[[P]]
func.func @layer_norm_keeps_last_axis(%x: tensor<2x3x4xf32>, %g: tensor<4xf32>) -> tensor<3x2x4xf32> {
  %t = seg.permute %x dims = [1, 0, 2] : tensor<2x3x4xf32> -> tensor<3x2x4xf32>
  %n = seg.layer_norm %t, %g, %g epsilon = 1.0e-05 : tensor<3x2x4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<3x2x4xf32>
  return %n : tensor<3x2x4xf32>
}

// -----

// A LayerNorm over two trailing dims, one whose reshape splits the normalized
// dim, and one whose layout change has another user stay where they are.
// CHECK-LABEL: func.func @negative_layer_norm_stays
// CHECK: %[[P:.*]] = seg.permute
// CHECK: %[[R1:.*]] = seg.reshape %[[P]]
// CHECK: seg.layer_norm %[[R1]]
// CHECK: %[[R:.*]] = seg.reshape
// CHECK: seg.layer_norm %[[R]]
// CHECK: %[[Q:.*]] = seg.permute
// CHECK: seg.layer_norm %[[Q]]
func.func @negative_layer_norm_stays(%x: tensor<1x4x2x3xf32>, %g: tensor<2x3xf32>, %v: tensor<6xf32>, %c: tensor<4xf32>) -> (tensor<1x4x2x3xf32>, tensor<1x4x6xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>) {
  %p = seg.permute %x dims = [0, 1, 3, 2] : tensor<1x4x2x3xf32> -> tensor<1x4x3x2xf32>
  %r1 = seg.reshape %p : tensor<1x4x3x2xf32> -> tensor<1x4x2x3xf32>
  %n1 = seg.layer_norm %r1, %g, %g epsilon = 1.0e-05 : tensor<1x4x2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32> -> tensor<1x4x2x3xf32>
  %r2 = seg.reshape %x : tensor<1x4x2x3xf32> -> tensor<1x4x6xf32>
  %n2 = seg.layer_norm %r2, %v, %v epsilon = 1.0e-05 : tensor<1x4x6xf32>, tensor<6xf32>, tensor<6xf32> -> tensor<1x4x6xf32>
  %q = seg.permute %x dims = [0, 2, 3, 1] : tensor<1x4x2x3xf32> -> tensor<1x2x3x4xf32>
  %n3 = seg.layer_norm %q, %c, %c epsilon = 1.0e-05 : tensor<1x2x3x4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<1x2x3x4xf32>
  return %n1, %n2, %q, %n3 : tensor<1x4x2x3xf32>, tensor<1x4x6xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>
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

// -----

// A permute's result split by a reshape: the split moves first, and the
// permute (now of the pieces) meets its inverse. Tokens (N, H·W, C) ->
// (N, H, W, C) -> NCHW is the flatten-transpose undone.
// CHECK-LABEL: func.func @split_reshape_above_permute
// CHECK-SAME: (%[[X:.*]]: tensor<1x4x6xf32>)
// CHECK: %[[S:.*]] = seg.reshape %[[X]] : tensor<1x4x6xf32> -> tensor<1x4x2x3xf32>
// CHECK-NOT: seg.permute
// CHECK: return %[[S]]
func.func @split_reshape_above_permute(%x: tensor<1x4x6xf32>) -> tensor<1x4x2x3xf32> {
  %t = seg.permute %x dims = [0, 2, 1] : tensor<1x4x6xf32> -> tensor<1x6x4xf32>
  %h = seg.reshape %t : tensor<1x6x4xf32> -> tensor<1x2x3x4xf32>
  %y = seg.permute %h dims = [0, 3, 1, 2] : tensor<1x2x3x4xf32> -> tensor<1x4x2x3xf32>
  return %y : tensor<1x4x2x3xf32>
}

// -----

// The swap itself: the permute of the pieces is [0, 2, 3, 1].
// CHECK-LABEL: func.func @split_reshape_swapped
// CHECK-SAME: (%[[X:.*]]: tensor<1x4x6xf32>)
// CHECK: %[[S:.*]] = seg.reshape %[[X]] : tensor<1x4x6xf32> -> tensor<1x4x2x3xf32>
// CHECK: %[[P:.*]] = seg.permute %[[S]] dims = [0, 2, 3, 1] : tensor<1x4x2x3xf32> -> tensor<1x2x3x4xf32>
// CHECK: return %[[P]]
func.func @split_reshape_swapped(%x: tensor<1x4x6xf32>) -> tensor<1x2x3x4xf32> {
  %t = seg.permute %x dims = [0, 2, 1] : tensor<1x4x6xf32> -> tensor<1x6x4xf32>
  %h = seg.reshape %t : tensor<1x6x4xf32> -> tensor<1x2x3x4xf32>
  return %h : tensor<1x2x3x4xf32>
}

// -----

// A reshape that merges permuted dims does not swap (it would need a copy);
// nor does a split of a permute with other users when nothing below the
// reshape composes with the moved permute.
// CHECK-LABEL: func.func @negative_reshape_stays_below_permute
// CHECK: %[[P:.*]] = seg.permute %{{.*}} dims = [0, 2, 3, 1]
// CHECK: seg.reshape %[[P]] : tensor<1x2x3x4xf32> -> tensor<1x6x4xf32>
// CHECK: %[[Q:.*]] = seg.permute %{{.*}} dims = [0, 2, 1]
// CHECK: seg.reshape %[[Q]] : tensor<1x6x4xf32> -> tensor<1x2x3x4xf32>
func.func @negative_reshape_stays_below_permute(%x: tensor<1x4x2x3xf32>, %y: tensor<1x4x6xf32>) -> (tensor<1x6x4xf32>, tensor<1x6x4xf32>, tensor<1x2x3x4xf32>) {
  %p = seg.permute %x dims = [0, 2, 3, 1] : tensor<1x4x2x3xf32> -> tensor<1x2x3x4xf32>
  %m = seg.reshape %p : tensor<1x2x3x4xf32> -> tensor<1x6x4xf32>
  %q = seg.permute %y dims = [0, 2, 1] : tensor<1x4x6xf32> -> tensor<1x6x4xf32>
  %s = seg.reshape %q : tensor<1x6x4xf32> -> tensor<1x2x3x4xf32>
  return %m, %q, %s : tensor<1x6x4xf32>, tensor<1x6x4xf32>, tensor<1x2x3x4xf32>
}

// -----

// UNeXt: tokens feed both a LayerNorm and the residual add. The LayerNorm
// still moves (its permute composes with the one after it), then the add
// does, and no layout change is left.
// CHECK-LABEL: func.func @layer_norm_shared_tokens
// CHECK-SAME: (%[[X:.*]]: tensor<1x4x2x3xf32>, %[[R:.*]]: tensor<1x4x2x3xf32>, %[[G:.*]]: tensor<4xf32>)
// CHECK-NOT: seg.permute
// CHECK-DAG: %[[N:.*]] = seg.layer_norm %[[X]], %[[G]], %[[G]] axis = 1
// CHECK-DAG: %[[A:.*]] = seg.add %[[X]], %[[R]] : tensor<1x4x2x3xf32>, tensor<1x4x2x3xf32>
// CHECK-NOT: seg.permute
// CHECK: return
func.func @layer_norm_shared_tokens(%x: tensor<1x4x2x3xf32>, %r: tensor<1x4x2x3xf32>, %g: tensor<4xf32>) -> (tensor<1x4x2x3xf32>, tensor<1x4x2x3xf32>) {
  %t = seg.permute %x dims = [0, 2, 3, 1] : tensor<1x4x2x3xf32> -> tensor<1x2x3x4xf32>
  %n = seg.layer_norm %t, %g, %g epsilon = 1.0e-05 : tensor<1x2x3x4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<1x2x3x4xf32>
  %nb = seg.permute %n dims = [0, 3, 1, 2] : tensor<1x2x3x4xf32> -> tensor<1x4x2x3xf32>
  %rt = seg.permute %r dims = [0, 2, 3, 1] : tensor<1x4x2x3xf32> -> tensor<1x2x3x4xf32>
  %a = seg.add %t, %rt : tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32> -> tensor<1x2x3x4xf32>
  %ab = seg.permute %a dims = [0, 3, 1, 2] : tensor<1x2x3x4xf32> -> tensor<1x4x2x3xf32>
  return %nb, %ab : tensor<1x4x2x3xf32>, tensor<1x4x2x3xf32>
}

// -----

// A LayerNorm of shared tokens whose result is returned as tokens stays: a
// moved permute would have nothing to compose with.
// CHECK-LABEL: func.func @negative_layer_norm_shared_tokens
// CHECK: %[[T:.*]] = seg.permute
// CHECK: seg.layer_norm %[[T]]
func.func @negative_layer_norm_shared_tokens(%x: tensor<1x4x2x3xf32>, %g: tensor<4xf32>) -> (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>) {
  %t = seg.permute %x dims = [0, 2, 3, 1] : tensor<1x4x2x3xf32> -> tensor<1x2x3x4xf32>
  %n = seg.layer_norm %t, %g, %g epsilon = 1.0e-05 : tensor<1x2x3x4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<1x2x3x4xf32>
  return %t, %n : tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>
}

// -----

// Rolling-UNet's concat of two token maps (x1, x2 of a Lo2 block) -> fc:
// the concat moves to the NCHW maps' channels and the linear becomes a 1×1
// convolution of it.
// CHECK-LABEL: func.func @concat_tokens_linear
// CHECK-SAME: (%[[A:.*]]: tensor<1x4x2x3xf32>, %[[B:.*]]: tensor<1x2x2x3xf32>, %[[W:.*]]: tensor<5x6xf32>)
// CHECK: %[[C:.*]] = seg.concat %[[A]], %[[B]] dim = 1 : tensor<1x4x2x3xf32>, tensor<1x2x2x3xf32> -> tensor<1x6x2x3xf32>
// CHECK: %[[W4:.*]] = seg.reshape %[[W]] : tensor<5x6xf32> -> tensor<5x6x1x1xf32>
// CHECK: %[[Y:.*]] = seg.conv2d %[[C]], %[[W4]] stride = [1, 1] padding = [0, 0]
// CHECK-NOT: seg.permute
// CHECK: return %[[Y]]
func.func @concat_tokens_linear(%a: tensor<1x4x2x3xf32>, %b: tensor<1x2x2x3xf32>, %w: tensor<5x6xf32>) -> tensor<1x5x2x3xf32> {
  %fa = seg.reshape %a : tensor<1x4x2x3xf32> -> tensor<1x4x6xf32>
  %ta = seg.permute %fa dims = [0, 2, 1] : tensor<1x4x6xf32> -> tensor<1x6x4xf32>
  %fb = seg.reshape %b : tensor<1x2x2x3xf32> -> tensor<1x2x6xf32>
  %tb = seg.permute %fb dims = [0, 2, 1] : tensor<1x2x6xf32> -> tensor<1x6x2xf32>
  %c = seg.concat %ta, %tb dim = 2 : tensor<1x6x4xf32>, tensor<1x6x2xf32> -> tensor<1x6x6xf32>
  %y = seg.linear %c, %w : tensor<1x6x6xf32>, tensor<5x6xf32> -> tensor<1x6x5xf32>
  %u = seg.permute %y dims = [0, 2, 1] : tensor<1x6x5xf32> -> tensor<1x5x6xf32>
  %z = seg.reshape %u : tensor<1x5x6xf32> -> tensor<1x5x2x3xf32>
  return %z : tensor<1x5x2x3xf32>
}

// -----

// Operands with different layout changes, or a layout op with another user,
// keep the concat where it is.
// CHECK-LABEL: func.func @negative_concat_stays
// CHECK: %[[P:.*]] = seg.permute %{{.*}} dims = [0, 2, 3, 1]
// CHECK: %[[Q:.*]] = seg.permute %{{.*}} dims = [0, 3, 2, 1]
// CHECK: seg.concat %[[P]], %[[Q]] dim = 3
// CHECK: %[[R:.*]] = seg.permute %{{.*}} dims = [0, 2, 3, 1]
// CHECK: seg.concat %[[R]], %{{.*}} dim = 3
func.func @negative_concat_stays(%a: tensor<1x4x3x3xf32>, %b: tensor<1x2x3x3xf32>) -> (tensor<1x3x3x6xf32>, tensor<1x3x3x8xf32>, tensor<1x3x3x4xf32>) {
  %p = seg.permute %a dims = [0, 2, 3, 1] : tensor<1x4x3x3xf32> -> tensor<1x3x3x4xf32>
  %q = seg.permute %b dims = [0, 3, 2, 1] : tensor<1x2x3x3xf32> -> tensor<1x3x3x2xf32>
  %c = seg.concat %p, %q dim = 3 : tensor<1x3x3x4xf32>, tensor<1x3x3x2xf32> -> tensor<1x3x3x6xf32>
  %r = seg.permute %a dims = [0, 2, 3, 1] : tensor<1x4x3x3xf32> -> tensor<1x3x3x4xf32>
  %s = seg.permute %a dims = [0, 2, 3, 1] : tensor<1x4x3x3xf32> -> tensor<1x3x3x4xf32>
  %d = seg.concat %r, %s dim = 3 : tensor<1x3x3x4xf32>, tensor<1x3x3x4xf32> -> tensor<1x3x3x8xf32>
  return %c, %d, %r : tensor<1x3x3x6xf32>, tensor<1x3x3x8xf32>, tensor<1x3x3x4xf32>
}
