// RUN: gpuopt-opt %s -split-input-file -canonicalize | FileCheck %s
// RUN: gpuopt-opt %s -split-input-file --pass-pipeline="builtin.module(func.func(canonicalize))" | FileCheck %s

// CHECK-LABEL: func.func @roll_by_zero
// CHECK-SAME: (%[[X:.*]]: tensor<1x4x8x8xf32>)
// CHECK-NOT: seg.roll
// CHECK: return %[[X]]
func.func @roll_by_zero(%x: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %y = seg.roll %x shifts = [0] dims = [2] : tensor<1x4x8x8xf32>
  return %y : tensor<1x4x8x8xf32>
}

// -----

// CHECK-LABEL: func.func @roll_by_multiple_of_size
// CHECK-SAME: (%[[X:.*]]: tensor<1x4x8x6xf32>)
// CHECK-NOT: seg.roll
// CHECK: return %[[X]]
func.func @roll_by_multiple_of_size(%x: tensor<1x4x8x6xf32>) -> tensor<1x4x8x6xf32> {
  %y = seg.roll %x shifts = [16, -6] dims = [2, 3] : tensor<1x4x8x6xf32>
  return %y : tensor<1x4x8x6xf32>
}

// -----

// CHECK-LABEL: func.func @negative_roll_by_non_multiple
// CHECK: seg.roll %{{.*}} shifts = [16, -5] dims = [2, 3]
func.func @negative_roll_by_non_multiple(%x: tensor<1x4x8x6xf32>) -> tensor<1x4x8x6xf32> {
  %y = seg.roll %x shifts = [16, -5] dims = [2, 3] : tensor<1x4x8x6xf32>
  return %y : tensor<1x4x8x6xf32>
}

// -----

// roll(roll(x, a), b) over the same dims -> roll(x, (a + b) mod L).
// CHECK-LABEL: func.func @roll_of_roll
// CHECK-SAME: (%[[X:.*]]: tensor<1x4x8x6xf32>)
// CHECK: %[[R:.*]] = seg.roll %[[X]] shifts = [5] dims = [2]
// CHECK-NOT: seg.roll
// CHECK: return %[[R]]
func.func @roll_of_roll(%x: tensor<1x4x8x6xf32>) -> tensor<1x4x8x6xf32> {
  %a = seg.roll %x shifts = [3] dims = [2] : tensor<1x4x8x6xf32>
  %b = seg.roll %a shifts = [10] dims = [2] : tensor<1x4x8x6xf32>
  return %b : tensor<1x4x8x6xf32>
}

// -----

// CHECK-LABEL: func.func @roll_of_inverse_roll
// CHECK-SAME: (%[[X:.*]]: tensor<1x4x8x6xf32>)
// CHECK-NOT: seg.roll
// CHECK: return %[[X]]
func.func @roll_of_inverse_roll(%x: tensor<1x4x8x6xf32>) -> tensor<1x4x8x6xf32> {
  %a = seg.roll %x shifts = [3, 1] dims = [2, 3] : tensor<1x4x8x6xf32>
  %b = seg.roll %a shifts = [-3, -1] dims = [2, 3] : tensor<1x4x8x6xf32>
  return %b : tensor<1x4x8x6xf32>
}

// -----

// CHECK-LABEL: func.func @negative_roll_of_roll_other_dims
// CHECK: seg.roll %{{.*}} shifts = [3] dims = [2]
// CHECK: seg.roll %{{.*}} shifts = [1] dims = [3]
func.func @negative_roll_of_roll_other_dims(%x: tensor<1x4x8x6xf32>) -> tensor<1x4x8x6xf32> {
  %a = seg.roll %x shifts = [3] dims = [2] : tensor<1x4x8x6xf32>
  %b = seg.roll %a shifts = [1] dims = [3] : tensor<1x4x8x6xf32>
  return %b : tensor<1x4x8x6xf32>
}

// -----

