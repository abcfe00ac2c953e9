// RUN: gpuopt-opt %s -split-input-file --collapse-rolls | FileCheck %s
// RUN: gpuopt-opt %s -split-input-file --fuse-roll | FileCheck %s --check-prefix=FUSE
// RUN: gpuopt-opt %s -split-input-file --gpuopt-optimize --verify-each -o /dev/null

// The shift idioms of issue 15 in the exporter's canonical form: a concat
// along the group dim of slices of X, each whole or zero-padded back to its
// size (a zero-filled shift), or slices of X that rotate one dim (a
// hand-written roll, a crop of a circular pad).

// TSM (temporal shift) on an (N, T, C, H, W) view: out[:, :-1, :2] =
// x[:, 1:, :2]; out[:, 1:, 2:4] = x[:, :-1, 2:4]; out[:, :, 4:] = x[:, :, 4:].
// CHECK-LABEL: func.func @tsm
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x8x2x2xf32>)
// CHECK: %[[S:.*]] = seg.shift %[[X]] group_dim = 2 dims = [1] offsets = [-1, -1, 1, 1, 0, 0, 0, 0] mode = zero : tensor<2x3x8x2x2xf32>
// CHECK-NOT: seg.concat
// CHECK-NOT: seg.pad
// CHECK: return %[[S]]
func.func @tsm(%x: tensor<2x3x8x2x2xf32>) -> tensor<2x3x8x2x2xf32> {
  %a = seg.slice %x start = [0, 1, 0, 0, 0] size = [2, 2, 2, 2, 2] step = [1, 1, 1, 1, 1] : tensor<2x3x8x2x2xf32> -> tensor<2x2x2x2x2xf32>
  %pa = seg.pad %a low = [0, 0, 0, 0, 0] high = [0, 1, 0, 0, 0] value = 0.0 : tensor<2x2x2x2x2xf32> -> tensor<2x3x2x2x2xf32>
  %b = seg.slice %x start = [0, 0, 2, 0, 0] size = [2, 2, 2, 2, 2] step = [1, 1, 1, 1, 1] : tensor<2x3x8x2x2xf32> -> tensor<2x2x2x2x2xf32>
  %pb = seg.pad %b low = [0, 1, 0, 0, 0] high = [0, 0, 0, 0, 0] value = 0.0 : tensor<2x2x2x2x2xf32> -> tensor<2x3x2x2x2xf32>
  %c = seg.slice %x start = [0, 0, 4, 0, 0] size = [2, 3, 4, 2, 2] step = [1, 1, 1, 1, 1] : tensor<2x3x8x2x2xf32> -> tensor<2x3x4x2x2xf32>
  %y = seg.concat %pa, %pb, %c dim = 2 : tensor<2x3x2x2x2xf32>, tensor<2x3x2x2x2xf32>, tensor<2x3x4x2x2xf32> -> tensor<2x3x8x2x2xf32>
  return %y : tensor<2x3x8x2x2xf32>
}

// -----

