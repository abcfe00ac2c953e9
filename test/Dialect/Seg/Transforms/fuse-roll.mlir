// RUN: gpuopt-opt %s -split-input-file --fuse-roll | FileCheck %s
// RUN: gpuopt-opt %s -split-input-file --fuse-roll=report=true -verify-diagnostics -o /dev/null
// RUN: gpuopt-opt %s -split-input-file --gpuopt-optimize --verify-each -o /dev/null
// RUN: gpuopt-opt %s -split-input-file --gpuopt-optimize=deform-conv=true --verify-each -o /dev/null

// CHECK-LABEL: func.func @conv_consumer
// CHECK-SAME: (%[[X:.*]]: tensor<1x4x8x8xf32>, %[[W:.*]]: tensor<6x4x3x3xf32>, %[[B:.*]]: tensor<6xf32>)
// CHECK: %[[Y:.*]] = seg.fused_conv2d %[[X]], %[[W]], %[[B]] offsets_h = [0, 1, 2, 3] offsets_w = [] mode = cyclic stride = [2, 2] padding = [1, 1] dilation = [1, 1] groups = 1 activation = none
// CHECK-NOT: seg.channel_shift
// CHECK: return %[[Y]]
// expected-remark @+1 {{fuse-roll: 0 seg.roll removed, 1 shifts fused, 0 seg.channel_shift left, 0 seg.shift left, 2048 bytes no longer moved}}
func.func @conv_consumer(%x: tensor<1x4x8x8xf32>, %w: tensor<6x4x3x3xf32>, %b: tensor<6xf32>) -> tensor<1x6x4x4xf32> {
  %s = seg.channel_shift %x offsets_h = [0, 1, 2, 3] offsets_w = [] mode = cyclic : tensor<1x4x8x8xf32>
  %y = seg.conv2d %s, %w, %b stride = [2, 2] padding = [1, 1] dilation = [1, 1] groups = 1 : tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>, tensor<6xf32> -> tensor<1x6x4x4xf32>
  return %y : tensor<1x6x4x4xf32>
}

// -----

// A roll group written as slices/rolls/concat, consumed by a depthwise conv.
// CHECK-LABEL: func.func @roll_group_into_depthwise_conv
// CHECK: seg.fused_conv2d %{{.*}}, %{{.*}} offsets_h = [] offsets_w = [0, -1] mode = cyclic stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 2
// CHECK-NOT: seg.roll
// CHECK-NOT: seg.concat
// expected-remark @+1 {{fuse-roll: 1 seg.roll removed, 1 shifts fused, 0 seg.channel_shift left, 0 seg.shift left, 2560 bytes no longer moved}}
func.func @roll_group_into_depthwise_conv(%x: tensor<1x2x8x8xf32>, %w: tensor<2x1x3x3xf32>) -> tensor<1x2x8x8xf32> {
  %a = seg.slice %x start = [0, 0, 0, 0] size = [1, 1, 8, 8] step = [1, 1, 1, 1] : tensor<1x2x8x8xf32> -> tensor<1x1x8x8xf32>
  %b = seg.slice %x start = [0, 1, 0, 0] size = [1, 1, 8, 8] step = [1, 1, 1, 1] : tensor<1x2x8x8xf32> -> tensor<1x1x8x8xf32>
  %rb = seg.roll %b shifts = [-1] dims = [3] : tensor<1x1x8x8xf32>
  %c = seg.concat %a, %rb dim = 1 : tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32> -> tensor<1x2x8x8xf32>
  %y = seg.conv2d %c, %w stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 2 : tensor<1x2x8x8xf32>, tensor<2x1x3x3xf32> -> tensor<1x2x8x8xf32>
  return %y : tensor<1x2x8x8xf32>
}

// -----

