// RUN: gpuopt-opt %s -split-input-file --roll-to-deform-conv | FileCheck %s
// RUN: gpuopt-opt %s -split-input-file --gpuopt-optimize --verify-each -o /dev/null
// RUN: gpuopt-opt %s -split-input-file --gpuopt-optimize=deform-conv=true --verify-each -o /dev/null

// A roll group consumed by a 3x3 convolution.
// CHECK-LABEL: func.func @roll_group_into_conv
// CHECK-SAME: (%[[X:.*]]: tensor<1x2x8x8xf32>, %[[W:.*]]: tensor<3x2x3x3xf32>)
// CHECK: %[[O:.*]] = seg.shift_offsets offsets_h = [0, 1] offsets_w = [] mode = cyclic input_size = [8, 8] kernel = [3, 3] stride = [2, 2] padding = [1, 1] dilation = [1, 1] : tensor<1x36x4x4xf32>
// CHECK: %[[Y:.*]] = seg.deform_conv2d %[[X]], %[[O]], %[[W]] stride = [2, 2] padding = [1, 1] dilation = [1, 1] groups = 1 offset_groups = 2
// CHECK-NOT: seg.roll
// CHECK-NOT: seg.channel_shift
// CHECK: return %[[Y]]
func.func @roll_group_into_conv(%x: tensor<1x2x8x8xf32>, %w: tensor<3x2x3x3xf32>) -> tensor<1x3x4x4xf32> {
  %a = seg.slice %x start = [0, 0, 0, 0] size = [1, 1, 8, 8] step = [1, 1, 1, 1] : tensor<1x2x8x8xf32> -> tensor<1x1x8x8xf32>
  %b = seg.slice %x start = [0, 1, 0, 0] size = [1, 1, 8, 8] step = [1, 1, 1, 1] : tensor<1x2x8x8xf32> -> tensor<1x1x8x8xf32>
  %rb = seg.roll %b shifts = [1] dims = [2] : tensor<1x1x8x8xf32>
  %c = seg.concat %a, %rb dim = 1 : tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32> -> tensor<1x2x8x8xf32>
  %y = seg.conv2d %c, %w stride = [2, 2] padding = [1, 1] dilation = [1, 1] groups = 1 : tensor<1x2x8x8xf32>, tensor<3x2x3x3xf32> -> tensor<1x3x4x4xf32>
  return %y : tensor<1x3x4x4xf32>
}

// -----

// A token linear of a zero-filled shift: a 1x1 deformable convolution.
// CHECK-LABEL: func.func @token_linear
// CHECK: %[[O:.*]] = seg.shift_offsets offsets_h = [] offsets_w = [1, -1] mode = zero input_size = [2, 2] kernel = [1, 1]
// CHECK: %[[D:.*]] = seg.deform_conv2d %{{.*}}, %[[O]], %{{.*}} stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 offset_groups = 2
// CHECK: seg.permute %[[D]] dims = [0, 2, 3, 1]
// CHECK-NOT: seg.linear
func.func @token_linear(%x: tensor<1x2x2x2xf32>, %w: tensor<3x2xf32>) -> tensor<1x4x3xf32> {
  %s = seg.channel_shift %x offsets_h = [] offsets_w = [1, -1] mode = zero : tensor<1x2x2x2xf32>
  %p = seg.permute %s dims = [0, 2, 3, 1] : tensor<1x2x2x2xf32> -> tensor<1x2x2x2xf32>
  %t = seg.reshape %p : tensor<1x2x2x2xf32> -> tensor<1x4x2xf32>
  %y = seg.linear %t, %w : tensor<1x4x2xf32>, tensor<3x2xf32> -> tensor<1x4x3xf32>
  return %y : tensor<1x4x3xf32>
}

// -----

// Consumers that are not convolutions keep the shift.
// CHECK-LABEL: func.func @negative_add_consumer
// CHECK: seg.channel_shift
// CHECK: seg.add
// CHECK-NOT: seg.deform_conv2d
func.func @negative_add_consumer(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %r = seg.roll %x shifts = [1] dims = [3] : tensor<1x2x4x4xf32>
  %y = seg.add %r, %x : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32> -> tensor<1x2x4x4xf32>
  return %y : tensor<1x2x4x4xf32>
}

// -----

// A shift without offsets is the identity: the convolution stays plain.
// CHECK-LABEL: func.func @negative_empty_shift
// CHECK-SAME: (%[[X:.*]]: tensor<1x2x4x4xf32>
// CHECK: seg.conv2d %[[X]]
// CHECK-NOT: seg.deform_conv2d
func.func @negative_empty_shift(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32> {
  %s = seg.channel_shift %x offsets_h = [] offsets_w = [] mode = cyclic : tensor<1x2x4x4xf32>
  %y = seg.conv2d %s, %w stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 : tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32> -> tensor<1x2x4x4xf32>
  return %y : tensor<1x2x4x4xf32>
}

// -----

// A roll along the channels alone moves onto the weight, as in --fuse-roll.
// CHECK-LABEL: func.func @channel_roll_into_conv_weight
// CHECK-SAME: (%[[X:.*]]: tensor<1x4x8x8xf32>, %[[W:.*]]: tensor<3x4x3x3xf32>)
// CHECK: %[[R:.*]] = seg.roll %[[W]] shifts = [-2] dims = [1] : tensor<3x4x3x3xf32>
// CHECK: seg.conv2d %[[X]], %[[R]] stride
// CHECK-NOT: seg.deform_conv2d
func.func @channel_roll_into_conv_weight(%x: tensor<1x4x8x8xf32>, %w: tensor<3x4x3x3xf32>) -> tensor<1x3x8x8xf32> {
  %r = seg.roll %x shifts = [6] dims = [1] : tensor<1x4x8x8xf32>
  %y = seg.conv2d %r, %w stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 1 : tensor<1x4x8x8xf32>, tensor<3x4x3x3xf32> -> tensor<1x3x8x8xf32>
  return %y : tensor<1x3x8x8xf32>
}

// -----

// TSM's shift along the frames of the batch: a deformable convolution's
// offsets move taps within an image, not across images, so it stays.
// CHECK-LABEL: func.func @negative_frame_shift
// CHECK: %[[S:.*]] = seg.shift %{{.*}} group_dim = 2 dims = [1] offsets = [-1, 1, 0, 0] mode = zero
// CHECK: %[[M:.*]] = seg.reshape %[[S]]
// CHECK: seg.conv2d %[[M]]
// CHECK-NOT: seg.deform_conv2d
func.func @negative_frame_shift(%x: tensor<4x4x2x2xf32>, %w: tensor<4x4x3x3xf32>) -> tensor<4x4x2x2xf32> {
  %v = seg.reshape %x : tensor<4x4x2x2xf32> -> tensor<2x2x4x2x2xf32>
  %s = seg.shift %v group_dim = 2 dims = [1] offsets = [-1, 1, 0, 0] mode = zero : tensor<2x2x4x2x2xf32>
  %m = seg.reshape %s : tensor<2x2x4x2x2xf32> -> tensor<4x4x2x2xf32>
  %y = seg.conv2d %m, %w stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 1 : tensor<4x4x2x2xf32>, tensor<4x4x3x3xf32> -> tensor<4x4x2x2xf32>
  return %y : tensor<4x4x2x2xf32>
}