// TSM in a network: the (N·T, C, H, W) map viewed as (N, T, C, H, W),
// shifted along T, viewed back and convolved. --collapse-rolls makes it one
// seg.shift, the slices, pads and concat gone; the shift is along the
// convolution's batch axis, which --fuse-roll folds into the convolution's
// frame_shift: no gather remains.
// CHECK-LABEL: func.func @tsm_conv
// CHECK: %[[V:.*]] = seg.reshape %{{.*}} : tensor<6x4x2x2xf32> -> tensor<2x3x4x2x2xf32>
// CHECK: %[[S:.*]] = seg.shift %[[V]] group_dim = 2 dims = [1] offsets = [-1, 1, 0, 0] mode = zero
// CHECK: %[[B:.*]] = seg.reshape %[[S]] : tensor<2x3x4x2x2xf32> -> tensor<6x4x2x2xf32>
// CHECK: seg.conv2d %[[B]]
// CHECK-NOT: seg.concat
// FUSE-LABEL: func.func @tsm_conv
// FUSE-SAME: (%[[X:.*]]: tensor<6x4x2x2xf32>, %[[W:.*]]: tensor<4x4x3x3xf32>)
// FUSE: seg.fused_conv2d %[[X]], %[[W]] offsets_h = [] offsets_w = [] mode = zero frame_shift = <frames = 3, offsets = [-1, 1, 0, 0]> stride = [1, 1] padding = [1, 1]
// FUSE-NOT: seg.shift
// FUSE-NOT: seg.reshape
// FUSE-NOT: seg.concat
func.func @tsm_conv(%x: tensor<6x4x2x2xf32>, %w: tensor<4x4x3x3xf32>) -> tensor<6x4x2x2xf32> {
  %v = seg.reshape %x : tensor<6x4x2x2xf32> -> tensor<2x3x4x2x2xf32>
  %a = seg.slice %v start = [0, 1, 0, 0, 0] size = [2, 2, 1, 2, 2] step = [1, 1, 1, 1, 1] : tensor<2x3x4x2x2xf32> -> tensor<2x2x1x2x2xf32>
  %pa = seg.pad %a low = [0, 0, 0, 0, 0] high = [0, 1, 0, 0, 0] value = 0.0 : tensor<2x2x1x2x2xf32> -> tensor<2x3x1x2x2xf32>
  %b = seg.slice %v start = [0, 0, 1, 0, 0] size = [2, 2, 1, 2, 2] step = [1, 1, 1, 1, 1] : tensor<2x3x4x2x2xf32> -> tensor<2x2x1x2x2xf32>
  %pb = seg.pad %b low = [0, 1, 0, 0, 0] high = [0, 0, 0, 0, 0] value = 0.0 : tensor<2x2x1x2x2xf32> -> tensor<2x3x1x2x2xf32>
  %c = seg.slice %v start = [0, 0, 2, 0, 0] size = [2, 3, 2, 2, 2] step = [1, 1, 1, 1, 1] : tensor<2x3x4x2x2xf32> -> tensor<2x3x2x2x2xf32>
  %s = seg.concat %pa, %pb, %c dim = 2 : tensor<2x3x1x2x2xf32>, tensor<2x3x1x2x2xf32>, tensor<2x3x2x2x2xf32> -> tensor<2x3x4x2x2xf32>
  %back = seg.reshape %s : tensor<2x3x4x2x2xf32> -> tensor<6x4x2x2xf32>
  %y = seg.conv2d %back, %w stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 1 : tensor<6x4x2x2xf32>, tensor<4x4x3x3xf32> -> tensor<6x4x2x2xf32>
  return %y : tensor<6x4x2x2xf32>
}

// -----

