// RUN: gpuopt-opt %s -split-input-file --convert-seg-to-linalg | FileCheck %s --implicit-check-not=seg.

// Parameters become trailing arguments named by their state_dict key.
// CHECK-LABEL: func.func @params
// CHECK-SAME: (%[[X:.*]]: tensor<1x3x8x8xf32>, %[[W:.*]]: tensor<4x3x3x3xf32> {seg.param = "conv.weight"}, %[[B:.*]]: tensor<4xf32> {seg.param = "conv.bias"})
// CHECK: tensor.pad %[[X]] low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
// CHECK: linalg.generic
// CHECK: arith.addf
func.func @params(%x: tensor<1x3x8x8xf32>) -> tensor<1x4x4x4xf32> {
  %w = seg.param "conv.weight" : tensor<4x3x3x3xf32>
  %b = seg.param "conv.bias" : tensor<4xf32>
  %w2 = seg.param "conv.weight" : tensor<4x3x3x3xf32>
  %y = seg.conv2d %x, %w2, %b stride = [2, 2] padding = [1, 1] dilation = [1, 1] groups = 1 : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32> -> tensor<1x4x4x4xf32>
  return %y : tensor<1x4x4x4xf32>
}

// -----

// CHECK-LABEL: func.func @conv_kinds
// CHECK: linalg.depthwise_conv_2d_nchw_chw
// CHECK: linalg.conv_2d_ngchw_gfchw
// CHECK: tensor.collapse_shape
func.func @conv_kinds(%x: tensor<1x4x8x8xf32>, %dw: tensor<4x1x3x3xf32>, %gw: tensor<6x2x1x1xf32>) -> (tensor<1x4x8x8xf32>, tensor<1x6x8x8xf32>) {
  %a = seg.conv2d %x, %dw stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 4 : tensor<1x4x8x8xf32>, tensor<4x1x3x3xf32> -> tensor<1x4x8x8xf32>
  %b = seg.conv2d %x, %gw stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 2 : tensor<1x4x8x8xf32>, tensor<6x2x1x1xf32> -> tensor<1x6x8x8xf32>
  return %a, %b : tensor<1x4x8x8xf32>, tensor<1x6x8x8xf32>
}

// -----

// The shifted input of a fused convolution is a gather: wrap-around by
// remainders for a cyclic shift; then the convolution and one epilogue.
// CHECK-LABEL: func.func @fused_conv
// CHECK: arith.constant dense<{{\[\[}}0, 1], [0, 0]]> : tensor<2x2xi64>
// CHECK: linalg.generic
// CHECK: arith.remsi
// CHECK: tensor.extract
// CHECK: linalg.conv_2d_nchw_fchw
// CHECK: linalg.generic
// CHECK: arith.maximumf
func.func @fused_conv(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x1x1xf32>, %b: tensor<2xf32>) -> tensor<1x2x4x4xf32> {
  %y = seg.fused_conv2d %x, %w, %b offsets_h = [0, 1] offsets_w = [] mode = cyclic stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 activation = relu : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  return %y : tensor<1x2x4x4xf32>
}

// -----

// A roll is two slices and a concat per rolled dim.
// CHECK-LABEL: func.func @roll
// CHECK-SAME: (%[[X:.*]]: tensor<1x1x8x6xf32>)
// CHECK: %[[T:.*]] = tensor.extract_slice %[[X]][0, 0, 5, 0] [1, 1, 3, 6] [1, 1, 1, 1]
// CHECK: %[[H:.*]] = tensor.extract_slice %[[X]][0, 0, 0, 0] [1, 1, 5, 6] [1, 1, 1, 1]
// CHECK: tensor.concat dim(2) %[[T]], %[[H]]
func.func @roll(%x: tensor<1x1x8x6xf32>) -> tensor<1x1x8x6xf32> {
  %y = seg.roll %x shifts = [-5] dims = [2] : tensor<1x1x8x6xf32>
  return %y : tensor<1x1x8x6xf32>
}

// -----

