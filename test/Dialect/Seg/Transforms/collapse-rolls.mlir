// RUN: gpuopt-opt %s -split-input-file --collapse-rolls | FileCheck %s
// RUN: gpuopt-opt %s -split-input-file --collapse-rolls=report=true -verify-diagnostics -o /dev/null
// RUN: gpuopt-opt %s -split-input-file --gpuopt-optimize --verify-each -o /dev/null
// RUN: gpuopt-opt %s -split-input-file --gpuopt-optimize=deform-conv=true --verify-each -o /dev/null

// Rolling-UNet: one-channel slices, slice c rolled by c along H (slice 0's roll
// by 0 written out too).
// CHECK-LABEL: func.func @one_channel_slices
// CHECK-SAME: (%[[X:.*]]: tensor<1x4x8x8xf32>)
// CHECK: %[[S:.*]] = seg.channel_shift %[[X]] offsets_h = [0, 1, 2, 3] offsets_w = [] mode = cyclic
// CHECK-NOT: seg.roll
// CHECK-NOT: seg.concat
// CHECK: return %[[S]]
// expected-remark @+1 {{collapse-rolls: 4 seg.roll removed, 1 seg.channel_shift, 0 seg.shift}}
func.func @one_channel_slices(%x: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %s0 = seg.slice %x start = [0, 0, 0, 0] size = [1, 1, 8, 8] step = [1, 1, 1, 1] : tensor<1x4x8x8xf32> -> tensor<1x1x8x8xf32>
  %s1 = seg.slice %x start = [0, 1, 0, 0] size = [1, 1, 8, 8] step = [1, 1, 1, 1] : tensor<1x4x8x8xf32> -> tensor<1x1x8x8xf32>
  %s2 = seg.slice %x start = [0, 2, 0, 0] size = [1, 1, 8, 8] step = [1, 1, 1, 1] : tensor<1x4x8x8xf32> -> tensor<1x1x8x8xf32>
  %s3 = seg.slice %x start = [0, 3, 0, 0] size = [1, 1, 8, 8] step = [1, 1, 1, 1] : tensor<1x4x8x8xf32> -> tensor<1x1x8x8xf32>
  %r0 = seg.roll %s0 shifts = [0] dims = [2] : tensor<1x1x8x8xf32>
  %r1 = seg.roll %s1 shifts = [1] dims = [2] : tensor<1x1x8x8xf32>
  %r2 = seg.roll %s2 shifts = [2] dims = [2] : tensor<1x1x8x8xf32>
  %r3 = seg.roll %s3 shifts = [3] dims = [2] : tensor<1x1x8x8xf32>
  %c = seg.concat %r0, %r1, %r2, %r3 dim = 1 : tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32> -> tensor<1x4x8x8xf32>
  return %c : tensor<1x4x8x8xf32>
}

// -----

// torch.chunk(x, 3, 1) of 5 channels: chunks of 2, 2, 1; the middle one unrolled.
// CHECK-LABEL: func.func @chunk_remainder
// CHECK: seg.channel_shift %{{.*}} offsets_h = [] offsets_w = [-1, -1, 0, 0, 7] mode = cyclic
// CHECK-NOT: seg.concat
// expected-remark @+1 {{collapse-rolls: 2 seg.roll removed, 1 seg.channel_shift, 0 seg.shift}}
func.func @chunk_remainder(%x: tensor<2x5x4x6xf32>) -> tensor<2x5x4x6xf32> {
  %a = seg.slice %x start = [0, 0, 0, 0] size = [2, 2, 4, 6] step = [1, 1, 1, 1] : tensor<2x5x4x6xf32> -> tensor<2x2x4x6xf32>
  %b = seg.slice %x start = [0, 2, 0, 0] size = [2, 2, 4, 6] step = [1, 1, 1, 1] : tensor<2x5x4x6xf32> -> tensor<2x2x4x6xf32>
  %c = seg.slice %x start = [0, 4, 0, 0] size = [2, 1, 4, 6] step = [1, 1, 1, 1] : tensor<2x5x4x6xf32> -> tensor<2x1x4x6xf32>
  %ra = seg.roll %a shifts = [-1] dims = [3] : tensor<2x2x4x6xf32>
  %rc = seg.roll %c shifts = [7] dims = [3] : tensor<2x1x4x6xf32>
  %y = seg.concat %ra, %b, %rc dim = 1 : tensor<2x2x4x6xf32>, tensor<2x2x4x6xf32>, tensor<2x1x4x6xf32> -> tensor<2x5x4x6xf32>
  return %y : tensor<2x5x4x6xf32>
}

