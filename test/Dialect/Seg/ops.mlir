// RUN: gpuopt-opt %s | gpuopt-opt | FileCheck %s
// RUN: gpuopt-opt %s --mlir-print-op-generic | gpuopt-opt | FileCheck %s

// CHECK-LABEL: func.func @param
func.func @param() -> tensor<16x3x3x3xf32> {
  // CHECK: seg.param "enc1.conv.0.weight" : tensor<16x3x3x3xf32>
  %w = seg.param "enc1.conv.0.weight" : tensor<16x3x3x3xf32>
  return %w : tensor<16x3x3x3xf32>
}

// CHECK-LABEL: func.func @conv2d
func.func @conv2d(%x: tensor<1x3x64x64xf32>, %w: tensor<16x3x3x3xf32>, %b: tensor<16xf32>,
                  %dw: tensor<16x1x3x3xf32>) -> tensor<1x16x32x32xf32> {
  // CHECK: %[[Y:.*]] = seg.conv2d %{{.*}}, %{{.*}}, %{{.*}} stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 1 : tensor<1x3x64x64xf32>, tensor<16x3x3x3xf32>, tensor<16xf32> -> tensor<1x16x64x64xf32>
  %y = seg.conv2d %x, %w, %b stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 1
       : tensor<1x3x64x64xf32>, tensor<16x3x3x3xf32>, tensor<16xf32> -> tensor<1x16x64x64xf32>
  // CHECK: seg.conv2d %[[Y]], %{{.*}} stride = [2, 2] padding = [2, 2] dilation = [2, 2] groups = 16 : tensor<1x16x64x64xf32>, tensor<16x1x3x3xf32> -> tensor<1x16x32x32xf32>
  %z = seg.conv2d %y, %dw stride = [2, 2] padding = [2, 2] dilation = [2, 2] groups = 16
       : tensor<1x16x64x64xf32>, tensor<16x1x3x3xf32> -> tensor<1x16x32x32xf32>
  return %z : tensor<1x16x32x32xf32>
}

// CHECK-LABEL: func.func @conv_transpose2d
func.func @conv_transpose2d(%x: tensor<1x64x8x8xf32>, %w: tensor<64x32x2x2xf32>, %b: tensor<32xf32>,
                            %w3: tensor<64x16x3x3xf32>) -> (tensor<1x32x16x16xf32>, tensor<1x32x16x16xf32>) {
  // CHECK: seg.conv_transpose2d %{{.*}}, %{{.*}}, %{{.*}} stride = [2, 2] padding = [0, 0] output_padding = [0, 0] dilation = [1, 1] groups = 1 : tensor<1x64x8x8xf32>, tensor<64x32x2x2xf32>, tensor<32xf32> -> tensor<1x32x16x16xf32>
  %y = seg.conv_transpose2d %x, %w, %b stride = [2, 2] padding = [0, 0] output_padding = [0, 0]
       dilation = [1, 1] groups = 1
       : tensor<1x64x8x8xf32>, tensor<64x32x2x2xf32>, tensor<32xf32> -> tensor<1x32x16x16xf32>
  // CHECK: seg.conv_transpose2d %{{.*}}, %{{.*}} stride = [2, 2] padding = [1, 1] output_padding = [1, 1] dilation = [1, 1] groups = 2 : tensor<1x64x8x8xf32>, tensor<64x16x3x3xf32> -> tensor<1x32x16x16xf32>
  %z = seg.conv_transpose2d %x, %w3 stride = [2, 2] padding = [1, 1] output_padding = [1, 1]
       dilation = [1, 1] groups = 2
       : tensor<1x64x8x8xf32>, tensor<64x16x3x3xf32> -> tensor<1x32x16x16xf32>
  return %y, %z : tensor<1x32x16x16xf32>, tensor<1x32x16x16xf32>
}