// CHECK-LABEL: func.func @pool_and_layout
// CHECK: tensor.pad {{.*}} low[0, 0, 1, 1] high[0, 0, 0, 0]
// CHECK: arith.constant 0xFF800000 : f32
// CHECK: linalg.pooling_nchw_max
// CHECK: linalg.transpose
// CHECK: tensor.collapse_shape
// CHECK: tensor.expand_shape
func.func @pool_and_layout(%x: tensor<1x2x8x8xf32>) -> tensor<1x16x2xf32> {
  %p = seg.max_pool2d %x kernel = [3, 3] stride = [2, 2] padding = [1, 1] dilation = [1, 1] ceil_mode = false : tensor<1x2x8x8xf32> -> tensor<1x2x4x4xf32>
  %t = seg.permute %p dims = [0, 2, 3, 1] : tensor<1x2x4x4xf32> -> tensor<1x4x4x2xf32>
  %r = seg.reshape %t : tensor<1x4x4x2xf32> -> tensor<1x16x2xf32>
  return %r : tensor<1x16x2xf32>
}

// -----

// A LayerNorm over the channels of an NCHW map reduces the middle dim of its
// (N, C, H·W) view (the trailing form is the same with H·W = 1): sums over
// d1 into (N, H·W), then the elementwise normalization reading them at
// (d0, d2) and gamma/beta at d1.
// CHECK: #[[IN:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-NEXT: #[[OUT:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-NEXT: #[[VEC:.*]] = affine_map<(d0, d1, d2) -> (d1)>
// CHECK: func.func @layer_norm_axis
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>, %[[Y:.*]]: tensor<1x3x4x2xf32>, %[[V:.*]]: tensor<3xf32>)
// CHECK: %[[S:.*]] = linalg.generic {indexing_maps = [#[[IN]], #[[OUT]]], iterator_types = ["parallel", "reduction", "parallel"]} ins(%[[X]] : tensor<2x3x4xf32>) outs(%{{.*}} : tensor<2x4xf32>)
// CHECK: %[[Q:.*]] = linalg.generic {indexing_maps = [#[[IN]], #[[OUT]], #[[OUT]]], iterator_types = ["parallel", "reduction", "parallel"]} ins(%[[X]], %[[S]] : tensor<2x3x4xf32>, tensor<2x4xf32>)
// CHECK: %[[A:.*]] = linalg.generic {indexing_maps = [#[[IN]], #[[OUT]], #[[OUT]], #[[VEC]], #[[VEC]], #[[IN]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[X]], %[[S]], %[[Q]], %[[V]], %[[V]] :
// CHECK: math.sqrt
// CHECK: tensor.expand_shape {{.*}} : tensor<24xf32> into tensor<1x3x8xf32>
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "parallel"]} ins(%{{.*}} : tensor<1x3x8xf32>) outs(%{{.*}} : tensor<1x8xf32>)
// CHECK: %[[B:.*]] = tensor.expand_shape {{.*}} : tensor<24xf32> into tensor<1x3x4x2xf32>
// CHECK: return %[[A]], %[[B]]
func.func @layer_norm_axis(%x: tensor<2x3x4xf32>, %y: tensor<1x3x4x2xf32>, %v: tensor<3xf32>) -> (tensor<2x3x4xf32>, tensor<1x3x4x2xf32>) {
  %a = seg.layer_norm %x, %v, %v axis = 1 epsilon = 1.0e-05 : tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32> -> tensor<2x3x4xf32>
  %b = seg.layer_norm %y, %v, %v axis = 1 epsilon = 1.0e-05 : tensor<1x3x4x2xf32>, tensor<3xf32>, tensor<3xf32> -> tensor<1x3x4x2xf32>
  return %a, %b : tensor<2x3x4xf32>, tensor<1x3x4x2xf32>
}

// -----

