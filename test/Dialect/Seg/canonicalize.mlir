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

// -----

// seg.shift: offsets that are multiples of the size (cyclic) move nothing.
// CHECK-LABEL: func.func @shift_by_multiple_of_size
// CHECK-SAME: (%[[X:.*]]: tensor<1x3x8x4xf32>)
// CHECK-NOT: seg.shift
// CHECK-NOT: seg.channel_shift
// CHECK: return %[[X]]
func.func @shift_by_multiple_of_size(%x: tensor<1x3x8x4xf32>) -> tensor<1x3x8x4xf32> {
  %y = seg.shift %x group_dim = 1 dims = [2] offsets = [0, 8, -16] mode = cyclic : tensor<1x3x8x4xf32>
  return %y : tensor<1x3x8x4xf32>
}

// -----

// Zero-filled by the size: group 1 reads only zeros, which is not the input.
// CHECK-LABEL: func.func @negative_zero_shift_by_size
// CHECK: seg.shift %{{.*}} group_dim = 2 dims = [1] offsets = [0, 2, 0] mode = zero
func.func @negative_zero_shift_by_size(%x: tensor<1x2x3x4x4xf32>) -> tensor<1x2x3x4x4xf32> {
  %y = seg.shift %x group_dim = 2 dims = [1] offsets = [0, 2, 0] mode = zero : tensor<1x2x3x4x4xf32>
  return %y : tensor<1x2x3x4x4xf32>
}

// -----

// Cyclic shifts compose: [1, 2, 3] + [1, 1, 1] along a dim of 5.
// CHECK-LABEL: func.func @shift_of_shift
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x5xf32>)
// CHECK: %[[S:.*]] = seg.shift %[[X]] group_dim = 1 dims = [2] offsets = [2, 3, 4] mode = cyclic
// CHECK: %[[T:.*]] = seg.shift %[[X]] group_dim = 1 dims = [2] offsets = [1, 0, 0] mode = zero
// CHECK: %[[Z:.*]] = seg.shift %[[T]] group_dim = 1 dims = [2] offsets = [1, 1, 1] mode = zero
// CHECK: return %[[S]], %[[X]], %[[Z]]
func.func @shift_of_shift(%x: tensor<2x3x5xf32>) -> (tensor<2x3x5xf32>, tensor<2x3x5xf32>, tensor<2x3x5xf32>) {
  %a = seg.shift %x group_dim = 1 dims = [2] offsets = [1, 2, 3] mode = cyclic : tensor<2x3x5xf32>
  %b = seg.shift %a group_dim = 1 dims = [2] offsets = [1, 1, 1] mode = cyclic : tensor<2x3x5xf32>
  // Back to the input: 1 + 4, 2 + 3, 3 - 3 are multiples of 5.
  %c = seg.shift %a group_dim = 1 dims = [2] offsets = [4, 3, -3] mode = cyclic : tensor<2x3x5xf32>
  // Zero-filled shifts lose the border: they do not compose.
  %t = seg.shift %x group_dim = 1 dims = [2] offsets = [1, 0, 0] mode = zero : tensor<2x3x5xf32>
  %z = seg.shift %t group_dim = 1 dims = [2] offsets = [1, 1, 1] mode = zero : tensor<2x3x5xf32>
  return %b, %c, %z : tensor<2x3x5xf32>, tensor<2x3x5xf32>, tensor<2x3x5xf32>
}

// -----

// A dim whose offsets are multiples of its size (cyclic) leaves `dims`.
// CHECK-LABEL: func.func @shift_drops_unshifted_dim
// CHECK: seg.shift %{{.*}} group_dim = 1 dims = [2] offsets = [1, 2, 3] mode = cyclic
func.func @shift_drops_unshifted_dim(%x: tensor<2x3x5xf32>) -> tensor<2x3x5xf32> {
  %y = seg.shift %x group_dim = 1 dims = [0, 2] offsets = [2, 0, -2, 1, 2, 3] mode = cyclic : tensor<2x3x5xf32>
  return %y : tensor<2x3x5xf32>
}

// -----

