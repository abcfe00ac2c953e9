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