// -----

// A whole-tensor roll over both spatial dims (Swin) and its use twice.
// CHECK-LABEL: func.func @whole_tensor_two_dims
// CHECK: %[[S:.*]] = seg.channel_shift %{{.*}} offsets_h = [1, 1] offsets_w = [-2, -2] mode = cyclic
// CHECK: seg.add %[[S]], %[[S]]
// expected-remark @+1 {{collapse-rolls: 1 seg.roll removed, 1 seg.channel_shift, 0 seg.shift}}
func.func @whole_tensor_two_dims(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %r = seg.roll %x shifts = [1, -2] dims = [2, 3] : tensor<1x2x4x4xf32>
  %y = seg.add %r, %r : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32> -> tensor<1x2x4x4xf32>
  return %y : tensor<1x2x4x4xf32>
}

// -----

// UNeXt: zero-pad by 2, chunk, roll by -1/0/+1 along H, concat, crop H then W.
// CHECK-LABEL: func.func @pad_roll_crop
// CHECK-SAME: (%[[X:.*]]: tensor<1x3x4x5xf32>)
// CHECK: %[[S:.*]] = seg.channel_shift %[[X]] offsets_h = [-1, 0, 2] offsets_w = [] mode = zero
// CHECK-NOT: seg.pad
// CHECK: return %[[S]]
// expected-remark @+1 {{collapse-rolls: 2 seg.roll removed, 1 seg.channel_shift, 0 seg.shift}}
func.func @pad_roll_crop(%x: tensor<1x3x4x5xf32>) -> tensor<1x3x4x5xf32> {
  %p = seg.pad %x low = [0, 0, 2, 2] high = [0, 0, 2, 2] value = 0.0 : tensor<1x3x4x5xf32> -> tensor<1x3x8x9xf32>
  %a = seg.slice %p start = [0, 0, 0, 0] size = [1, 1, 8, 9] step = [1, 1, 1, 1] : tensor<1x3x8x9xf32> -> tensor<1x1x8x9xf32>
  %b = seg.slice %p start = [0, 1, 0, 0] size = [1, 1, 8, 9] step = [1, 1, 1, 1] : tensor<1x3x8x9xf32> -> tensor<1x1x8x9xf32>
  %c = seg.slice %p start = [0, 2, 0, 0] size = [1, 1, 8, 9] step = [1, 1, 1, 1] : tensor<1x3x8x9xf32> -> tensor<1x1x8x9xf32>
  %ra = seg.roll %a shifts = [-1] dims = [2] : tensor<1x1x8x9xf32>
  %rc = seg.roll %c shifts = [2] dims = [2] : tensor<1x1x8x9xf32>
  %cat = seg.concat %ra, %b, %rc dim = 1 : tensor<1x1x8x9xf32>, tensor<1x1x8x9xf32>, tensor<1x1x8x9xf32> -> tensor<1x3x8x9xf32>
  %h = seg.slice %cat start = [0, 0, 2, 0] size = [1, 3, 4, 9] step = [1, 1, 1, 1] : tensor<1x3x8x9xf32> -> tensor<1x3x4x9xf32>
  %w = seg.slice %h start = [0, 0, 0, 2] size = [1, 3, 4, 5] step = [1, 1, 1, 1] : tensor<1x3x4x9xf32> -> tensor<1x3x4x5xf32>
  return %w : tensor<1x3x4x5xf32>
}

// -----

