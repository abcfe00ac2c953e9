// RUN: gpuopt-opt %s -split-input-file --convert-seg-to-linalg="remap-conv-inputs=1" | FileCheck %s --implicit-check-not=seg.

// Padding in the load: one contraction over (n, o, oh, ow, c, i, j) whose
// body reads the input at oh·s − p + i·d, clamped into the map, the value
// selected to 0 outside; no tensor.pad, no named convolution. The weight is
// read in the body too (an unread operand gives the reductions their
// bounds), so no producer of it is fused into the loop.
// CHECK-LABEL: func.func @padded
// CHECK-SAME: (%[[X:.*]]: tensor<1x3x8x8xf32>, %[[W:.*]]: tensor<4x3x3x3xf32>, %[[B:.*]]: tensor<4xf32>)
// CHECK-NOT: tensor.pad
// CHECK-NOT: linalg.conv
// CHECK: %[[TAPS:.*]] = tensor.empty() : tensor<3x3x3xf32>
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%[[TAPS]] : tensor<3x3x3xf32>)
// CHECK: arith.muli %{{.*}}, %c2
// CHECK: arith.cmpi sge
// CHECK: arith.cmpi slt
// CHECK: arith.maxsi
// CHECK: arith.minsi
// CHECK: %[[V:.*]] = tensor.extract %[[X]]
// CHECK: %[[S:.*]] = arith.select %{{.*}}, %[[V]], %{{.*}} : f32
// CHECK: %[[WV:.*]] = tensor.extract %[[W]]
// CHECK: arith.mulf %[[S]], %[[WV]]
// CHECK: arith.addf
// CHECK-NOT: tensor.pad
// CHECK: linalg.generic
// CHECK: arith.addf
func.func @padded(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) -> tensor<1x4x4x4xf32> {
  %y = seg.conv2d %x, %w, %b stride = [2, 2] padding = [1, 1] dilation = [1, 1] groups = 1 : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32> -> tensor<1x4x4x4xf32>
  return %y : tensor<1x4x4x4xf32>
}

// -----

// A cyclic shift in the load: offsets normalized to [0, size) at compile
// time (-1 -> 3), one compare and add to wrap, no remainder, no gather;
// without padding nothing is selected away.
// CHECK-LABEL: func.func @cyclic
// CHECK: arith.constant dense<{{\[\[}}0, 3], [1, 0]]> : tensor<2x2xi64>
// CHECK-NOT: arith.remsi
// CHECK: linalg.generic
// CHECK-NOT: arith.remsi
// CHECK: tensor.extract %{{.*}}[%c0, %{{.*}}] : tensor<2x2xi64>
// CHECK: arith.subi
// CHECK: arith.cmpi slt
// CHECK: arith.select
// CHECK: tensor.extract %{{.*}}[%c1, %{{.*}}] : tensor<2x2xi64>
// CHECK-NOT: arith.remsi
// CHECK: tensor.extract %{{.*}} : tensor<1x2x4x4xf32>
// CHECK-NOT: arith.select {{.*}} : f32
// CHECK: arith.mulf
// CHECK: linalg.generic
// CHECK: arith.maximumf
func.func @cyclic(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x1x1xf32>, %b: tensor<2xf32>) -> tensor<1x2x4x4xf32> {
  %y = seg.fused_conv2d %x, %w, %b offsets_h = [0, -1] offsets_w = [5, 0] mode = cyclic stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 activation = relu : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  return %y : tensor<1x2x4x4xf32>
}

// -----

