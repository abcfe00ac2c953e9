// RUN: gpuopt-opt %s -split-input-file --canonicalize | FileCheck %s
// RUN: gpuopt-opt %s -split-input-file --gpuopt-optimize --verify-each -o /dev/null

// Fuzzing regressions: folders on empty tensors (a division by zero before
// the fix) and on steps whose product overflows int64.

// CHECK-LABEL: func.func @roll_empty
// CHECK-SAME: (%[[X:.*]]: tensor<1x3x0x8xf32>)
// CHECK-NOT: seg.roll
// CHECK: return %[[X]]
func.func @roll_empty(%x: tensor<1x3x0x8xf32>) -> tensor<1x3x0x8xf32> {
  %y = seg.roll %x shifts = [1] dims = [2] : tensor<1x3x0x8xf32>
  return %y : tensor<1x3x0x8xf32>
}

// -----

// CHECK-LABEL: func.func @channel_shift_empty
// CHECK-COUNT-2: seg.channel_shift
func.func @channel_shift_empty(%x: tensor<1x2x0x0xf32>) -> tensor<1x2x0x0xf32> {
  %y = seg.channel_shift %x offsets_h = [1, 0] offsets_w = [] mode = cyclic : tensor<1x2x0x0xf32>
  %z = seg.channel_shift %y offsets_h = [1, 0] offsets_w = [] mode = cyclic : tensor<1x2x0x0xf32>
  return %z : tensor<1x2x0x0xf32>
}

// -----

// Offsets near the int64 limits compose modulo the map size.
// CHECK-LABEL: func.func @channel_shift_huge_offsets
// CHECK: seg.channel_shift %{{.*}} offsets_h = [4, 0]
// CHECK-NOT: seg.channel_shift
func.func @channel_shift_huge_offsets(%x: tensor<1x2x5x5xf32>) -> tensor<1x2x5x5xf32> {
  %y = seg.channel_shift %x offsets_h = [9223372036854775807, 0] offsets_w = [] mode = cyclic : tensor<1x2x5x5xf32>
  %z = seg.channel_shift %y offsets_h = [9223372036854775807, 0] offsets_w = [] mode = cyclic : tensor<1x2x5x5xf32>
  return %z : tensor<1x2x5x5xf32>
}

// -----

// CHECK-LABEL: func.func @roll_huge_shifts
// CHECK: seg.roll %{{.*}} shifts = [4] dims = [2]
// CHECK-NOT: seg.roll
func.func @roll_huge_shifts(%x: tensor<1x1x5x5xf32>) -> tensor<1x1x5x5xf32> {
  %y = seg.roll %x shifts = [9223372036854775807] dims = [2] : tensor<1x1x5x5xf32>
  %z = seg.roll %y shifts = [9223372036854775807] dims = [2] : tensor<1x1x5x5xf32>
  return %z : tensor<1x1x5x5xf32>
}

// -----

// slice(slice(x)) would need the step 2^62 * 2^62: left as two slices.
// CHECK-LABEL: func.func @slice_steps_overflow
// CHECK-COUNT-2: seg.slice
func.func @slice_steps_overflow(%x: tensor<8xf32>) -> tensor<1xf32> {
  %y = seg.slice %x start = [1] size = [1] step = [4611686018427387904] : tensor<8xf32> -> tensor<1xf32>
  %z = seg.slice %y start = [0] size = [1] step = [4611686018427387904] : tensor<1xf32> -> tensor<1xf32>
  return %z : tensor<1xf32>
}

// -----

// seg.shift: an empty tensor folds; offsets near the int64 limits are
// normalized before they are added (cyclic: 2^63 - 1 ≡ 2 mod 5, twice 4)
// and clamped for the lowering (zero-filled: the gather's index arithmetic
// stays in [-L, 2L)).
// CHECK-LABEL: func.func @shift_edge_cases
// CHECK-SAME: (%[[E:.*]]: tensor<2x0x3xf32>, %[[X:.*]]: tensor<2x3x5xf32>)
// CHECK: %[[C:.*]] = seg.shift %[[X]] group_dim = 1 dims = [2] offsets = [4, 0, 1] mode = cyclic
// CHECK: %[[Z:.*]] = seg.shift %[[X]] group_dim = 1 dims = [2] offsets = [-9223372036854775808, 9223372036854775807, 1] mode = zero
// CHECK: return %[[E]], %[[C]], %[[Z]]
func.func @shift_edge_cases(%e: tensor<2x0x3xf32>, %x: tensor<2x3x5xf32>) -> (tensor<2x0x3xf32>, tensor<2x3x5xf32>, tensor<2x3x5xf32>) {
  %a = seg.shift %e group_dim = 1 dims = [2] offsets = [] mode = cyclic : tensor<2x0x3xf32>
  %c0 = seg.shift %x group_dim = 1 dims = [2] offsets = [9223372036854775807, -9223372036854775808, 1] mode = cyclic : tensor<2x3x5xf32>
  // -2^63 ≡ 2 mod 5: the second group returns to 0 (2 + 3), the third to 1.
  %c = seg.shift %c0 group_dim = 1 dims = [2] offsets = [9223372036854775807, 3, 0] mode = cyclic : tensor<2x3x5xf32>
  %z = seg.shift %x group_dim = 1 dims = [2] offsets = [-9223372036854775808, 9223372036854775807, 1] mode = zero : tensor<2x3x5xf32>
  return %a, %c, %z : tensor<2x0x3xf32>, tensor<2x3x5xf32>, tensor<2x3x5xf32>
}