// The NCHW form is seg.channel_shift (rows in the order of `dims`: W, H).
// CHECK-LABEL: func.func @shift_nchw_is_channel_shift
// CHECK-SAME: (%[[X:.*]]: tensor<1x2x4x4xf32>)
// CHECK: %[[S:.*]] = seg.channel_shift %[[X]] offsets_h = [-1, 0] offsets_w = [1, 2] mode = zero
// CHECK: %[[B:.*]] = seg.shift %[[X]] group_dim = 0 dims = [2] offsets = [1] mode = zero
// CHECK: return %[[S]], %[[B]]
func.func @shift_nchw_is_channel_shift(%x: tensor<1x2x4x4xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) {
  %y = seg.shift %x group_dim = 1 dims = [3, 2] offsets = [1, 2, -1, 0] mode = zero : tensor<1x2x4x4xf32>
  // Groups along the batch: not the NCHW form.
  %b = seg.shift %x group_dim = 0 dims = [2] offsets = [1] mode = zero : tensor<1x2x4x4xf32>
  return %y, %b : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
}

// -----

// A window of a pad that cuts into the padding: a pad of the window of x.
// CHECK-LABEL: func.func @slice_of_pad
// CHECK-SAME: (%[[X:.*]]: tensor<1x2x4x4xf32>)
// CHECK: %[[PAD:.*]] = seg.pad %[[X]] low = [0, 0, 1, 1] high = [0, 0, 1, 1]
// CHECK: %[[W:.*]] = seg.slice %[[X]] start = [0, 0, 0, 0] size = [1, 2, 3, 4] step = [1, 1, 1, 1]
// CHECK: %[[P:.*]] = seg.pad %[[W]] low = [0, 0, 1, 0] high = [0, 0, 0, 0] value = 0.000000e+00
// CHECK: %[[CHUNK:.*]] = seg.slice %[[PAD]] start = [0, 1, 0, 0] size = [1, 1, 6, 6]
// CHECK: %[[ALLPAD:.*]] = seg.slice %[[PAD]] start = [0, 0, 0, 0] size = [1, 2, 1, 6]
// CHECK: return %[[P]], %[[CHUNK]], %[[ALLPAD]]
func.func @slice_of_pad(%x: tensor<1x2x4x4xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x1x6x6xf32>, tensor<1x2x1x6xf32>) {
  %p = seg.pad %x low = [0, 0, 1, 1] high = [0, 0, 1, 1] value = 0.0 : tensor<1x2x4x4xf32> -> tensor<1x2x6x6xf32>
  %w = seg.slice %p start = [0, 0, 0, 1] size = [1, 2, 4, 4] step = [1, 1, 1, 1] : tensor<1x2x6x6xf32> -> tensor<1x2x4x4xf32>
  // Keeps the padded dims whole (UNeXt's chunks): stays.
  %c = seg.slice %p start = [0, 1, 0, 0] size = [1, 1, 6, 6] step = [1, 1, 1, 1] : tensor<1x2x6x6xf32> -> tensor<1x1x6x6xf32>
  // Reads only padding: stays.
  %z = seg.slice %p start = [0, 0, 0, 0] size = [1, 2, 1, 6] step = [1, 1, 1, 1] : tensor<1x2x6x6xf32> -> tensor<1x2x1x6xf32>
  return %w, %c, %z : tensor<1x2x4x4xf32>, tensor<1x1x6x6xf32>, tensor<1x2x1x6xf32>
}

// -----