// CHECK-LABEL: func.func @norms
func.func @norms(%x: tensor<1x16x8x8xf32>, %c: tensor<16xf32>, %t: tensor<1x64x128xf32>,
                 %g: tensor<128xf32>)
    -> (tensor<1x16x8x8xf32>, tensor<1x64x128xf32>, tensor<1x16x8x8xf32>) {
  // CHECK: seg.batch_norm %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} epsilon = 1.000000e-05 : tensor<1x16x8x8xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32> -> tensor<1x16x8x8xf32>
  %y = seg.batch_norm %x, %c, %c, %c, %c epsilon = 1.0e-05
       : tensor<1x16x8x8xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>
         -> tensor<1x16x8x8xf32>
  // CHECK: seg.layer_norm %{{.*}}, %{{.*}}, %{{.*}} epsilon = 1.000000e-05 : tensor<1x64x128xf32>, tensor<128xf32>, tensor<128xf32> -> tensor<1x64x128xf32>
  %z = seg.layer_norm %t, %g, %g epsilon = 1.0e-05
       : tensor<1x64x128xf32>, tensor<128xf32>, tensor<128xf32> -> tensor<1x64x128xf32>
  // CHECK: seg.layer_norm %{{.*}}, %{{.*}}, %{{.*}} axis = 1 epsilon = 1.000000e-05 : tensor<1x16x8x8xf32>, tensor<16xf32>, tensor<16xf32> -> tensor<1x16x8x8xf32>
  %a = seg.layer_norm %x, %c, %c axis = 1 epsilon = 1.0e-05
       : tensor<1x16x8x8xf32>, tensor<16xf32>, tensor<16xf32> -> tensor<1x16x8x8xf32>
  return %y, %z, %a : tensor<1x16x8x8xf32>, tensor<1x64x128xf32>, tensor<1x16x8x8xf32>
}

// CHECK-LABEL: func.func @linear
func.func @linear(%t: tensor<1x64x128xf32>, %w: tensor<256x128xf32>, %b: tensor<256xf32>)
    -> (tensor<1x64x256xf32>, tensor<1x64x256xf32>) {
  // CHECK: seg.linear %{{.*}}, %{{.*}}, %{{.*}} : tensor<1x64x128xf32>, tensor<256x128xf32>, tensor<256xf32> -> tensor<1x64x256xf32>
  %y = seg.linear %t, %w, %b : tensor<1x64x128xf32>, tensor<256x128xf32>, tensor<256xf32> -> tensor<1x64x256xf32>
  // CHECK: seg.linear %{{.*}}, %{{.*}} : tensor<1x64x128xf32>, tensor<256x128xf32> -> tensor<1x64x256xf32>
  %z = seg.linear %t, %w : tensor<1x64x128xf32>, tensor<256x128xf32> -> tensor<1x64x256xf32>
  return %y, %z : tensor<1x64x256xf32>, tensor<1x64x256xf32>
}

// CHECK-LABEL: func.func @elementwise
func.func @elementwise(%x: tensor<1x16x8x8xf32>, %s: tensor<1x16x1x1xf32>, %v: tensor<8xf32>)
    -> tensor<1x16x8x8xf32> {
  // CHECK: seg.relu %{{.*}} : tensor<1x16x8x8xf32>
  %a = seg.relu %x : tensor<1x16x8x8xf32>
  // CHECK: seg.sigmoid %{{.*}} : tensor<1x16x8x8xf32>
  %b = seg.sigmoid %a : tensor<1x16x8x8xf32>
  // CHECK: seg.gelu %{{.*}} : tensor<1x16x8x8xf32>
  %c = seg.gelu %b : tensor<1x16x8x8xf32>
  // CHECK: seg.gelu %{{.*}} approximate = tanh : tensor<1x16x8x8xf32>
  %d = seg.gelu %c approximate = tanh : tensor<1x16x8x8xf32>
  // CHECK: seg.add %{{.*}}, %{{.*}} : tensor<1x16x8x8xf32>, tensor<1x16x8x8xf32> -> tensor<1x16x8x8xf32>
  %e = seg.add %d, %x : tensor<1x16x8x8xf32>, tensor<1x16x8x8xf32> -> tensor<1x16x8x8xf32>
  // CHECK: seg.mul %{{.*}}, %{{.*}} : tensor<1x16x8x8xf32>, tensor<1x16x1x1xf32> -> tensor<1x16x8x8xf32>
  %f = seg.mul %e, %s : tensor<1x16x8x8xf32>, tensor<1x16x1x1xf32> -> tensor<1x16x8x8xf32>
  // CHECK: seg.add %{{.*}}, %{{.*}} : tensor<8xf32>, tensor<1x16x8x8xf32> -> tensor<1x16x8x8xf32>
  %g = seg.add %v, %f : tensor<8xf32>, tensor<1x16x8x8xf32> -> tensor<1x16x8x8xf32>
  return %g : tensor<1x16x8x8xf32>
}