// Every other op lowers too (no seg op may remain: --implicit-check-not).
// CHECK-LABEL: func.func @everything_else
func.func @everything_else(%x: tensor<1x4x8x8xf32>, %v: tensor<4xf32>, %t: tensor<1x64x4xf32>, %lw: tensor<6x4xf32>,
                           %tw: tensor<4x2x2x2xf32>, %w1: tensor<4x4x1x1xf32>, %v8: tensor<8xf32>) -> (tensor<1x4x8x8xf32>, tensor<1x64x6xf32>, tensor<1x2x16x16xf32>, tensor<1x4x16x16xf32>, tensor<1x8x8x8xf32>, tensor<1x4x8x8xf32>) {
  %bn = seg.batch_norm %x, %v, %v, %v, %v epsilon = 1.0e-05 : tensor<1x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<1x4x8x8xf32>
  %g = seg.gelu %bn : tensor<1x4x8x8xf32>
  %g2 = seg.gelu %g approximate = tanh : tensor<1x4x8x8xf32>
  %s = seg.sigmoid %g2 : tensor<1x4x8x8xf32>
  %m = seg.mul %s, %v8 : tensor<1x4x8x8xf32>, tensor<8xf32> -> tensor<1x4x8x8xf32>
  %ln = seg.layer_norm %t, %v, %v epsilon = 1.0e-05 : tensor<1x64x4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<1x64x4xf32>
  %l = seg.linear %ln, %lw : tensor<1x64x4xf32>, tensor<6x4xf32> -> tensor<1x64x6xf32>
  %ct = seg.conv_transpose2d %x, %tw stride = [2, 2] padding = [0, 0] output_padding = [0, 0] dilation = [1, 1] groups = 1 : tensor<1x4x8x8xf32>, tensor<4x2x2x2xf32> -> tensor<1x2x16x16xf32>
  %up = seg.upsample_bilinear %m size = [16, 16] align_corners = false : tensor<1x4x8x8xf32> -> tensor<1x4x16x16xf32>
  %un = seg.upsample_nearest %up size = [16, 16] : tensor<1x4x16x16xf32> -> tensor<1x4x16x16xf32>
  %c = seg.concat %x, %m dim = 1 : tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32> -> tensor<1x8x8x8xf32>
  %p = seg.pad %x low = [0, 0, 1, 0] high = [0, 0, 0, 1] value = 2.0 : tensor<1x4x8x8xf32> -> tensor<1x4x9x9xf32>
  %sl = seg.slice %p start = [0, 0, 1, 0] size = [1, 4, 8, 8] step = [1, 1, 1, 1] : tensor<1x4x9x9xf32> -> tensor<1x4x8x8xf32>
  %sh = seg.channel_shift %sl offsets_h = [] offsets_w = [1, 0, -1, 2] mode = zero : tensor<1x4x8x8xf32>
  %nw, %nb = seg.fold_batch_norm %w1, %v, %v, %v, %v epsilon = 1.0e-05 : (tensor<4x4x1x1xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<4x4x1x1xf32>, tensor<4xf32>)
  %off = seg.shift_offsets offsets_h = [0, 1, 2, 3] offsets_w = [] mode = cyclic input_size = [8, 8] kernel = [1, 1] stride = [1, 1] padding = [0, 0] dilation = [1, 1] : tensor<1x8x8x8xf32>
  %d = seg.deform_conv2d %sh, %off, %nw, %nb stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 offset_groups = 4 : (tensor<1x4x8x8xf32>, tensor<1x8x8x8xf32>, tensor<4x4x1x1xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  %a = seg.add %d, %x : tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32> -> tensor<1x4x8x8xf32>
  %r = seg.relu %a : tensor<1x4x8x8xf32>
  return %r, %l, %ct, %un, %c, %m : tensor<1x4x8x8xf32>, tensor<1x64x6xf32>, tensor<1x2x16x16xf32>, tensor<1x4x16x16xf32>, tensor<1x8x8x8xf32>, tensor<1x4x8x8xf32>
}

// -----

// seg.shift is one gather linalg.generic reading its input at the shifted
// index; the offsets table holds the normalized offsets (zero-filled: clamped
// to [-L, L], here -5 -> -3; cyclic: mod L, here -1 -> 2 and 7 -> 1).
// CHECK-LABEL: func.func @group_shift
// CHECK: %[[ZT:.*]] = arith.constant dense<{{\[}}[-3, 1, 0, 0]]> : tensor<1x4xi64>
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} outs(
// CHECK: tensor.extract %[[ZT]]
// CHECK: arith.cmpi sge
// CHECK: arith.cmpi slt
// CHECK: arith.select
// CHECK: %[[CT:.*]] = arith.constant dense<{{\[}}[2, 1]]> : tensor<1x2xi64>
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel"]} outs(
// CHECK: tensor.extract %[[CT]]
// CHECK: arith.remsi
// CHECK-NOT: arith.select
// CHECK: return
func.func @group_shift(%x: tensor<2x3x4x2x2xf32>, %t: tensor<2x3x2xf32>) -> (tensor<2x3x4x2x2xf32>, tensor<2x3x2xf32>) {
  %a = seg.shift %x group_dim = 2 dims = [1] offsets = [-5, 1, 0, 0] mode = zero : tensor<2x3x4x2x2xf32>
  %b = seg.shift %t group_dim = 2 dims = [1] offsets = [-1, 7] mode = cyclic : tensor<2x3x2xf32>
  return %a, %b : tensor<2x3x4x2x2xf32>, tensor<2x3x2xf32>
}