// ShiftViT: four channel groups shifted one pixel right, left, down and up
// (zero-filled), the rest kept, then the residual add y = x + shift(x). The
// add cannot absorb the shift: it stays one seg.channel_shift feeding the
// add (the linalg lowering fuses the gather into the add's loop).
// CHECK-LABEL: func.func @shiftvit
// CHECK-SAME: (%[[X:.*]]: tensor<1x6x4x4xf32>)
// CHECK: %[[S:.*]] = seg.channel_shift %[[X]] offsets_h = [0, 0, 1, -1, 0, 0] offsets_w = [1, -1, 0, 0, 0, 0] mode = zero
// CHECK: seg.add %[[X]], %[[S]]
// FUSE-LABEL: func.func @shiftvit
// FUSE: %[[S:.*]] = seg.channel_shift %{{.*}} offsets_h = [0, 0, 1, -1, 0, 0] offsets_w = [1, -1, 0, 0, 0, 0] mode = zero
// FUSE: seg.add %{{.*}}, %[[S]]
func.func @shiftvit(%x: tensor<1x6x4x4xf32>) -> tensor<1x6x4x4xf32> {
  // out[:, 0, :, 1:] = x[:, 0, :, :-1]
  %a = seg.slice %x start = [0, 0, 0, 0] size = [1, 1, 4, 3] step = [1, 1, 1, 1] : tensor<1x6x4x4xf32> -> tensor<1x1x4x3xf32>
  %pa = seg.pad %a low = [0, 0, 0, 1] high = [0, 0, 0, 0] value = 0.0 : tensor<1x1x4x3xf32> -> tensor<1x1x4x4xf32>
  // out[:, 1, :, :-1] = x[:, 1, :, 1:]
  %b = seg.slice %x start = [0, 1, 0, 1] size = [1, 1, 4, 3] step = [1, 1, 1, 1] : tensor<1x6x4x4xf32> -> tensor<1x1x4x3xf32>
  %pb = seg.pad %b low = [0, 0, 0, 0] high = [0, 0, 0, 1] value = 0.0 : tensor<1x1x4x3xf32> -> tensor<1x1x4x4xf32>
  // out[:, 2, 1:, :] = x[:, 2, :-1, :]
  %c = seg.slice %x start = [0, 2, 0, 0] size = [1, 1, 3, 4] step = [1, 1, 1, 1] : tensor<1x6x4x4xf32> -> tensor<1x1x3x4xf32>
  %pc = seg.pad %c low = [0, 0, 1, 0] high = [0, 0, 0, 0] value = 0.0 : tensor<1x1x3x4xf32> -> tensor<1x1x4x4xf32>
  // out[:, 3, :-1, :] = x[:, 3, 1:, :]
  %d = seg.slice %x start = [0, 3, 1, 0] size = [1, 1, 3, 4] step = [1, 1, 1, 1] : tensor<1x6x4x4xf32> -> tensor<1x1x3x4xf32>
  %pd = seg.pad %d low = [0, 0, 0, 0] high = [0, 0, 1, 0] value = 0.0 : tensor<1x1x3x4xf32> -> tensor<1x1x4x4xf32>
  %e = seg.slice %x start = [0, 4, 0, 0] size = [1, 2, 4, 4] step = [1, 1, 1, 1] : tensor<1x6x4x4xf32> -> tensor<1x2x4x4xf32>
  %s = seg.concat %pa, %pb, %pc, %pd, %e dim = 1 : tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>, tensor<1x2x4x4xf32> -> tensor<1x6x4x4xf32>
  %y = seg.add %x, %s : tensor<1x6x4x4xf32>, tensor<1x6x4x4xf32> -> tensor<1x6x4x4xf32>
  return %y : tensor<1x6x4x4xf32>
}

// -----

// Shift-Net's group shift as written: pad H and W by 1, take each channel
// group's window offset by (1 - dy, 1 - dx), concat. A window of a zero pad is
// a zero-padded window of X (a slice-of-pad canonicalization), hence a
// zero-filled shift by (dy, dx) = (1, 0), (-1, 0), (0, 1), (0, -1), (0, 0),
// folded into the convolution that follows.
// CHECK-LABEL: func.func @shiftnet
// CHECK: seg.channel_shift %{{.*}} offsets_h = [1, -1, 0, 0, 0] offsets_w = [0, 0, 1, -1, 0] mode = zero
// CHECK-NOT: seg.pad
// CHECK-NOT: seg.concat
// FUSE-LABEL: func.func @shiftnet
// FUSE-SAME: (%[[X:.*]]: tensor<1x5x4x4xf32>, %[[W:.*]]: tensor<3x5x1x1xf32>)
// FUSE: seg.fused_conv2d %[[X]], %[[W]] offsets_h = [1, -1, 0, 0, 0] offsets_w = [0, 0, 1, -1, 0] mode = zero
// FUSE-NOT: seg.channel_shift
func.func @shiftnet(%x: tensor<1x5x4x4xf32>, %w: tensor<3x5x1x1xf32>) -> tensor<1x3x4x4xf32> {
  %xp = seg.pad %x low = [0, 0, 1, 1] high = [0, 0, 1, 1] value = 0.0 : tensor<1x5x4x4xf32> -> tensor<1x5x6x6xf32>
  %g0 = seg.slice %xp start = [0, 0, 0, 1] size = [1, 1, 4, 4] step = [1, 1, 1, 1] : tensor<1x5x6x6xf32> -> tensor<1x1x4x4xf32>
  %g1 = seg.slice %xp start = [0, 1, 2, 1] size = [1, 1, 4, 4] step = [1, 1, 1, 1] : tensor<1x5x6x6xf32> -> tensor<1x1x4x4xf32>
  %g2 = seg.slice %xp start = [0, 2, 1, 0] size = [1, 1, 4, 4] step = [1, 1, 1, 1] : tensor<1x5x6x6xf32> -> tensor<1x1x4x4xf32>
  %g3 = seg.slice %xp start = [0, 3, 1, 2] size = [1, 1, 4, 4] step = [1, 1, 1, 1] : tensor<1x5x6x6xf32> -> tensor<1x1x4x4xf32>
  %g4 = seg.slice %xp start = [0, 4, 1, 1] size = [1, 1, 4, 4] step = [1, 1, 1, 1] : tensor<1x5x6x6xf32> -> tensor<1x1x4x4xf32>
  %s = seg.concat %g0, %g1, %g2, %g3, %g4 dim = 1 : tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32> -> tensor<1x5x4x4xf32>
  %y = seg.conv2d %s, %w stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 : tensor<1x5x4x4xf32>, tensor<3x5x1x1xf32> -> tensor<1x3x4x4xf32>
  return %y : tensor<1x3x4x4xf32>
}