// CHECK-LABEL: func.func @pool_and_resample
func.func @pool_and_resample(%x: tensor<1x16x64x64xf32>)
    -> (tensor<1x16x32x32xf32>, tensor<1x16x33x33xf32>, tensor<1x16x128x128xf32>, tensor<1x16x96x96xf32>) {
  // CHECK: seg.max_pool2d %{{.*}} kernel = [2, 2] stride = [2, 2] padding = [0, 0] dilation = [1, 1] ceil_mode = false : tensor<1x16x64x64xf32> -> tensor<1x16x32x32xf32>
  %a = seg.max_pool2d %x kernel = [2, 2] stride = [2, 2] padding = [0, 0] dilation = [1, 1] ceil_mode = false
       : tensor<1x16x64x64xf32> -> tensor<1x16x32x32xf32>
  // CHECK: seg.max_pool2d %{{.*}} kernel = [3, 3] stride = [2, 2] padding = [1, 1] dilation = [1, 1] ceil_mode = true : tensor<1x16x64x64xf32> -> tensor<1x16x33x33xf32>
  %b = seg.max_pool2d %x kernel = [3, 3] stride = [2, 2] padding = [1, 1] dilation = [1, 1] ceil_mode = true
       : tensor<1x16x64x64xf32> -> tensor<1x16x33x33xf32>
  // CHECK: seg.upsample_bilinear %{{.*}} size = [128, 128] align_corners = false : tensor<1x16x64x64xf32> -> tensor<1x16x128x128xf32>
  %c = seg.upsample_bilinear %x size = [128, 128] align_corners = false
       : tensor<1x16x64x64xf32> -> tensor<1x16x128x128xf32>
  // CHECK: seg.upsample_nearest %{{.*}} size = [96, 96] : tensor<1x16x64x64xf32> -> tensor<1x16x96x96xf32>
  %d = seg.upsample_nearest %x size = [96, 96] : tensor<1x16x64x64xf32> -> tensor<1x16x96x96xf32>
  return %a, %b, %c, %d : tensor<1x16x32x32xf32>, tensor<1x16x33x33xf32>, tensor<1x16x128x128xf32>, tensor<1x16x96x96xf32>
}

// CHECK-LABEL: func.func @data_movement
func.func @data_movement(%x: tensor<1x16x8x8xf32>, %y: tensor<1x32x8x8xf32>) -> tensor<1x64x48xf32> {
  // CHECK: %[[C:.*]] = seg.concat %{{.*}}, %{{.*}} dim = 1 : tensor<1x16x8x8xf32>, tensor<1x32x8x8xf32> -> tensor<1x48x8x8xf32>
  %c = seg.concat %x, %y dim = 1 : tensor<1x16x8x8xf32>, tensor<1x32x8x8xf32> -> tensor<1x48x8x8xf32>
  // CHECK: %[[S:.*]] = seg.slice %[[C]] start = [0, 3, 0, 0] size = [1, 1, 8, 8] step = [1, 1, 1, 1] : tensor<1x48x8x8xf32> -> tensor<1x1x8x8xf32>
  %s = seg.slice %c start = [0, 3, 0, 0] size = [1, 1, 8, 8] step = [1, 1, 1, 1]
       : tensor<1x48x8x8xf32> -> tensor<1x1x8x8xf32>
  // CHECK: %[[R:.*]] = seg.roll %[[S]] shifts = [3] dims = [2] : tensor<1x1x8x8xf32>
  %r = seg.roll %s shifts = [3] dims = [2] : tensor<1x1x8x8xf32>
  // CHECK: seg.roll %[[R]] shifts = [-1, 9] dims = [3, 2] : tensor<1x1x8x8xf32>
  %r2 = seg.roll %r shifts = [-1, 9] dims = [3, 2] : tensor<1x1x8x8xf32>
  // CHECK: seg.pad %{{.*}} low = [0, 0, 2, 2] high = [0, 0, 2, 2] value = 0.000000e+00 : tensor<1x48x8x8xf32> -> tensor<1x48x12x12xf32>
  %p = seg.pad %c low = [0, 0, 2, 2] high = [0, 0, 2, 2] value = 0.0 : tensor<1x48x8x8xf32> -> tensor<1x48x12x12xf32>
  // CHECK: seg.slice %{{.*}} start = [0, 0, 2, 2] size = [1, 48, 8, 8] step = [1, 1, 1, 1]
  %q = seg.slice %p start = [0, 0, 2, 2] size = [1, 48, 8, 8] step = [1, 1, 1, 1]
       : tensor<1x48x12x12xf32> -> tensor<1x48x8x8xf32>
  // CHECK: %[[T:.*]] = seg.reshape %{{.*}} : tensor<1x48x8x8xf32> -> tensor<1x48x64xf32>
  %t = seg.reshape %q : tensor<1x48x8x8xf32> -> tensor<1x48x64xf32>
  // CHECK: seg.permute %[[T]] dims = [0, 2, 1] : tensor<1x48x64xf32> -> tensor<1x64x48xf32>
  %u = seg.permute %t dims = [0, 2, 1] : tensor<1x48x64xf32> -> tensor<1x64x48xf32>
  return %u : tensor<1x64x48xf32>
}

