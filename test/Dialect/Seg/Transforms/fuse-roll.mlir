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