// -----

// A hand-written roll: torch.cat((x[..., -2:], x[..., :-2]), -1) is
// torch.roll(x, 2, -1), on NCHW a channel_shift folded into the convolution.
// CHECK-LABEL: func.func @hand_written_roll
// CHECK-SAME: (%[[X:.*]]: tensor<1x2x4x8xf32>
// CHECK: seg.channel_shift %[[X]] offsets_h = [] offsets_w = [2, 2] mode = cyclic
// CHECK-NOT: seg.concat
// FUSE-LABEL: func.func @hand_written_roll
// FUSE: seg.fused_conv2d %{{.*}} offsets_h = [] offsets_w = [2, 2] mode = cyclic
func.func @hand_written_roll(%x: tensor<1x2x4x8xf32>, %w: tensor<2x2x3x3xf32>) -> tensor<1x2x4x8xf32> {
  %a = seg.slice %x start = [0, 0, 0, 6] size = [1, 2, 4, 2] step = [1, 1, 1, 1] : tensor<1x2x4x8xf32> -> tensor<1x2x4x2xf32>
  %b = seg.slice %x start = [0, 0, 0, 0] size = [1, 2, 4, 6] step = [1, 1, 1, 1] : tensor<1x2x4x8xf32> -> tensor<1x2x4x6xf32>
  %r = seg.concat %a, %b dim = 3 : tensor<1x2x4x2xf32>, tensor<1x2x4x6xf32> -> tensor<1x2x4x8xf32>
  %y = seg.conv2d %r, %w stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 1 : tensor<1x2x4x8xf32>, tensor<2x2x3x3xf32> -> tensor<1x2x4x8xf32>
  return %y : tensor<1x2x4x8xf32>
}

// -----

// index_select with constant runs [5, 6, 7, 0, 1, 2, 3, 4] along the tokens
// of a (N, L, C) tensor, exported as three slices: roll(x, 3, 1). Not NCHW:
// it stays a seg.roll.
// CHECK-LABEL: func.func @index_select_runs
// CHECK-SAME: (%[[X:.*]]: tensor<1x8x4xf32>)
// CHECK: %[[R:.*]] = seg.roll %[[X]] shifts = [3] dims = [1] : tensor<1x8x4xf32>
// CHECK-NOT: seg.concat
// CHECK: return %[[R]]
func.func @index_select_runs(%x: tensor<1x8x4xf32>) -> tensor<1x8x4xf32> {
  %a = seg.slice %x start = [0, 5, 0] size = [1, 3, 4] step = [1, 1, 1] : tensor<1x8x4xf32> -> tensor<1x3x4xf32>
  %b = seg.slice %x start = [0, 0, 0] size = [1, 2, 4] step = [1, 1, 1] : tensor<1x8x4xf32> -> tensor<1x2x4xf32>
  %c = seg.slice %x start = [0, 2, 0] size = [1, 3, 4] step = [1, 1, 1] : tensor<1x8x4xf32> -> tensor<1x3x4xf32>
  %y = seg.concat %a, %b, %c dim = 1 : tensor<1x3x4xf32>, tensor<1x2x4xf32>, tensor<1x3x4xf32> -> tensor<1x8x4xf32>
  return %y : tensor<1x8x4xf32>
}