// Rolling-UNet's OR-MLP: NCHW -> shift -> flatten(2).transpose(1, 2) -> Linear.
// CHECK-LABEL: func.func @linear_on_flattened_tokens
// CHECK-SAME: (%[[X:.*]]: tensor<1x4x2x3xf32>, %[[W:.*]]: tensor<5x4xf32>, %[[B:.*]]: tensor<5xf32>)
// CHECK: %[[W4:.*]] = seg.reshape %[[W]] : tensor<5x4xf32> -> tensor<5x4x1x1xf32>
// CHECK: %[[C:.*]] = seg.fused_conv2d %[[X]], %[[W4]], %[[B]] offsets_h = [0, 1, 2, 3] offsets_w = [] mode = cyclic stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 activation = none : {{.*}} -> tensor<1x5x2x3xf32>
// CHECK: %[[F:.*]] = seg.reshape %[[C]] : tensor<1x5x2x3xf32> -> tensor<1x5x6xf32>
// CHECK: %[[T:.*]] = seg.permute %[[F]] dims = [0, 2, 1] : tensor<1x5x6xf32> -> tensor<1x6x5xf32>
// CHECK-NOT: seg.linear
// CHECK: return %[[T]]
// expected-remark @+1 {{fuse-roll: 0 seg.roll removed, 1 shifts fused, 0 seg.channel_shift left, 0 seg.shift left, 192 bytes no longer moved}}
func.func @linear_on_flattened_tokens(%x: tensor<1x4x2x3xf32>, %w: tensor<5x4xf32>, %b: tensor<5xf32>) -> tensor<1x6x5xf32> {
  %s = seg.channel_shift %x offsets_h = [0, 1, 2, 3] offsets_w = [] mode = cyclic : tensor<1x4x2x3xf32>
  %f = seg.reshape %s : tensor<1x4x2x3xf32> -> tensor<1x4x6xf32>
  %t = seg.permute %f dims = [0, 2, 1] : tensor<1x4x6xf32> -> tensor<1x6x4xf32>
  %y = seg.linear %t, %w, %b : tensor<1x6x4xf32>, tensor<5x4xf32>, tensor<5xf32> -> tensor<1x6x5xf32>
  return %y : tensor<1x6x5xf32>
}

// -----

// Channels-last tokens: permute [0, 2, 3, 1] then reshape (N, H*W, C).
// CHECK-LABEL: func.func @linear_on_channels_last_tokens
// CHECK: %[[C:.*]] = seg.fused_conv2d %{{.*}}, %{{.*}} offsets_h = [] offsets_w = [1, -1] mode = zero
// CHECK: %[[P:.*]] = seg.permute %[[C]] dims = [0, 2, 3, 1] : tensor<1x3x2x2xf32> -> tensor<1x2x2x3xf32>
// CHECK: %[[R:.*]] = seg.reshape %[[P]] : tensor<1x2x2x3xf32> -> tensor<1x4x3xf32>
// CHECK: return %[[R]]
// expected-remark @+1 {{fuse-roll: 0 seg.roll removed, 1 shifts fused, 0 seg.channel_shift left, 0 seg.shift left, 64 bytes no longer moved}}
func.func @linear_on_channels_last_tokens(%x: tensor<1x2x2x2xf32>, %w: tensor<3x2xf32>) -> tensor<1x4x3xf32> {
  %s = seg.channel_shift %x offsets_h = [] offsets_w = [1, -1] mode = zero : tensor<1x2x2x2xf32>
  %p = seg.permute %s dims = [0, 2, 3, 1] : tensor<1x2x2x2xf32> -> tensor<1x2x2x2xf32>
  %t = seg.reshape %p : tensor<1x2x2x2xf32> -> tensor<1x4x2xf32>
  %y = seg.linear %t, %w : tensor<1x4x2xf32>, tensor<3x2xf32> -> tensor<1x4x3xf32>
  return %y : tensor<1x4x3xf32>
}

// -----