// CHECK-LABEL: func.func @reshape_identity
// CHECK-SAME: (%[[X:.*]]: tensor<1x16x64xf32>)
// CHECK-NOT: seg.reshape
// CHECK: return %[[X]]
func.func @reshape_identity(%x: tensor<1x16x64xf32>) -> tensor<1x16x64xf32> {
  %y = seg.reshape %x : tensor<1x16x64xf32> -> tensor<1x16x64xf32>
  return %y : tensor<1x16x64xf32>
}

// -----

// CHECK-LABEL: func.func @reshape_of_reshape
// CHECK-SAME: (%[[X:.*]]: tensor<1x16x8x8xf32>)
// CHECK: %[[R:.*]] = seg.reshape %[[X]] : tensor<1x16x8x8xf32> -> tensor<16x64xf32>
// CHECK-NEXT: return %[[R]]
func.func @reshape_of_reshape(%x: tensor<1x16x8x8xf32>) -> tensor<16x64xf32> {
  %a = seg.reshape %x : tensor<1x16x8x8xf32> -> tensor<1x16x64xf32>
  %b = seg.reshape %a : tensor<1x16x64xf32> -> tensor<16x64xf32>
  return %b : tensor<16x64xf32>
}

// -----

// Reshaping there and back cancels entirely.
// CHECK-LABEL: func.func @reshape_round_trip
// CHECK-SAME: (%[[X:.*]]: tensor<1x16x8x8xf32>)
// CHECK-NOT: seg.reshape
// CHECK: return %[[X]]
func.func @reshape_round_trip(%x: tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32> {
  %a = seg.reshape %x : tensor<1x16x8x8xf32> -> tensor<1x16x64xf32>
  %b = seg.reshape %a : tensor<1x16x64xf32> -> tensor<1x16x8x8xf32>
  return %b : tensor<1x16x8x8xf32>
}

// -----

// CHECK-LABEL: func.func @negative_reshape
// CHECK: seg.reshape
func.func @negative_reshape(%x: tensor<1x16x8x8xf32>) -> tensor<1x16x64xf32> {
  %y = seg.reshape %x : tensor<1x16x8x8xf32> -> tensor<1x16x64xf32>
  return %y : tensor<1x16x64xf32>
}

// -----

// CHECK-LABEL: func.func @concat_single
// CHECK-SAME: (%[[X:.*]]: tensor<1x4x8x8xf32>)
// CHECK-NOT: seg.concat
// CHECK: return %[[X]]
func.func @concat_single(%x: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %y = seg.concat %x dim = 1 : tensor<1x4x8x8xf32> -> tensor<1x4x8x8xf32>
  return %y : tensor<1x4x8x8xf32>
}

// -----

// CHECK-LABEL: func.func @negative_concat_two
// CHECK: seg.concat
func.func @negative_concat_two(%x: tensor<1x4x8x8xf32>) -> tensor<1x8x8x8xf32> {
  %y = seg.concat %x, %x dim = 1 : tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32> -> tensor<1x8x8x8xf32>
  return %y : tensor<1x8x8x8xf32>
}

// -----

// CHECK-LABEL: func.func @slice_whole
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK-NOT: seg.slice
// CHECK: return %[[X]]
func.func @slice_whole(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = seg.slice %x start = [0, 0] size = [4, 8] step = [1, 1] : tensor<4x8xf32> -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @negative_slice_part
// CHECK: seg.slice
func.func @negative_slice_part(%x: tensor<4x8xf32>) -> tensor<4x7xf32> {
  %y = seg.slice %x start = [0, 1] size = [4, 7] step = [1, 1] : tensor<4x8xf32> -> tensor<4x7xf32>
  return %y : tensor<4x7xf32>
}

// -----

// CHECK-LABEL: func.func @pad_zero
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK-NOT: seg.pad
// CHECK: return %[[X]]
func.func @pad_zero(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = seg.pad %x low = [0, 0] high = [0, 0] value = 1.0 : tensor<4x8xf32> -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @negative_pad
// CHECK: seg.pad
func.func @negative_pad(%x: tensor<4x8xf32>) -> tensor<4x10xf32> {
  %y = seg.pad %x low = [0, 1] high = [0, 1] value = 0.0 : tensor<4x8xf32> -> tensor<4x10xf32>
  return %y : tensor<4x10xf32>
}

// -----

// CHECK-LABEL: func.func @permute_identity
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK-NOT: seg.permute
// CHECK: return %[[X]]
func.func @permute_identity(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = seg.permute %x dims = [0, 1] : tensor<4x8xf32> -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @negative_permute
// CHECK: seg.permute
func.func @negative_permute(%x: tensor<4x8xf32>) -> tensor<8x4xf32> {
  %y = seg.permute %x dims = [1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}

// -----

// Unused parameters are dead code.
// CHECK-LABEL: func.func @dead_param
// CHECK-NOT: seg.param
func.func @dead_param(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %w = seg.param "unused.weight" : tensor<8xf32>
  return %x : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @channel_shift_zero_offsets
// CHECK-SAME: (%[[X:.*]]: tensor<1x2x4x4xf32>)
// CHECK-NOT: seg.channel_shift
// CHECK: return %[[X]]
func.func @channel_shift_zero_offsets(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %y = seg.channel_shift %x offsets_h = [0, 0] offsets_w = [] mode = zero : tensor<1x2x4x4xf32>
  return %y : tensor<1x2x4x4xf32>
}

// -----

// Cyclic shifts compose; the offsets add modulo the map's size.
// CHECK-LABEL: func.func @channel_shift_of_channel_shift
// CHECK-SAME: (%[[X:.*]]: tensor<1x2x4x6xf32>)
// CHECK: %[[S:.*]] = seg.channel_shift %[[X]] offsets_h = [1, 0] offsets_w = [0, 5] mode = cyclic
// CHECK-NOT: seg.channel_shift
// CHECK: return %[[S]]
func.func @channel_shift_of_channel_shift(%x: tensor<1x2x4x6xf32>) -> tensor<1x2x4x6xf32> {
  %a = seg.channel_shift %x offsets_h = [0, 3] offsets_w = [] mode = cyclic : tensor<1x2x4x6xf32>
  %b = seg.channel_shift %a offsets_h = [1, 1] offsets_w = [0, -1] mode = cyclic : tensor<1x2x4x6xf32>
  return %b : tensor<1x2x4x6xf32>
}

// -----

// Zero-filled shifts lose the border: they do not compose.
// CHECK-LABEL: func.func @negative_channel_shift_zero_of_zero
// CHECK: seg.channel_shift
// CHECK: seg.channel_shift
func.func @negative_channel_shift_zero_of_zero(%x: tensor<1x2x4x6xf32>) -> tensor<1x2x4x6xf32> {
  %a = seg.channel_shift %x offsets_h = [1, -1] offsets_w = [] mode = zero : tensor<1x2x4x6xf32>
  %b = seg.channel_shift %a offsets_h = [-1, 1] offsets_w = [] mode = zero : tensor<1x2x4x6xf32>
  return %b : tensor<1x2x4x6xf32>
}

// -----

// CHECK-LABEL: func.func @slice_of_slice
// CHECK-SAME: (%[[X:.*]]: tensor<1x4x12x12xf32>)
// CHECK: %[[S:.*]] = seg.slice %[[X]] start = [0, 1, 3, 2] size = [1, 2, 2, 8] step = [1, 1, 2, 1]
// CHECK-NEXT: return %[[S]]
func.func @slice_of_slice(%x: tensor<1x4x12x12xf32>) -> tensor<1x2x2x8xf32> {
  %a = seg.slice %x start = [0, 0, 1, 2] size = [1, 4, 5, 8] step = [1, 1, 2, 1] : tensor<1x4x12x12xf32> -> tensor<1x4x5x8xf32>
  %b = seg.slice %a start = [0, 1, 1, 0] size = [1, 2, 2, 8] step = [1, 1, 1, 1] : tensor<1x4x5x8xf32> -> tensor<1x2x2x8xf32>
  return %b : tensor<1x2x2x8xf32>
}