// -----

// F.pad(x, (1, 1, 2, 2), mode="circular") exported as concats of slices (W
// then H), then cropped back to H x W at offset (1, 2) of the padded map:
// out[i, j] = x[(i + 1 - 2) mod 4, (j + 2 - 1) mod 8], a roll by (1, -1)
// along (H, W) (-1 written as 8 - 1 = 7).
// CHECK-LABEL: func.func @circular_pad_crop
// CHECK-SAME: (%[[X:.*]]: tensor<1x2x4x8xf32>)
// CHECK: %[[S:.*]] = seg.channel_shift %[[X]] offsets_h = [1, 1] offsets_w = [7, 7] mode = cyclic
// CHECK-NOT: seg.concat
// CHECK-NOT: seg.slice
// CHECK: return %[[S]]
func.func @circular_pad_crop(%x: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %l = seg.slice %x start = [0, 0, 0, 7] size = [1, 2, 4, 1] step = [1, 1, 1, 1] : tensor<1x2x4x8xf32> -> tensor<1x2x4x1xf32>
  %r = seg.slice %x start = [0, 0, 0, 0] size = [1, 2, 4, 1] step = [1, 1, 1, 1] : tensor<1x2x4x8xf32> -> tensor<1x2x4x1xf32>
  %pw = seg.concat %l, %x, %r dim = 3 : tensor<1x2x4x1xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x1xf32> -> tensor<1x2x4x10xf32>
  %t = seg.slice %pw start = [0, 0, 2, 0] size = [1, 2, 2, 10] step = [1, 1, 1, 1] : tensor<1x2x4x10xf32> -> tensor<1x2x2x10xf32>
  %bt = seg.slice %pw start = [0, 0, 0, 0] size = [1, 2, 2, 10] step = [1, 1, 1, 1] : tensor<1x2x4x10xf32> -> tensor<1x2x2x10xf32>
  %p = seg.concat %t, %pw, %bt dim = 2 : tensor<1x2x2x10xf32>, tensor<1x2x4x10xf32>, tensor<1x2x2x10xf32> -> tensor<1x2x8x10xf32>
  %y = seg.slice %p start = [0, 0, 1, 2] size = [1, 2, 4, 8] step = [1, 1, 1, 1] : tensor<1x2x8x10xf32> -> tensor<1x2x4x8xf32>
  return %y : tensor<1x2x4x8xf32>
}

// -----

// Not shifts: each stays a concat.