// A zero-mode shift: offsets clamped to [-size, size] (9 -> 4); what the
// shift moves out of the map reads 0.
// CHECK-LABEL: func.func @zero_mode
// CHECK: arith.constant dense<{{\[\[}}4, -1], [0, 0]]> : tensor<2x2xi64>
// CHECK: linalg.generic
// CHECK: arith.subi
// CHECK: arith.cmpi sge
// CHECK: arith.cmpi slt
// CHECK: arith.minsi
// CHECK: arith.select %{{.*}} : f32
func.func @zero_mode(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32> {
  %y = seg.fused_conv2d %x, %w offsets_h = [9, -1] offsets_w = [] mode = zero stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 activation = none : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  return %y : tensor<1x2x4x4xf32>
}

// -----

// Groups: input channel (o floordiv O/G)·(C/G) + c; depthwise: c = o.
// CHECK-LABEL: func.func @groups
// CHECK: linalg.generic
// CHECK: arith.divui %{{.*}}, %c3
// CHECK: arith.muli %{{.*}}, %c2
// CHECK: linalg.generic
// CHECK-NOT: arith.divui
// CHECK: tensor.extract %{{.*}}[%{{.*}}, %[[O:.*]], %{{.*}}, %{{.*}}]
func.func @groups(%x: tensor<1x4x8x8xf32>, %gw: tensor<6x2x1x1xf32>, %dw: tensor<4x1x3x3xf32>) -> (tensor<1x6x8x8xf32>, tensor<1x4x8x8xf32>) {
  %a = seg.conv2d %x, %gw stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 2 : tensor<1x4x8x8xf32>, tensor<6x2x1x1xf32> -> tensor<1x6x8x8xf32>
  %b = seg.conv2d %x, %dw stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 4 : tensor<1x4x8x8xf32>, tensor<4x1x3x3xf32> -> tensor<1x4x8x8xf32>
  return %a, %b : tensor<1x6x8x8xf32>, tensor<1x4x8x8xf32>
}

// -----

// One group: the input channel is the reduction index itself, not computed
// from o (o floordiv O is always 0, but an index that names o would keep the
// input load from being shared by the outputs of a register tile).
// CHECK-LABEL: func.func @one_group
// CHECK: linalg.generic
// CHECK: ^bb0
// CHECK: %[[N:.*]] = linalg.index 0
// CHECK: %[[C:.*]] = linalg.index 4
// CHECK-NOT: arith.divui
// CHECK: tensor.extract %{{.*}}[%[[N]], %[[C]], %{{.*}}, %{{.*}}] : tensor<1x4x8x8xf32>
func.func @one_group(%x: tensor<1x4x8x8xf32>, %w: tensor<6x4x1x1xf32>) -> tensor<1x6x8x8xf32> {
  %y = seg.conv2d %x, %w stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 : tensor<1x4x8x8xf32>, tensor<6x4x1x1xf32> -> tensor<1x6x8x8xf32>
  return %y : tensor<1x6x8x8xf32>
}

// -----

// An attribute the remapped lowering does not know (one a later change could
// add to the op) takes the default lowering: the gather and the named
// convolution.
// CHECK-LABEL: func.func @negative_unknown_attribute
// CHECK: arith.remsi
// CHECK: linalg.conv_2d_nchw_fchw
func.func @negative_unknown_attribute(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32> {
  %y = seg.fused_conv2d %x, %w offsets_h = [0, 1] offsets_w = [] mode = cyclic stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 activation = none {unknown_semantics = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  return %y : tensor<1x2x4x4xf32>
}

// -----

// A frame shift (TSM's, along the frames of the batch) is one gather in front
// of the remapped convolution; its padding is still read in the load.
// CHECK-LABEL: func.func @frame_shift
// CHECK-NOT: tensor.pad
// CHECK: linalg.generic
// CHECK-NOT: linalg.conv_2d_nchw_fchw
// CHECK: arith.select
// CHECK-NOT: linalg.conv_2d_nchw_fchw
func.func @frame_shift(%x: tensor<4x2x4x4xf32>, %w: tensor<2x2x3x3xf32>) -> tensor<4x2x4x4xf32> {
  %y = seg.fused_conv2d %x, %w offsets_h = [] offsets_w = [] mode = zero frame_shift = <frames = 2, offsets = [1, -1]> stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 1 activation = none : (tensor<4x2x4x4xf32>, tensor<2x2x3x3xf32>) -> tensor<4x2x4x4xf32>
  return %y : tensor<4x2x4x4xf32>
}
