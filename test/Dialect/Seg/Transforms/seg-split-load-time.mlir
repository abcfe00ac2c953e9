// RUN: gpuopt-opt %s -split-input-file --seg-split-load-time | FileCheck %s

// BatchNorm folded into a convolution: the folding runs once, in the
// initializer; the convolution reads the folded values as arguments.
// CHECK-LABEL: func.func @forward_init()
// CHECK-SAME: -> (tensor<4x3x3x3xf32>, tensor<4xf32>)
// CHECK-DAG: %[[W:.*]] = seg.param "conv.weight"
// CHECK-DAG: %[[V:.*]] = seg.param "bn.var"
// CHECK: %[[NW:.*]], %[[NB:.*]] = seg.fold_batch_norm %[[W]], %[[V]], %[[V]], %[[V]], %[[V]]
// CHECK: return %[[NW]], %[[NB]]
// CHECK-LABEL: func.func @forward
// CHECK-SAME: (%[[X:.*]]: tensor<1x3x8x8xf32>, %[[DW:.*]]: tensor<4x3x3x3xf32> {seg.derived = 0 : i64}, %[[DB:.*]]: tensor<4xf32> {seg.derived = 1 : i64})
// CHECK-NOT: seg.param
// CHECK-NOT: seg.fold_batch_norm
// CHECK: seg.fused_conv2d %[[X]], %[[DW]], %[[DB]]
func.func @forward(%x: tensor<1x3x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %w = seg.param "conv.weight" : tensor<4x3x3x3xf32>
  %v = seg.param "bn.var" : tensor<4xf32>
  %nw, %nb = seg.fold_batch_norm %w, %v, %v, %v, %v epsilon = 1.0e-05 : (tensor<4x3x3x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<4x3x3x3xf32>, tensor<4xf32>)
  %y = seg.fused_conv2d %x, %nw, %nb offsets_h = [] offsets_w = [] mode = cyclic stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 1 activation = relu : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  return %y : tensor<1x4x8x8xf32>
}

// -----

// A parameter read directly stays a seg.param of @forward (no copy); a
// reshape of it is hoisted.
// CHECK-LABEL: func.func @forward_init()
// CHECK-SAME: -> tensor<1x4x8x8xf32>
// CHECK: %[[P:.*]] = seg.param "pos"
// CHECK: %[[R:.*]] = seg.reshape %[[P]]
// CHECK: return %[[R]]
// CHECK-LABEL: func.func @forward
// CHECK-SAME: (%[[X:.*]]: tensor<1x4x8x8xf32>, %[[D:.*]]: tensor<1x4x8x8xf32> {seg.derived = 0 : i64})
// CHECK: %[[P:.*]] = seg.param "pos"
// CHECK: %[[A:.*]] = seg.add %[[X]], %[[D]]
// CHECK: %[[T:.*]] = seg.reshape %[[A]]
// CHECK: seg.linear %[[T]], %[[P]]
func.func @forward(%x: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %p = seg.param "pos" : tensor<16x16xf32>
  %r = seg.reshape %p : tensor<16x16xf32> -> tensor<1x4x8x8xf32>
  %a = seg.add %x, %r : tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32> -> tensor<1x4x8x8xf32>
  %t = seg.reshape %a : tensor<1x4x8x8xf32> -> tensor<1x16x16xf32>
  %m = seg.linear %t, %p : tensor<1x16x16xf32>, tensor<16x16xf32> -> tensor<1x16x16xf32>
  %y = seg.reshape %m : tensor<1x16x16xf32> -> tensor<1x4x8x8xf32>
  return %y : tensor<1x4x8x8xf32>
}

// -----

// Nothing to hoist: the initializer is empty and @forward is unchanged.
// CHECK-LABEL: func.func @forward_init() {
// CHECK-NEXT: return
// CHECK-LABEL: func.func @forward
// CHECK-SAME: (%[[X:.*]]: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
// CHECK: %[[W:.*]] = seg.param "w"
// CHECK: seg.linear %[[X]], %[[W]]
func.func @forward(%x: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %w = seg.param "w" : tensor<8x8xf32>
  %y = seg.linear %x, %w : tensor<1x4x8x8xf32>, tensor<8x8xf32> -> tensor<1x4x8x8xf32>
  return %y : tensor<1x4x8x8xf32>
}

// -----

// Only @forward is split (the default --seg-split-load-time=entry=forward).
// CHECK-LABEL: func.func @negative_other_function
// CHECK: seg.reshape
// CHECK-LABEL: func.func @forward_init()
// CHECK-LABEL: func.func @forward
func.func @negative_other_function() -> tensor<64xf32> {
  %p = seg.param "p" : tensor<8x8xf32>
  %r = seg.reshape %p : tensor<8x8xf32> -> tensor<64xf32>
  return %r : tensor<64xf32>
}
func.func @forward(%x: tensor<64xf32>) -> tensor<64xf32> {
  return %x : tensor<64xf32>
}