// Pieces out of order (a channel permutation).
// CHECK-LABEL: func.func @negative_out_of_order
// CHECK: seg.concat
// CHECK-NOT: seg.shift
// CHECK-NOT: seg.channel_shift
func.func @negative_out_of_order(%x: tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32> {
  %a = seg.slice %x start = [0, 2, 0, 0] size = [1, 2, 4, 3] step = [1, 1, 1, 1] : tensor<1x4x4x4xf32> -> tensor<1x2x4x3xf32>
  %pa = seg.pad %a low = [0, 0, 0, 1] high = [0, 0, 0, 0] value = 0.0 : tensor<1x2x4x3xf32> -> tensor<1x2x4x4xf32>
  %b = seg.slice %x start = [0, 0, 0, 0] size = [1, 2, 4, 4] step = [1, 1, 1, 1] : tensor<1x4x4x4xf32> -> tensor<1x2x4x4xf32>
  %y = seg.concat %pa, %b dim = 1 : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32> -> tensor<1x4x4x4xf32>
  return %y : tensor<1x4x4x4xf32>
}

// -----

// Overlapping pieces (channel 1 twice, channel 3 never).
// CHECK-LABEL: func.func @negative_overlapping
// CHECK: seg.concat
// CHECK-NOT: seg.shift
// CHECK-NOT: seg.channel_shift
func.func @negative_overlapping(%x: tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32> {
  %a = seg.slice %x start = [0, 0, 0, 0] size = [1, 2, 4, 3] step = [1, 1, 1, 1] : tensor<1x4x4x4xf32> -> tensor<1x2x4x3xf32>
  %pa = seg.pad %a low = [0, 0, 0, 1] high = [0, 0, 0, 0] value = 0.0 : tensor<1x2x4x3xf32> -> tensor<1x2x4x4xf32>
  %b = seg.slice %x start = [0, 1, 0, 0] size = [1, 2, 4, 4] step = [1, 1, 1, 1] : tensor<1x4x4x4xf32> -> tensor<1x2x4x4xf32>
  %y = seg.concat %pa, %b dim = 1 : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32> -> tensor<1x4x4x4xf32>
  return %y : tensor<1x4x4x4xf32>
}

// -----

// A nonzero pad value: a shift fills with 0.
// CHECK-LABEL: func.func @negative_nonzero_pad
// CHECK: seg.pad
// CHECK: seg.concat
// CHECK-NOT: seg.shift
// CHECK-NOT: seg.channel_shift
func.func @negative_nonzero_pad(%x: tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32> {
  %a = seg.slice %x start = [0, 0, 0, 0] size = [1, 2, 4, 3] step = [1, 1, 1, 1] : tensor<1x4x4x4xf32> -> tensor<1x2x4x3xf32>
  %pa = seg.pad %a low = [0, 0, 0, 1] high = [0, 0, 0, 0] value = 1.0 : tensor<1x2x4x3xf32> -> tensor<1x2x4x4xf32>
  %b = seg.slice %x start = [0, 2, 0, 0] size = [1, 2, 4, 4] step = [1, 1, 1, 1] : tensor<1x4x4x4xf32> -> tensor<1x2x4x4xf32>
  %y = seg.concat %pa, %b dim = 1 : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32> -> tensor<1x4x4x4xf32>
  return %y : tensor<1x4x4x4xf32>
}

// -----

// The pad zeroes column 0 although a shift by +1 of a window starting at
// column 1 would read x's column 0 there.
// CHECK-LABEL: func.func @negative_pad_not_a_shift
// CHECK: seg.concat
// CHECK-NOT: seg.shift
// CHECK-NOT: seg.channel_shift
func.func @negative_pad_not_a_shift(%x: tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32> {
  %a = seg.slice %x start = [0, 0, 0, 1] size = [1, 2, 4, 3] step = [1, 1, 1, 1] : tensor<1x4x4x4xf32> -> tensor<1x2x4x3xf32>
  %pa = seg.pad %a low = [0, 0, 0, 1] high = [0, 0, 0, 0] value = 0.0 : tensor<1x2x4x3xf32> -> tensor<1x2x4x4xf32>
  %b = seg.slice %x start = [0, 2, 0, 0] size = [1, 2, 4, 4] step = [1, 1, 1, 1] : tensor<1x4x4x4xf32> -> tensor<1x2x4x4xf32>
  %y = seg.concat %pa, %b dim = 1 : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32> -> tensor<1x4x4x4xf32>
  return %y : tensor<1x4x4x4xf32>
}

// -----

// Group sizes that do not add up to the tensor's: a concat of 4 of x's 6
// channels.
// CHECK-LABEL: func.func @negative_mismatched_groups
// CHECK: seg.concat
// CHECK-NOT: seg.shift
// CHECK-NOT: seg.channel_shift
func.func @negative_mismatched_groups(%x: tensor<1x6x4x4xf32>) -> tensor<1x4x4x4xf32> {
  %a = seg.slice %x start = [0, 0, 0, 0] size = [1, 2, 4, 3] step = [1, 1, 1, 1] : tensor<1x6x4x4xf32> -> tensor<1x2x4x3xf32>
  %pa = seg.pad %a low = [0, 0, 0, 1] high = [0, 0, 0, 0] value = 0.0 : tensor<1x2x4x3xf32> -> tensor<1x2x4x4xf32>
  %b = seg.slice %x start = [0, 2, 0, 0] size = [1, 2, 4, 4] step = [1, 1, 1, 1] : tensor<1x6x4x4xf32> -> tensor<1x2x4x4xf32>
  %y = seg.concat %pa, %b dim = 1 : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32> -> tensor<1x4x4x4xf32>
  return %y : tensor<1x4x4x4xf32>
}

// -----

// Slices of two different tensors.
// CHECK-LABEL: func.func @negative_different_tensors
// CHECK: seg.concat
// CHECK-NOT: seg.shift
// CHECK-NOT: seg.channel_shift
// CHECK-NOT: seg.roll
func.func @negative_different_tensors(%x: tensor<1x4x4x4xf32>, %z: tensor<1x4x4x4xf32>) -> (tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>) {
  %a = seg.slice %x start = [0, 0, 0, 0] size = [1, 2, 4, 3] step = [1, 1, 1, 1] : tensor<1x4x4x4xf32> -> tensor<1x2x4x3xf32>
  %pa = seg.pad %a low = [0, 0, 0, 1] high = [0, 0, 0, 0] value = 0.0 : tensor<1x2x4x3xf32> -> tensor<1x2x4x4xf32>
  %b = seg.slice %z start = [0, 2, 0, 0] size = [1, 2, 4, 4] step = [1, 1, 1, 1] : tensor<1x4x4x4xf32> -> tensor<1x2x4x4xf32>
  %y = seg.concat %pa, %b dim = 1 : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32> -> tensor<1x4x4x4xf32>
  // Not a roll either: the two halves of the rotation come from x and z.
  %c = seg.slice %x start = [0, 0, 0, 2] size = [1, 4, 4, 2] step = [1, 1, 1, 1] : tensor<1x4x4x4xf32> -> tensor<1x4x4x2xf32>
  %d = seg.slice %z start = [0, 0, 0, 0] size = [1, 4, 4, 2] step = [1, 1, 1, 1] : tensor<1x4x4x4xf32> -> tensor<1x4x4x2xf32>
  %r = seg.concat %c, %d dim = 3 : tensor<1x4x4x2xf32>, tensor<1x4x4x2xf32> -> tensor<1x4x4x4xf32>
  return %y, %r : tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>
}

// -----

// Cyclic and zero-filled shifts in one concat.
// CHECK-LABEL: func.func @negative_mixed_modes
// CHECK: seg.concat
// CHECK-NOT: seg.shift
func.func @negative_mixed_modes(%x: tensor<2x3x4x2xf32>) -> tensor<2x3x4x2xf32> {
  %a = seg.slice %x start = [0, 1, 0, 0] size = [2, 2, 2, 2] step = [1, 1, 1, 1] : tensor<2x3x4x2xf32> -> tensor<2x2x2x2xf32>
  %pa = seg.pad %a low = [0, 0, 0, 0] high = [0, 1, 0, 0] value = 0.0 : tensor<2x2x2x2xf32> -> tensor<2x3x2x2xf32>
  %b = seg.slice %x start = [0, 0, 2, 0] size = [2, 3, 2, 2] step = [1, 1, 1, 1] : tensor<2x3x4x2xf32> -> tensor<2x3x2x2xf32>
  %rb = seg.roll %b shifts = [1] dims = [1] : tensor<2x3x2x2xf32>
  %y = seg.concat %pa, %rb dim = 2 : tensor<2x3x2x2xf32>, tensor<2x3x2x2xf32> -> tensor<2x3x4x2xf32>
  return %y : tensor<2x3x4x2xf32>
}

// -----

// Windows of one dim that skip part of it: not a rotation.
// CHECK-LABEL: func.func @negative_not_a_rotation
// CHECK: seg.concat
// CHECK-NOT: seg.roll
func.func @negative_not_a_rotation(%x: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %a = seg.slice %x start = [0, 0, 0, 5] size = [1, 2, 4, 3] step = [1, 1, 1, 1] : tensor<1x2x4x8xf32> -> tensor<1x2x4x3xf32>
  %b = seg.slice %x start = [0, 0, 0, 1] size = [1, 2, 4, 5] step = [1, 1, 1, 1] : tensor<1x2x4x8xf32> -> tensor<1x2x4x5xf32>
  %y = seg.concat %a, %b dim = 3 : tensor<1x2x4x3xf32>, tensor<1x2x4x5xf32> -> tensor<1x2x4x8xf32>
  return %y : tensor<1x2x4x8xf32>
}