// An offset larger than the total padding (2 + 2) wraps real data around:
// stays cyclic.
// CHECK-LABEL: func.func @negative_pad_roll_crop_exceeds_padding
// CHECK: seg.pad
// CHECK: seg.channel_shift %{{.*}} offsets_h = [5] offsets_w = [] mode = cyclic
// CHECK: seg.slice
// expected-remark @+1 {{collapse-rolls: 1 seg.roll removed, 1 seg.channel_shift, 0 seg.shift}}
func.func @negative_pad_roll_crop_exceeds_padding(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32> {
  %p = seg.pad %x low = [0, 0, 2, 0] high = [0, 0, 2, 0] value = 0.0 : tensor<1x1x4x4xf32> -> tensor<1x1x8x4xf32>
  %r = seg.roll %p shifts = [5] dims = [2] : tensor<1x1x8x4xf32>
  %c = seg.slice %r start = [0, 0, 2, 0] size = [1, 1, 4, 4] step = [1, 1, 1, 1] : tensor<1x1x8x4xf32> -> tensor<1x1x4x4xf32>
  return %c : tensor<1x1x4x4xf32>
}

// -----

// Padding with a non-zero value is not a zero-filled shift.
// CHECK-LABEL: func.func @negative_pad_value
// CHECK: seg.pad
// CHECK: seg.channel_shift %{{.*}} mode = cyclic
// expected-remark @+1 {{collapse-rolls: 1 seg.roll removed, 1 seg.channel_shift, 0 seg.shift}}
func.func @negative_pad_value(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32> {
  %p = seg.pad %x low = [0, 0, 2, 0] high = [0, 0, 2, 0] value = 1.0 : tensor<1x1x4x4xf32> -> tensor<1x1x8x4xf32>
  %r = seg.roll %p shifts = [1] dims = [2] : tensor<1x1x8x4xf32>
  %c = seg.slice %r start = [0, 0, 2, 0] size = [1, 1, 4, 4] step = [1, 1, 1, 1] : tensor<1x1x8x4xf32> -> tensor<1x1x4x4xf32>
  return %c : tensor<1x1x4x4xf32>
}

// -----

// Slices concatenated out of order are a channel permutation, not a shift.
// CHECK-LABEL: func.func @negative_out_of_order
// CHECK: seg.concat
// expected-remark @+1 {{collapse-rolls: 1 seg.roll removed, 1 seg.channel_shift, 0 seg.shift}}
func.func @negative_out_of_order(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %a = seg.slice %x start = [0, 0, 0, 0] size = [1, 1, 4, 4] step = [1, 1, 1, 1] : tensor<1x2x4x4xf32> -> tensor<1x1x4x4xf32>
  %b = seg.slice %x start = [0, 1, 0, 0] size = [1, 1, 4, 4] step = [1, 1, 1, 1] : tensor<1x2x4x4xf32> -> tensor<1x1x4x4xf32>
  %rb = seg.roll %b shifts = [1] dims = [2] : tensor<1x1x4x4xf32>
  %c = seg.concat %rb, %a dim = 1 : tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32> -> tensor<1x2x4x4xf32>
  return %c : tensor<1x2x4x4xf32>
}

// -----

// Rolls along the channel or batch dims, or of tokens, are not spatial shifts.
// CHECK-LABEL: func.func @negative_non_spatial
// CHECK: seg.roll %{{.*}} shifts = [1] dims = [1]
// CHECK: seg.roll %{{.*}} shifts = [2] dims = [1]
// expected-remark @+1 {{collapse-rolls: 0 seg.roll removed, 0 seg.channel_shift, 0 seg.shift}}
func.func @negative_non_spatial(%x: tensor<1x4x4x4xf32>, %t: tensor<1x16x4xf32>) -> (tensor<1x4x4x4xf32>, tensor<1x16x4xf32>) {
  %a = seg.roll %x shifts = [1] dims = [1] : tensor<1x4x4x4xf32>
  %b = seg.roll %t shifts = [2] dims = [1] : tensor<1x16x4xf32>
  return %a, %b : tensor<1x4x4x4xf32>, tensor<1x16x4xf32>
}