// A shift with a consumer that cannot absorb it stays as one op; the conv
// consumer still reads the unshifted input through its addressing.
// CHECK-LABEL: func.func @shift_with_two_consumers
// CHECK-SAME: (%[[X:.*]]: tensor<1x2x4x4xf32>
// CHECK-DAG: %[[S:.*]] = seg.channel_shift %[[X]]
// CHECK-DAG: seg.fused_conv2d %[[X]]
// CHECK: seg.add %[[S]]
// expected-remark @+1 {{fuse-roll: 1 seg.roll removed, 1 shifts fused, 1 seg.channel_shift left, 0 seg.shift left, 0 bytes no longer moved}}
func.func @shift_with_two_consumers(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32> {
  %r = seg.roll %x shifts = [1] dims = [3] : tensor<1x2x4x4xf32>
  %c = seg.conv2d %r, %w stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 : tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32> -> tensor<1x2x4x4xf32>
  %y = seg.add %r, %c : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32> -> tensor<1x2x4x4xf32>
  return %y : tensor<1x2x4x4xf32>
}

// -----

// A linear over the last (W) dim of an NCHW map is not a channel mix.
// CHECK-LABEL: func.func @negative_linear_over_width
// CHECK: seg.channel_shift
// CHECK: seg.linear
// expected-remark @+1 {{fuse-roll: 0 seg.roll removed, 0 shifts fused, 1 seg.channel_shift left, 0 seg.shift left, 0 bytes no longer moved}}
func.func @negative_linear_over_width(%x: tensor<1x2x4x4xf32>, %w: tensor<3x4xf32>) -> tensor<1x2x4x3xf32> {
  %s = seg.channel_shift %x offsets_h = [1, 2] offsets_w = [] mode = cyclic : tensor<1x2x4x4xf32>
  %y = seg.linear %s, %w : tensor<1x2x4x4xf32>, tensor<3x4xf32> -> tensor<1x2x4x3xf32>
  return %y : tensor<1x2x4x3xf32>
}

// -----

// A permute that is not the token layout ([0, 2, 1] of a non-flattened map).
// CHECK-LABEL: func.func @negative_linear_other_permute
// CHECK: seg.channel_shift
// CHECK: seg.linear
// expected-remark @+1 {{fuse-roll: 0 seg.roll removed, 0 shifts fused, 1 seg.channel_shift left, 0 seg.shift left, 0 bytes no longer moved}}
func.func @negative_linear_other_permute(%x: tensor<1x2x4x4xf32>, %w: tensor<3x4xf32>) -> tensor<1x2x4x3xf32> {
  %s = seg.channel_shift %x offsets_h = [1, 2] offsets_w = [] mode = cyclic : tensor<1x2x4x4xf32>
  %p = seg.permute %s dims = [0, 1, 3, 2] : tensor<1x2x4x4xf32> -> tensor<1x2x4x4xf32>
  %y = seg.linear %p, %w : tensor<1x2x4x4xf32>, tensor<3x4xf32> -> tensor<1x2x4x3xf32>
  return %y : tensor<1x2x4x3xf32>
}

// -----

// A roll along the channels of an ungrouped conv's input is a permutation of
// the weight's input channels: conv(roll(X, s, 1), W) = conv(X, roll(W, -s, 1)).
// Through a channel concat, only the rolled piece's weight slice rotates.
// CHECK-LABEL: func.func @channel_roll_into_conv_weight
// CHECK-SAME: (%[[X:.*]]: tensor<1x4x8x8xf32>, %[[S:.*]]: tensor<1x2x8x8xf32>, %[[W:.*]]: tensor<3x6x1x1xf32>)
// CHECK-DAG: %[[W0:.*]] = seg.slice %[[W]] start = [0, 0, 0, 0] size = [3, 4, 1, 1] step = [1, 1, 1, 1]
// CHECK-DAG: %[[R:.*]] = seg.roll %[[W0]] shifts = [-1] dims = [1] : tensor<3x4x1x1xf32>
// CHECK-DAG: %[[W1:.*]] = seg.slice %[[W]] start = [0, 4, 0, 0] size = [3, 2, 1, 1] step = [1, 1, 1, 1]
// CHECK-DAG: %[[IN:.*]] = seg.concat %[[X]], %[[S]] dim = 1
// CHECK-DAG: %[[WC:.*]] = seg.concat %[[R]], %[[W1]] dim = 1
// CHECK: seg.conv2d %[[IN]], %[[WC]] stride
// CHECK-NOT: seg.roll
// expected-remark @+1 {{fuse-roll: 0 seg.roll removed, 0 shifts fused, 0 seg.channel_shift left, 0 seg.shift left, 1664 bytes no longer moved}}
func.func @channel_roll_into_conv_weight(%x: tensor<1x4x8x8xf32>, %skip: tensor<1x2x8x8xf32>, %w: tensor<3x6x1x1xf32>) -> tensor<1x3x8x8xf32> {
  %r = seg.roll %x shifts = [-3] dims = [1] : tensor<1x4x8x8xf32>
  %c = seg.concat %r, %skip dim = 1 : tensor<1x4x8x8xf32>, tensor<1x2x8x8xf32> -> tensor<1x6x8x8xf32>
  %y = seg.conv2d %c, %w stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 : tensor<1x6x8x8xf32>, tensor<3x6x1x1xf32> -> tensor<1x3x8x8xf32>
  return %y : tensor<1x3x8x8xf32>
}

// -----

// A shift under a convolution that already reads through one (folded before
// the inner shift was recognized: the crop of a circular pad along H and W):
// cyclic shifts compose, the offsets add mod the size (H: 3 + 2 = 1 mod 4).
// CHECK-LABEL: func.func @cyclic_shift_into_shifted_conv
// CHECK-SAME: (%[[X:.*]]: tensor<1x2x4x4xf32>, %[[W:.*]]: tensor<2x2x3x3xf32>)
// CHECK: %[[Y:.*]] = seg.fused_conv2d %[[X]], %[[W]] offsets_h = [1, 1] offsets_w = [1, 2] mode = cyclic stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 1 activation = relu
// CHECK-NOT: seg.channel_shift
// CHECK: return %[[Y]]
// expected-remark @+1 {{fuse-roll: 0 seg.roll removed, 0 shifts fused, 0 seg.channel_shift left, 0 seg.shift left, 256 bytes no longer moved}}
func.func @cyclic_shift_into_shifted_conv(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x3x3xf32>) -> tensor<1x2x4x4xf32> {
  %s = seg.channel_shift %x offsets_h = [2, 0] offsets_w = [1, 2] mode = cyclic : tensor<1x2x4x4xf32>
  %y = seg.fused_conv2d %s, %w offsets_h = [3, 1] offsets_w = [] mode = cyclic stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 1 activation = relu : (tensor<1x2x4x4xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x4x4xf32>
  return %y : tensor<1x2x4x4xf32>
}

// -----

// A grouped conv mixes only channels of one group: a channel roll across
// groups is not a weight permutation, so it stays.
// CHECK-LABEL: func.func @negative_channel_roll_grouped_conv
// CHECK: %[[R:.*]] = seg.roll %{{.*}} shifts = [1] dims = [1]
// CHECK: seg.conv2d %[[R]]
// expected-remark @+1 {{fuse-roll: 0 seg.roll removed, 0 shifts fused, 0 seg.channel_shift left, 0 seg.shift left, 0 bytes no longer moved}}
func.func @negative_channel_roll_grouped_conv(%x: tensor<1x4x8x8xf32>, %w: tensor<4x2x3x3xf32>) -> tensor<1x4x8x8xf32> {
  %r = seg.roll %x shifts = [1] dims = [1] : tensor<1x4x8x8xf32>
  %y = seg.conv2d %r, %w stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 2 : tensor<1x4x8x8xf32>, tensor<4x2x3x3xf32> -> tensor<1x4x8x8xf32>
  return %y : tensor<1x4x8x8xf32>
}

// -----

// Zero-filled shifts along different axes of each channel compose.
// CHECK-LABEL: func.func @zero_shifts_on_other_axes_compose
// CHECK-SAME: (%[[X:.*]]: tensor<1x2x4x4xf32>, %[[W:.*]]: tensor<2x2x1x1xf32>)
// CHECK: seg.fused_conv2d %[[X]], %[[W]] offsets_h = [1, 0] offsets_w = [0, -1] mode = zero
// CHECK-NOT: seg.channel_shift
// expected-remark @+1 {{fuse-roll: 0 seg.roll removed, 0 shifts fused, 0 seg.channel_shift left, 0 seg.shift left, 256 bytes no longer moved}}
func.func @zero_shifts_on_other_axes_compose(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32> {
  %s = seg.channel_shift %x offsets_h = [] offsets_w = [0, -1] mode = zero : tensor<1x2x4x4xf32>
  %y = seg.fused_conv2d %s, %w offsets_h = [1, 0] offsets_w = [] mode = zero stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 activation = none : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  return %y : tensor<1x2x4x4xf32>
}

// -----

// A roll along channels and width at once is not only a channel permutation.
// CHECK-LABEL: func.func @negative_channel_and_width_roll
// CHECK: seg.roll %{{.*}} shifts = [1, 2] dims = [1, 3]
// CHECK-NOT: seg.roll
// expected-remark @+1 {{fuse-roll: 0 seg.roll removed, 0 shifts fused, 0 seg.channel_shift left, 0 seg.shift left, 0 bytes no longer moved}}
func.func @negative_channel_and_width_roll(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x1x1xf32>) -> tensor<1x4x8x8xf32> {
  %r = seg.roll %x shifts = [1, 2] dims = [1, 3] : tensor<1x4x8x8xf32>
  %y = seg.conv2d %r, %w stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 : tensor<1x4x8x8xf32>, tensor<4x4x1x1xf32> -> tensor<1x4x8x8xf32>
  return %y : tensor<1x4x8x8xf32>
}

// -----

// Not composed: two zero-filled shifts of one channel along one axis in
// opposite directions zero both ends (not the identity); a zero-filled shift
// under a cyclic one.
// CHECK-LABEL: func.func @negative_shifts_that_do_not_compose
// CHECK-SAME: (%[[X:.*]]: tensor<1x2x4x4xf32>, %[[W:.*]]: tensor<2x2x1x1xf32>)
// CHECK: %[[S:.*]] = seg.channel_shift %[[X]] offsets_h = [-1, 0] offsets_w = [] mode = zero
// CHECK: seg.fused_conv2d %[[S]], %[[W]] offsets_h = [1, 0] offsets_w = [] mode = zero
// CHECK: seg.fused_conv2d %[[S]], %[[W]] offsets_h = [] offsets_w = [1, 1] mode = cyclic
// expected-remark @+1 {{fuse-roll: 0 seg.roll removed, 0 shifts fused, 1 seg.channel_shift left, 0 seg.shift left, 0 bytes no longer moved}}
func.func @negative_shifts_that_do_not_compose(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x1x1xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) {
  %s = seg.channel_shift %x offsets_h = [-1, 0] offsets_w = [] mode = zero : tensor<1x2x4x4xf32>
  %y = seg.fused_conv2d %s, %w offsets_h = [1, 0] offsets_w = [] mode = zero stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 activation = none : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %z = seg.fused_conv2d %s, %w offsets_h = [] offsets_w = [1, 1] mode = cyclic stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 activation = none : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  return %y, %z : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
}

// -----

// TSM: a zero-filled shift along T of the (N/T, T, C, H, W) view, read back
// as (N, C, H, W) by the convolution, becomes its frame_shift: the view, the
// shift and the merge disappear.
// CHECK-LABEL: func.func @frame_shift_into_conv
// CHECK-SAME: (%[[X:.*]]: tensor<4x4x2x2xf32>, %[[W:.*]]: tensor<3x4x3x3xf32>, %[[B:.*]]: tensor<3xf32>)
// CHECK: %[[Y:.*]] = seg.fused_conv2d %[[X]], %[[W]], %[[B]] offsets_h = [] offsets_w = [] mode = zero frame_shift = <frames = 2, offsets = [-1, 1, 0, 0]> stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 1 activation = none
// CHECK-NOT: seg.shift
// CHECK-NOT: seg.reshape
// CHECK: return %[[Y]]
// expected-remark @+1 {{fuse-roll: 0 seg.roll removed, 1 shifts fused, 0 seg.channel_shift left, 0 seg.shift left, 512 bytes no longer moved}}
func.func @frame_shift_into_conv(%x: tensor<4x4x2x2xf32>, %w: tensor<3x4x3x3xf32>, %b: tensor<3xf32>) -> tensor<4x3x2x2xf32> {
  %v = seg.reshape %x : tensor<4x4x2x2xf32> -> tensor<2x2x4x2x2xf32>
  %s = seg.shift %v group_dim = 2 dims = [1] offsets = [-1, 1, 0, 0] mode = zero : tensor<2x2x4x2x2xf32>
  %m = seg.reshape %s : tensor<2x2x4x2x2xf32> -> tensor<4x4x2x2xf32>
  %y = seg.conv2d %m, %w, %b stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 1 : tensor<4x4x2x2xf32>, tensor<3x4x3x3xf32>, tensor<3xf32> -> tensor<4x3x2x2xf32>
  return %y : tensor<4x3x2x2xf32>
}

// -----

// With a (dh, dw) shift of the merged map in between: both fold, each on its
// own axis.
// CHECK-LABEL: func.func @frame_shift_and_spatial_shift
// CHECK-SAME: (%[[X:.*]]: tensor<4x4x2x2xf32>, %[[W:.*]]: tensor<4x4x1x1xf32>)
// CHECK: seg.fused_conv2d %[[X]], %[[W]] offsets_h = [1, 0, 0, -1] offsets_w = [] mode = zero frame_shift = <frames = 2, offsets = [1, 1, -1, 0]> stride
// CHECK-NOT: seg.shift
// CHECK-NOT: seg.channel_shift
// expected-remark @+1 {{fuse-roll: 0 seg.roll removed, 1 shifts fused, 0 seg.channel_shift left, 0 seg.shift left, 1024 bytes no longer moved}}
func.func @frame_shift_and_spatial_shift(%x: tensor<4x4x2x2xf32>, %w: tensor<4x4x1x1xf32>) -> tensor<4x4x2x2xf32> {
  %v = seg.reshape %x : tensor<4x4x2x2xf32> -> tensor<2x2x4x2x2xf32>
  %s = seg.shift %v group_dim = 2 dims = [1] offsets = [1, 1, -1, 0] mode = zero : tensor<2x2x4x2x2xf32>
  %m = seg.reshape %s : tensor<2x2x4x2x2xf32> -> tensor<4x4x2x2xf32>
  %c = seg.channel_shift %m offsets_h = [1, 0, 0, -1] offsets_w = [] mode = zero : tensor<4x4x2x2xf32>
  %y = seg.conv2d %c, %w stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 : tensor<4x4x2x2xf32>, tensor<4x4x1x1xf32> -> tensor<4x4x2x2xf32>
  return %y : tensor<4x4x2x2xf32>
}

// -----

// Into a convolution that already reads through a frame shift (and has a
// residual and an activation): per channel one offset is 0 or both have the
// same sign, and the sum stays inside the clip of 4.
// CHECK-LABEL: func.func @frame_shifts_compose
// CHECK-SAME: (%[[X:.*]]: tensor<4x4x2x2xf32>, %[[W:.*]]: tensor<4x4x1x1xf32>, %[[R:.*]]: tensor<4x4x2x2xf32>)
// CHECK: seg.fused_conv2d %[[X]], %[[W]] residual %[[R]] offsets_h = [] offsets_w = [] mode = zero frame_shift = <frames = 4, offsets = [2, 2, -1, 3]> stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 activation = relu
// CHECK-NOT: seg.shift
// expected-remark @+1 {{fuse-roll: 0 seg.roll removed, 0 shifts fused, 0 seg.channel_shift left, 0 seg.shift left, 512 bytes no longer moved}}
func.func @frame_shifts_compose(%x: tensor<4x4x2x2xf32>, %w: tensor<4x4x1x1xf32>, %r: tensor<4x4x2x2xf32>) -> tensor<4x4x2x2xf32> {
  %v = seg.reshape %x : tensor<4x4x2x2xf32> -> tensor<1x4x4x2x2xf32>
  %s = seg.shift %v group_dim = 2 dims = [1] offsets = [1, 2, 0, 1] mode = zero : tensor<1x4x4x2x2xf32>
  %m = seg.reshape %s : tensor<1x4x4x2x2xf32> -> tensor<4x4x2x2xf32>
  %y = seg.fused_conv2d %m, %w residual %r offsets_h = [] offsets_w = [] mode = zero frame_shift = <frames = 4, offsets = [1, 0, -1, 2]> stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 activation = relu : (tensor<4x4x2x2xf32>, tensor<4x4x1x1xf32>, tensor<4x4x2x2xf32>) -> tensor<4x4x2x2xf32>
  return %y : tensor<4x4x2x2xf32>
}

// -----

// Not composed: channel 0 shifted both ways (zeroing both ends is no
// shift), channel 1 by 2 + 2 frames, the whole clip of 4.
// CHECK-LABEL: func.func @negative_frame_shifts_that_do_not_compose
// CHECK: %[[S:.*]] = seg.shift %{{.*}} group_dim = 2 dims = [1] offsets = [-1, 2, 0, 0] mode = zero
// CHECK: %[[M:.*]] = seg.reshape %[[S]]
// CHECK: seg.fused_conv2d %[[M]], %{{.*}} frame_shift = <frames = 4, offsets = [1, 0, 0, 0]>
// CHECK: seg.fused_conv2d %[[M]], %{{.*}} frame_shift = <frames = 4, offsets = [0, 2, 0, 0]>
// expected-remark @+1 {{fuse-roll: 0 seg.roll removed, 0 shifts fused, 0 seg.channel_shift left, 1 seg.shift left, 0 bytes no longer moved}}
func.func @negative_frame_shifts_that_do_not_compose(%x: tensor<4x4x2x2xf32>, %w: tensor<4x4x1x1xf32>) -> (tensor<4x4x2x2xf32>, tensor<4x4x2x2xf32>) {
  %v = seg.reshape %x : tensor<4x4x2x2xf32> -> tensor<1x4x4x2x2xf32>
  %s = seg.shift %v group_dim = 2 dims = [1] offsets = [-1, 2, 0, 0] mode = zero : tensor<1x4x4x2x2xf32>
  %m = seg.reshape %s : tensor<1x4x4x2x2xf32> -> tensor<4x4x2x2xf32>
  %y = seg.fused_conv2d %m, %w offsets_h = [] offsets_w = [] mode = zero frame_shift = <frames = 4, offsets = [1, 0, 0, 0]> stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 activation = none : (tensor<4x4x2x2xf32>, tensor<4x4x1x1xf32>) -> tensor<4x4x2x2xf32>
  %z = seg.fused_conv2d %m, %w offsets_h = [] offsets_w = [] mode = zero frame_shift = <frames = 4, offsets = [0, 2, 0, 0]> stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 activation = none : (tensor<4x4x2x2xf32>, tensor<4x4x1x1xf32>) -> tensor<4x4x2x2xf32>
  return %y, %z : tensor<4x4x2x2xf32>, tensor<4x4x2x2xf32>
}

// -----

// A cyclic shift along T (frames wrapping around the clip) is no frame_shift.
// CHECK-LABEL: func.func @negative_cyclic_frame_shift
// CHECK: seg.shift %{{.*}} group_dim = 2 dims = [1] offsets = [-1, 1, 0, 0] mode = cyclic
// CHECK: seg.conv2d
// CHECK-NOT: seg.fused_conv2d
// expected-remark @+1 {{fuse-roll: 0 seg.roll removed, 0 shifts fused, 0 seg.channel_shift left, 1 seg.shift left, 0 bytes no longer moved}}
func.func @negative_cyclic_frame_shift(%x: tensor<4x4x2x2xf32>, %w: tensor<4x4x1x1xf32>) -> tensor<4x4x2x2xf32> {
  %v = seg.reshape %x : tensor<4x4x2x2xf32> -> tensor<2x2x4x2x2xf32>
  %s = seg.shift %v group_dim = 2 dims = [1] offsets = [-1, 1, 0, 0] mode = cyclic : tensor<2x2x4x2x2xf32>
  %m = seg.reshape %s : tensor<2x2x4x2x2xf32> -> tensor<4x4x2x2xf32>
  %y = seg.conv2d %m, %w stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 : tensor<4x4x2x2xf32>, tensor<4x4x1x1xf32> -> tensor<4x4x2x2xf32>
  return %y : tensor<4x4x2x2xf32>
}

// -----

// Groups that are not the channels (rows of the 5-D view), a shift along T
// and W at once, and a view whose frames the reshape merges into the
// channels instead of the batch: none is a frame shift of the convolution.
// CHECK-LABEL: func.func @negative_not_a_frame_shift_of_the_channels
// CHECK: seg.shift %{{.*}} group_dim = 3 dims = [1]
// CHECK: seg.shift %{{.*}} group_dim = 2 dims = [1, 4]
// CHECK: seg.shift %{{.*}} group_dim = 2 dims = [1]
// CHECK-NOT: seg.fused_conv2d
// expected-remark @+1 {{fuse-roll: 0 seg.roll removed, 0 shifts fused, 0 seg.channel_shift left, 3 seg.shift left, 0 bytes no longer moved}}
func.func @negative_not_a_frame_shift_of_the_channels(%x: tensor<4x4x2x2xf32>, %w: tensor<4x4x1x1xf32>, %w8: tensor<4x8x1x1xf32>) -> (tensor<4x4x2x2xf32>, tensor<4x4x2x2xf32>, tensor<2x4x2x2xf32>) {
  %v = seg.reshape %x : tensor<4x4x2x2xf32> -> tensor<2x2x4x2x2xf32>
  %s1 = seg.shift %v group_dim = 3 dims = [1] offsets = [1, 0] mode = zero : tensor<2x2x4x2x2xf32>
  %m1 = seg.reshape %s1 : tensor<2x2x4x2x2xf32> -> tensor<4x4x2x2xf32>
  %y1 = seg.conv2d %m1, %w stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 : tensor<4x4x2x2xf32>, tensor<4x4x1x1xf32> -> tensor<4x4x2x2xf32>
  %s2 = seg.shift %v group_dim = 2 dims = [1, 4] offsets = [1, 0, 0, 0, 0, 1, 0, 0] mode = zero : tensor<2x2x4x2x2xf32>
  %m2 = seg.reshape %s2 : tensor<2x2x4x2x2xf32> -> tensor<4x4x2x2xf32>
  %y2 = seg.conv2d %m2, %w stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 : tensor<4x4x2x2xf32>, tensor<4x4x1x1xf32> -> tensor<4x4x2x2xf32>
  %s3 = seg.shift %v group_dim = 2 dims = [1] offsets = [1, 0, 0, -1] mode = zero : tensor<2x2x4x2x2xf32>
  %m3 = seg.reshape %s3 : tensor<2x2x4x2x2xf32> -> tensor<2x8x2x2xf32>
  %y3 = seg.conv2d %m3, %w8 stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 : tensor<2x8x2x2xf32>, tensor<4x8x1x1xf32> -> tensor<2x4x2x2xf32>
  return %y1, %y2, %y3 : tensor<4x4x2x2xf32>, tensor<4x4x2x2xf32>, tensor<2x4x2x2xf32>
}

// -----

// A channel shifted by the whole clip (reads only zeros) and a consumer that
// is no convolution: the shift stays.
// CHECK-LABEL: func.func @negative_whole_clip_and_not_a_conv
// CHECK: seg.shift %{{.*}} offsets = [2, 0, 0, 0] mode = zero
// CHECK: seg.conv2d
// CHECK: seg.shift %{{.*}} offsets = [1, 0, 0, 0] mode = zero
// CHECK: seg.relu
// CHECK-NOT: seg.fused_conv2d
// expected-remark @+1 {{fuse-roll: 0 seg.roll removed, 0 shifts fused, 0 seg.channel_shift left, 2 seg.shift left, 0 bytes no longer moved}}
func.func @negative_whole_clip_and_not_a_conv(%x: tensor<4x4x2x2xf32>, %w: tensor<4x4x1x1xf32>) -> (tensor<4x4x2x2xf32>, tensor<4x4x2x2xf32>) {
  %v = seg.reshape %x : tensor<4x4x2x2xf32> -> tensor<2x2x4x2x2xf32>
  %s = seg.shift %v group_dim = 2 dims = [1] offsets = [2, 0, 0, 0] mode = zero : tensor<2x2x4x2x2xf32>
  %m = seg.reshape %s : tensor<2x2x4x2x2xf32> -> tensor<4x4x2x2xf32>
  %y = seg.conv2d %m, %w stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 : tensor<4x4x2x2xf32>, tensor<4x4x1x1xf32> -> tensor<4x4x2x2xf32>
  %t = seg.shift %v group_dim = 2 dims = [1] offsets = [1, 0, 0, 0] mode = zero : tensor<2x2x4x2x2xf32>
  %n = seg.reshape %t : tensor<2x2x4x2x2xf32> -> tensor<4x4x2x2xf32>
  %r = seg.relu %n : tensor<4x4x2x2xf32>
  return %y, %r : tensor<4x4x2x2xf32>, tensor<4x4x2x2xf32>
}