// CHECK-LABEL: func.func @other_float_types
func.func @other_float_types(%x: tensor<2x8xf16>, %y: tensor<2x8xbf16>) -> (tensor<2x8xf16>, tensor<2x8xbf16>) {
  // CHECK: seg.relu %{{.*}} : tensor<2x8xf16>
  %a = seg.relu %x : tensor<2x8xf16>
  // CHECK: seg.sigmoid %{{.*}} : tensor<2x8xbf16>
  %b = seg.sigmoid %y : tensor<2x8xbf16>
  return %a, %b : tensor<2x8xf16>, tensor<2x8xbf16>
}

// CHECK-LABEL: func.func @shift_ops
func.func @shift_ops(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x1x1xf32>, %b: tensor<4xf32>, %w3: tensor<4x4x3x3xf32>)
    -> (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) {
  // CHECK: seg.channel_shift %{{.*}} offsets_h = [0, 1, 2, 3] offsets_w = [] mode = cyclic : tensor<1x4x8x8xf32>
  %s = seg.channel_shift %x offsets_h = [0, 1, 2, 3] offsets_w = [] mode = cyclic : tensor<1x4x8x8xf32>
  // CHECK: %[[C:.*]] = seg.fused_conv2d %{{.*}}, %{{.*}}, %{{.*}} offsets_h = [] offsets_w = [-2, -1, 1, 2] mode = zero stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 activation = none : (tensor<1x4x8x8xf32>, tensor<4x4x1x1xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  %c = seg.fused_conv2d %x, %w, %b offsets_h = [] offsets_w = [-2, -1, 1, 2] mode = zero
       stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 activation = none
       : (tensor<1x4x8x8xf32>, tensor<4x4x1x1xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  // CHECK: seg.fused_conv2d %{{.*}}, %{{.*}} residual %[[C]] offsets_h = [] offsets_w = [] mode = cyclic stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 1 activation = gelu_tanh : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %r = seg.fused_conv2d %x, %w3 residual %c offsets_h = [] offsets_w = [] mode = cyclic
       stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 1 activation = gelu_tanh
       : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  return %s, %c, %r : tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>
}

// The frame shift of a fused convolution (TSM), in both forms.
// CHECK-LABEL: func.func @frame_shift
func.func @frame_shift(%x: tensor<4x4x8x8xf32>, %w: tensor<4x4x1x1xf32>) -> tensor<4x4x8x8xf32> {
  // CHECK: seg.fused_conv2d %{{.*}}, %{{.*}} offsets_h = [1, 0, 0, 0] offsets_w = [] mode = zero frame_shift = <frames = 2, offsets = [-1, 1, 0, 0]> stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 activation = none : (tensor<4x4x8x8xf32>, tensor<4x4x1x1xf32>) -> tensor<4x4x8x8xf32>
  %y = seg.fused_conv2d %x, %w offsets_h = [1, 0, 0, 0] offsets_w = [] mode = zero
       frame_shift = <frames = 2, offsets = [-1, 1, 0, 0]>
       stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 activation = none
       : (tensor<4x4x8x8xf32>, tensor<4x4x1x1xf32>) -> tensor<4x4x8x8xf32>
  return %y : tensor<4x4x8x8xf32>
}

// CHECK-LABEL: func.func @fold_batch_norm
func.func @fold_batch_norm(%w: tensor<4x3x3x3xf32>, %v: tensor<4xf32>) -> (tensor<4x3x3x3xf32>, tensor<4xf32>, tensor<4x3x3x3xf32>) {
  // CHECK: seg.fold_batch_norm %{{.*}} bias %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} epsilon = 1.000000e-03 : (tensor<4x3x3x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<4x3x3x3xf32>, tensor<4xf32>)
  %a, %b = seg.fold_batch_norm %w bias %v, %v, %v, %v, %v epsilon = 1.0e-03
      : (tensor<4x3x3x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<4x3x3x3xf32>, tensor<4xf32>)
  // CHECK: seg.fold_batch_norm %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} epsilon = 1.000000e-05 : (tensor<4x3x3x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<4x3x3x3xf32>, tensor<4xf32>)
  %c, %d = seg.fold_batch_norm %w, %v, %v, %v, %v epsilon = 1.0e-05
      : (tensor<4x3x3x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<4x3x3x3xf32>, tensor<4xf32>)
  return %a, %b, %c : tensor<4x3x3x3xf32>, tensor<4xf32>, tensor<4x3x3x3xf32>
}

// CHECK-LABEL: func.func @deform
func.func @deform(%x: tensor<1x4x8x8xf32>, %w: tensor<6x4x1x1xf32>, %b: tensor<6xf32>) -> tensor<1x6x8x8xf32> {
  // CHECK: %[[O:.*]] = seg.shift_offsets offsets_h = [0, 1, 2, 3] offsets_w = [] mode = cyclic input_size = [8, 8] kernel = [1, 1] stride = [1, 1] padding = [0, 0] dilation = [1, 1] : tensor<1x8x8x8xf32>
  %o = seg.shift_offsets offsets_h = [0, 1, 2, 3] offsets_w = [] mode = cyclic input_size = [8, 8]
         kernel = [1, 1] stride = [1, 1] padding = [0, 0] dilation = [1, 1] : tensor<1x8x8x8xf32>
  // CHECK: seg.deform_conv2d %{{.*}}, %[[O]], %{{.*}}, %{{.*}} stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 offset_groups = 4 : (tensor<1x4x8x8xf32>, tensor<1x8x8x8xf32>, tensor<6x4x1x1xf32>, tensor<6xf32>) -> tensor<1x6x8x8xf32>
  %y = seg.deform_conv2d %x, %o, %w, %b stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 offset_groups = 4
       : (tensor<1x4x8x8xf32>, tensor<1x8x8x8xf32>, tensor<6x4x1x1xf32>, tensor<6xf32>) -> tensor<1x6x8x8xf32>
  return %y : tensor<1x6x8x8xf32>
}

// CHECK-LABEL: func.func @group_shift
func.func @group_shift(%x: tensor<2x3x4x2x2xf32>) -> (tensor<2x3x4x2x2xf32>, tensor<2x3x4x2x2xf32>) {
  // CHECK: seg.shift %{{.*}} group_dim = 2 dims = [1] offsets = [-1, 1, 0, 0] mode = zero : tensor<2x3x4x2x2xf32>
  %a = seg.shift %x group_dim = 2 dims = [1] offsets = [-1, 1, 0, 0] mode = zero : tensor<2x3x4x2x2xf32>
  // CHECK: seg.shift %{{.*}} group_dim = 0 dims = [3, 4] offsets = [1, -1, 2, 0] mode = cyclic : tensor<2x3x4x2x2xf32>
  %b = seg.shift %x group_dim = 0 dims = [3, 4] offsets = [1, -1, 2, 0] mode = cyclic : tensor<2x3x4x2x2xf32>
  return %a, %b : tensor<2x3x4x2x2xf32>, tensor<2x3x4x2x2xf32>
}