// A window inside the concat dim: the pieces' windows, then the window of
// the other dims.
// CHECK-LABEL: func.func @slice_of_concat
// CHECK-SAME: (%[[A:.*]]: tensor<1x2x4xf32>, %[[B:.*]]: tensor<1x3x4xf32>)
// CHECK: %[[SA:.*]] = seg.slice %[[A]] start = [0, 1, 0] size = [1, 1, 4] step = [1, 1, 1]
// CHECK: %[[SB:.*]] = seg.slice %[[B]] start = [0, 0, 0] size = [1, 2, 4] step = [1, 1, 1]
// CHECK: %[[C:.*]] = seg.concat %[[SA]], %[[SB]] dim = 1
// CHECK: %[[Y:.*]] = seg.slice %[[C]] start = [0, 0, 0] size = [1, 3, 2] step = [1, 1, 1]
// CHECK: return %[[Y]], %[[B]]
func.func @slice_of_concat(%a: tensor<1x2x4xf32>, %b: tensor<1x3x4xf32>) -> (tensor<1x3x2xf32>, tensor<1x3x4xf32>) {
  %c = seg.concat %a, %b dim = 1 : tensor<1x2x4xf32>, tensor<1x3x4xf32> -> tensor<1x5x4xf32>
  %y = seg.slice %c start = [0, 1, 0] size = [1, 3, 2] step = [1, 1, 1] : tensor<1x5x4xf32> -> tensor<1x3x2xf32>
  // Exactly the second piece.
  %z = seg.slice %c start = [0, 2, 0] size = [1, 3, 4] step = [1, 1, 1] : tensor<1x5x4xf32> -> tensor<1x3x4xf32>
  return %y, %z : tensor<1x3x2xf32>, tensor<1x3x4xf32>
}

// -----

// Slices that keep the shifted dims whole move above rolls and shifts (the
// group dim's offsets restricted to the kept indices).
// CHECK-LABEL: func.func @slice_of_shifts
// CHECK-SAME: (%[[X:.*]]: tensor<1x4x8xf32>, %[[M:.*]]: tensor<1x4x4x4xf32>, %[[T:.*]]: tensor<2x3x5xf32>)
// CHECK: %[[CUT:.*]] = seg.roll %[[X]] shifts = [3] dims = [2]
// CHECK: %[[XS:.*]] = seg.slice %[[X]] start = [0, 1, 0] size = [1, 2, 8]
// CHECK: %[[R:.*]] = seg.roll %[[XS]] shifts = [3] dims = [2]
// CHECK: %[[RC:.*]] = seg.slice %[[CUT]] start = [0, 0, 1] size = [1, 4, 4]
// CHECK: %[[MS:.*]] = seg.slice %[[M]] start = [0, 0, 0, 0] size = [1, 2, 4, 4] step = [1, 2, 1, 1]
// CHECK: %[[CS:.*]] = seg.channel_shift %[[MS]] offsets_h = [0, 2] offsets_w = [] mode = cyclic
// CHECK: %[[TS:.*]] = seg.slice %[[T]] start = [1, 1, 0] size = [1, 2, 5]
// CHECK: %[[S:.*]] = seg.shift %[[TS]] group_dim = 1 dims = [2] offsets = [2, 3] mode = zero
// CHECK: return %[[R]], %[[RC]], %[[CS]], %[[S]]
func.func @slice_of_shifts(%x: tensor<1x4x8xf32>, %m: tensor<1x4x4x4xf32>, %t: tensor<2x3x5xf32>) -> (tensor<1x2x8xf32>, tensor<1x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x5xf32>) {
  %r = seg.roll %x shifts = [3] dims = [2] : tensor<1x4x8xf32>
  %rs = seg.slice %r start = [0, 1, 0] size = [1, 2, 8] step = [1, 1, 1] : tensor<1x4x8xf32> -> tensor<1x2x8xf32>
  // Cuts the rolled dim: stays.
  %rc = seg.slice %r start = [0, 0, 1] size = [1, 4, 4] step = [1, 1, 1] : tensor<1x4x8xf32> -> tensor<1x4x4xf32>
  %c = seg.channel_shift %m offsets_h = [0, 1, 2, 3] offsets_w = [] mode = cyclic : tensor<1x4x4x4xf32>
  %cs = seg.slice %c start = [0, 0, 0, 0] size = [1, 2, 4, 4] step = [1, 2, 1, 1] : tensor<1x4x4x4xf32> -> tensor<1x2x4x4xf32>
  %s = seg.shift %t group_dim = 1 dims = [2] offsets = [1, 2, 3] mode = zero : tensor<2x3x5xf32>
  %ss = seg.slice %s start = [1, 1, 0] size = [1, 2, 5] step = [1, 1, 1] : tensor<2x3x5xf32> -> tensor<1x2x5xf32>
  return %rs, %rc, %cs, %ss : tensor<1x2x8xf32>, tensor<1x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x5xf32>
}
