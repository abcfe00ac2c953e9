// RUN: gpuopt-opt %s -split-input-file --fuse-conv-bn-relu | FileCheck %s
// RUN: gpuopt-opt %s -split-input-file --fuse-conv-bn-relu=report=true -verify-diagnostics -o /dev/null
// RUN: gpuopt-opt %s -split-input-file --gpuopt-optimize --verify-each -o /dev/null
// RUN: gpuopt-opt %s -split-input-file --gpuopt-optimize=deform-conv=true --verify-each -o /dev/null

// UNet: Conv -> BN -> ReLU.
// CHECK-LABEL: func.func @conv_bn_relu
// CHECK-SAME: (%[[X:.*]]: tensor<1x3x8x8xf32>, %[[W:.*]]: tensor<4x3x3x3xf32>, %[[V:.*]]: tensor<4xf32>)
// CHECK: %[[NW:.*]], %[[NB:.*]] = seg.fold_batch_norm %[[W]], %[[V]], %[[V]], %[[V]], %[[V]] epsilon = 1.000000e-05
// CHECK: %[[Y:.*]] = seg.fused_conv2d %[[X]], %[[NW]], %[[NB]] offsets_h = [] offsets_w = [] mode = cyclic stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 1 activation = relu
// CHECK-NOT: seg.batch_norm
// CHECK-NOT: seg.relu
// CHECK: return %[[Y]]
// expected-remark @+1 {{fuse-conv-bn-relu: 1 batch_norm folded, 1 activations fused, 0 residual adds fused}}
func.func @conv_bn_relu(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %v: tensor<4xf32>) -> tensor<1x4x8x8xf32> {
  %c = seg.conv2d %x, %w stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 1 : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<1x4x8x8xf32>
  %n = seg.batch_norm %c, %v, %v, %v, %v epsilon = 1.0e-05 : tensor<1x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<1x4x8x8xf32>
  %r = seg.relu %n : tensor<1x4x8x8xf32>
  return %r : tensor<1x4x8x8xf32>
}

// -----

// UNeXt: Conv -> BN -> MaxPool -> ReLU; the ReLU moves above the pool.
// CHECK-LABEL: func.func @conv_bn_maxpool_relu
// CHECK: seg.fold_batch_norm %{{.*}} bias %{{.*}}
// CHECK: %[[C:.*]] = seg.fused_conv2d {{.*}} activation = relu
// CHECK: %[[P:.*]] = seg.max_pool2d %[[C]]
// CHECK-NOT: seg.relu
// CHECK: return %[[P]]
// expected-remark @+1 {{fuse-conv-bn-relu: 1 batch_norm folded, 1 activations fused, 0 residual adds fused}}
func.func @conv_bn_maxpool_relu(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %v: tensor<4xf32>) -> tensor<1x4x4x4xf32> {
  %c = seg.conv2d %x, %w, %v stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 1 : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32> -> tensor<1x4x8x8xf32>
  %n = seg.batch_norm %c, %v, %v, %v, %v epsilon = 1.0e-05 : tensor<1x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<1x4x8x8xf32>
  %p = seg.max_pool2d %n kernel = [2, 2] stride = [2, 2] padding = [0, 0] dilation = [1, 1] ceil_mode = false : tensor<1x4x8x8xf32> -> tensor<1x4x4x4xf32>
  %r = seg.relu %p : tensor<1x4x4x4xf32>
  return %r : tensor<1x4x4x4xf32>
}

// -----

// Conv -> BN -> bilinear upsample -> ReLU: the ReLU must stay after the
// upsample (interpolation does not commute with it).
// CHECK-LABEL: func.func @negative_relu_after_upsample
// CHECK: %[[C:.*]] = seg.fused_conv2d {{.*}} activation = none
// CHECK: %[[U:.*]] = seg.upsample_bilinear %[[C]]
// CHECK: seg.relu %[[U]]
// expected-remark @+1 {{fuse-conv-bn-relu: 1 batch_norm folded, 0 activations fused, 0 residual adds fused}}
func.func @negative_relu_after_upsample(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %v: tensor<4xf32>) -> tensor<1x4x16x16xf32> {
  %c = seg.conv2d %x, %w, %v stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 1 : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32> -> tensor<1x4x8x8xf32>
  %n = seg.batch_norm %c, %v, %v, %v, %v epsilon = 1.0e-05 : tensor<1x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<1x4x8x8xf32>
  %u = seg.upsample_bilinear %n size = [16, 16] align_corners = false : tensor<1x4x8x8xf32> -> tensor<1x4x16x16xf32>
  %r = seg.relu %u : tensor<1x4x16x16xf32>
  return %r : tensor<1x4x16x16xf32>
}

// -----

// Rolling-UNet's DSC branch: ReLU then BN; the BN cannot fold backwards.
// CHECK-LABEL: func.func @negative_bn_after_relu
// CHECK: seg.fused_conv2d {{.*}} activation = relu
// CHECK: seg.batch_norm
// CHECK-NOT: seg.fold_batch_norm
// expected-remark @+1 {{fuse-conv-bn-relu: 0 batch_norm folded, 1 activations fused, 0 residual adds fused}}
func.func @negative_bn_after_relu(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x1x1xf32>, %v: tensor<4xf32>) -> tensor<1x4x8x8xf32> {
  %c = seg.conv2d %x, %w, %v stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 : tensor<1x4x8x8xf32>, tensor<4x4x1x1xf32>, tensor<4xf32> -> tensor<1x4x8x8xf32>
  %r = seg.relu %c : tensor<1x4x8x8xf32>
  %n = seg.batch_norm %r, %v, %v, %v, %v epsilon = 1.0e-05 : tensor<1x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<1x4x8x8xf32>
  return %n : tensor<1x4x8x8xf32>
}

// -----

// A conv result used twice cannot absorb a BN applied to one use.
// CHECK-LABEL: func.func @negative_conv_with_two_uses
// CHECK: seg.conv2d
// CHECK: seg.batch_norm
// expected-remark @+1 {{fuse-conv-bn-relu: 0 batch_norm folded, 0 activations fused, 0 residual adds fused}}
func.func @negative_conv_with_two_uses(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x1x1xf32>, %v: tensor<4xf32>) -> (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) {
  %c = seg.conv2d %x, %w stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 : tensor<1x4x8x8xf32>, tensor<4x4x1x1xf32> -> tensor<1x4x8x8xf32>
  %n = seg.batch_norm %c, %v, %v, %v, %v epsilon = 1.0e-05 : tensor<1x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<1x4x8x8xf32>
  return %c, %n : tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>
}

// -----

// Conv -> GELU (tanh) -> + skip: activation, then the residual.
// CHECK-LABEL: func.func @conv_gelu_residual
// CHECK-SAME: (%[[X:.*]]: tensor<1x4x8x8xf32>, %[[W:.*]]: tensor<4x4x1x1xf32>, %[[S:.*]]: tensor<1x4x8x8xf32>)
// CHECK: %[[Y:.*]] = seg.fused_conv2d %[[X]], %[[W]] residual %[[S]] {{.*}} activation = gelu_tanh
// CHECK-NOT: seg.add
// CHECK: return %[[Y]]
// expected-remark @+1 {{fuse-conv-bn-relu: 0 batch_norm folded, 1 activations fused, 1 residual adds fused}}
func.func @conv_gelu_residual(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x1x1xf32>, %s: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %c = seg.conv2d %x, %w stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 : tensor<1x4x8x8xf32>, tensor<4x4x1x1xf32> -> tensor<1x4x8x8xf32>
  %g = seg.gelu %c approximate = tanh : tensor<1x4x8x8xf32>
  %y = seg.add %s, %g : tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32> -> tensor<1x4x8x8xf32>
  return %y : tensor<1x4x8x8xf32>
}

// -----

// The activation must not move past a residual add: relu(conv + s) stays.
// A broadcasting add is not a residual either.
// CHECK-LABEL: func.func @negative_relu_after_residual
// CHECK: %[[C:.*]] = seg.fused_conv2d {{.*}} residual {{.*}} activation = none
// CHECK: seg.relu %[[C]]
// CHECK: seg.add {{.*}} : tensor<1x4x8x8xf32>, tensor<1x4x1x1xf32>
// expected-remark @+1 {{fuse-conv-bn-relu: 0 batch_norm folded, 0 activations fused, 1 residual adds fused}}
func.func @negative_relu_after_residual(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x1x1xf32>, %s: tensor<1x4x8x8xf32>, %t: tensor<1x4x1x1xf32>) -> (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) {
  %c = seg.conv2d %x, %w stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 : tensor<1x4x8x8xf32>, tensor<4x4x1x1xf32> -> tensor<1x4x8x8xf32>
  %a = seg.add %c, %s : tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32> -> tensor<1x4x8x8xf32>
  %r = seg.relu %a : tensor<1x4x8x8xf32>
  %d = seg.conv2d %x, %w stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 : tensor<1x4x8x8xf32>, tensor<4x4x1x1xf32> -> tensor<1x4x8x8xf32>
  %b = seg.add %d, %t : tensor<1x4x8x8xf32>, tensor<1x4x1x1xf32> -> tensor<1x4x8x8xf32>
  return %r, %b : tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>
}

// -----

// Rolling-UNet's DSC branch: ReLU -> BN -> tokens -> concat with other tokens
// -> fc6. The BN folds forward into the columns of fc6 it feeds (128..131 of
// 8 here: offset 4): W' = W · diag(s) there, b' = b + W · t, all on params.
// CHECK-LABEL: func.func @relu_bn_tokens_concat_linear
// CHECK-SAME: (%[[X:.*]]: tensor<1x4x2x2xf32>, %[[O:.*]]: tensor<1x4x4xf32>, %[[W:.*]]: tensor<3x8xf32>, %[[B:.*]]: tensor<3xf32>, %[[M:.*]]: tensor<4xf32>, %[[V:.*]]: tensor<4xf32>, %[[G:.*]]: tensor<4xf32>, %[[BE:.*]]: tensor<4xf32>)
// CHECK: %[[R:.*]] = seg.relu %[[X]]
// CHECK: %[[F:.*]] = seg.reshape %[[R]] : tensor<1x4x2x2xf32> -> tensor<1x4x4xf32>
// CHECK: %[[T:.*]] = seg.permute %[[F]] dims = [0, 2, 1]
// CHECK: %[[CAT:.*]] = seg.concat %[[O]], %[[T]] dim = 2
// CHECK: %[[PART:.*]] = seg.slice %[[W]] start = [0, 4] size = [3, 4] step = [1, 1]
// CHECK: %[[PT:.*]] = seg.permute %[[PART]] dims = [1, 0] : tensor<3x4xf32> -> tensor<4x3xf32>
// CHECK: %[[FW:.*]], %[[SHIFT:.*]] = seg.fold_batch_norm %[[PT]], %[[M]], %[[V]], %[[G]], %[[BE]] epsilon = 1.000000e-05
// CHECK: %[[SCALED:.*]] = seg.permute %[[FW]] dims = [1, 0] : tensor<4x3xf32> -> tensor<3x4xf32>
// CHECK: %[[KEEP:.*]] = seg.slice %[[W]] start = [0, 0] size = [3, 4] step = [1, 1]
// CHECK: %[[NW:.*]] = seg.concat %[[KEEP]], %[[SCALED]] dim = 1 : tensor<3x4xf32>, tensor<3x4xf32> -> tensor<3x8xf32>
// CHECK: %[[ROW:.*]] = seg.reshape %[[SHIFT]] : tensor<4xf32> -> tensor<1x4xf32>
// CHECK: %[[BM:.*]] = seg.linear %[[ROW]], %[[PART]], %[[B]] : tensor<1x4xf32>, tensor<3x4xf32>, tensor<3xf32> -> tensor<1x3xf32>
// CHECK: %[[NB:.*]] = seg.reshape %[[BM]] : tensor<1x3xf32> -> tensor<3xf32>
// CHECK: %[[Y:.*]] = seg.linear %[[CAT]], %[[NW]], %[[NB]]
// CHECK-NOT: seg.batch_norm
// CHECK: return %[[Y]]
// expected-remark @+1 {{fuse-conv-bn-relu: 0 batch_norm folded, 0 activations fused, 0 residual adds fused, 1 batch_norm folded forward}}
func.func @relu_bn_tokens_concat_linear(%x: tensor<1x4x2x2xf32>, %o: tensor<1x4x4xf32>, %w: tensor<3x8xf32>, %b: tensor<3xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>, %g: tensor<4xf32>, %be: tensor<4xf32>) -> tensor<1x4x3xf32> {
  %r = seg.relu %x : tensor<1x4x2x2xf32>
  %n = seg.batch_norm %r, %m, %v, %g, %be epsilon = 1.0e-05 : tensor<1x4x2x2xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<1x4x2x2xf32>
  %f = seg.reshape %n : tensor<1x4x2x2xf32> -> tensor<1x4x4xf32>
  %t = seg.permute %f dims = [0, 2, 1] : tensor<1x4x4xf32> -> tensor<1x4x4xf32>
  %c = seg.concat %o, %t dim = 2 : tensor<1x4x4xf32>, tensor<1x4x4xf32> -> tensor<1x4x8xf32>
  %y = seg.linear %c, %w, %b : tensor<1x4x8xf32>, tensor<3x8xf32>, tensor<3xf32> -> tensor<1x4x3xf32>
  return %y : tensor<1x4x3xf32>
}

// -----

// BN -> 3×3 convolution without padding (stride 2): every output reads real
// BN outputs, so b' = b + Σ W · t; the consumer without a bias gets one,
// computed by the conv applied to a 3×3 map of t.
// CHECK-LABEL: func.func @bn_conv3x3_no_padding
// CHECK-SAME: (%[[X:.*]]: tensor<1x4x9x9xf32>, %[[W:.*]]: tensor<5x4x3x3xf32>, %[[V:.*]]: tensor<4xf32>)
// CHECK: %[[PT:.*]] = seg.permute %[[W]] dims = [1, 0, 2, 3] : tensor<5x4x3x3xf32> -> tensor<4x5x3x3xf32>
// CHECK: %[[FW:.*]], %[[SHIFT:.*]] = seg.fold_batch_norm %[[PT]], %[[V]], %[[V]], %[[V]], %[[V]]
// CHECK: %[[NW:.*]] = seg.permute %[[FW]] dims = [1, 0, 2, 3] : tensor<4x5x3x3xf32> -> tensor<5x4x3x3xf32>
// CHECK: %[[T1:.*]] = seg.reshape %[[SHIFT]] : tensor<4xf32> -> tensor<1x4x1x1xf32>
// CHECK: %[[T2:.*]] = seg.concat %[[T1]], %[[T1]], %[[T1]] dim = 3 : {{.*}} -> tensor<1x4x1x3xf32>
// CHECK: %[[T3:.*]] = seg.concat %[[T2]], %[[T2]], %[[T2]] dim = 2 : {{.*}} -> tensor<1x4x3x3xf32>
// CHECK: %[[BM:.*]] = seg.conv2d %[[T3]], %[[W]] stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 : tensor<1x4x3x3xf32>, tensor<5x4x3x3xf32> -> tensor<1x5x1x1xf32>
// CHECK: %[[NB:.*]] = seg.reshape %[[BM]] : tensor<1x5x1x1xf32> -> tensor<5xf32>
// CHECK: %[[Y:.*]] = seg.conv2d %[[X]], %[[NW]], %[[NB]] stride = [2, 2] padding = [0, 0] dilation = [1, 1] groups = 1
// CHECK-NOT: seg.batch_norm
// CHECK: return %[[Y]]
// expected-remark @+1 {{fuse-conv-bn-relu: 0 batch_norm folded, 0 activations fused, 0 residual adds fused, 1 batch_norm folded forward}}
func.func @bn_conv3x3_no_padding(%x: tensor<1x4x9x9xf32>, %w: tensor<5x4x3x3xf32>, %v: tensor<4xf32>) -> tensor<1x5x4x4xf32> {
  %n = seg.batch_norm %x, %v, %v, %v, %v epsilon = 1.0e-05 : tensor<1x4x9x9xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<1x4x9x9xf32>
  %y = seg.conv2d %n, %w stride = [2, 2] padding = [0, 0] dilation = [1, 1] groups = 1 : tensor<1x4x9x9xf32>, tensor<5x4x3x3xf32> -> tensor<1x5x4x4xf32>
  return %y : tensor<1x5x4x4xf32>
}

// -----

// BN -> channels-last permute -> linear: the linear contracts the channels.
// CHECK-LABEL: func.func @bn_channels_last_linear
// CHECK: seg.fold_batch_norm
// CHECK-NOT: seg.batch_norm
// CHECK: seg.linear
// expected-remark @+1 {{fuse-conv-bn-relu: 0 batch_norm folded, 0 activations fused, 0 residual adds fused, 1 batch_norm folded forward}}
func.func @bn_channels_last_linear(%x: tensor<1x4x2x2xf32>, %w: tensor<3x4xf32>, %v: tensor<4xf32>) -> tensor<1x2x2x3xf32> {
  %n = seg.batch_norm %x, %v, %v, %v, %v epsilon = 1.0e-05 : tensor<1x4x2x2xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<1x4x2x2xf32>
  %t = seg.permute %n dims = [0, 2, 3, 1] : tensor<1x4x2x2xf32> -> tensor<1x2x2x4xf32>
  %y = seg.linear %t, %w : tensor<1x2x2x4xf32>, tensor<3x4xf32> -> tensor<1x2x2x3xf32>
  return %y : tensor<1x2x2x3xf32>
}

// -----

// BN -> ReLU -> conv: the ReLU between them does not commute with the BN's
// affine map, so nothing folds forward.
// CHECK-LABEL: func.func @negative_bn_relu_conv
// CHECK: seg.batch_norm
// CHECK-NOT: seg.fold_batch_norm
// expected-remark @+1 {{fuse-conv-bn-relu: 0 batch_norm folded, 0 activations fused, 0 residual adds fused, 0 batch_norm folded forward}}
func.func @negative_bn_relu_conv(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x1x1xf32>, %v: tensor<4xf32>) -> tensor<1x4x8x8xf32> {
  %n = seg.batch_norm %x, %v, %v, %v, %v epsilon = 1.0e-05 : tensor<1x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<1x4x8x8xf32>
  %r = seg.relu %n : tensor<1x4x8x8xf32>
  %y = seg.conv2d %r, %w stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 : tensor<1x4x8x8xf32>, tensor<4x4x1x1xf32> -> tensor<1x4x8x8xf32>
  return %y : tensor<1x4x8x8xf32>
}

// -----

// BN -> zero-padded 3×3 conv: the border taps read 0, not the BN's shift t,
// so b + W · t would be wrong there.
// CHECK-LABEL: func.func @negative_bn_padded_conv
// CHECK: seg.batch_norm
// CHECK-NOT: seg.fold_batch_norm
// expected-remark @+1 {{fuse-conv-bn-relu: 0 batch_norm folded, 0 activations fused, 0 residual adds fused, 0 batch_norm folded forward}}
func.func @negative_bn_padded_conv(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x3x3xf32>, %v: tensor<4xf32>) -> tensor<1x4x8x8xf32> {
  %n = seg.batch_norm %x, %v, %v, %v, %v epsilon = 1.0e-05 : tensor<1x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<1x4x8x8xf32>
  %y = seg.conv2d %n, %w stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 1 : tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32> -> tensor<1x4x8x8xf32>
  return %y : tensor<1x4x8x8xf32>
}

// -----

// A grouped (here depthwise) convolution and a zero-filled shift in front of
// a fused_conv2d are not folded.
// CHECK-LABEL: func.func @negative_bn_grouped_or_zero_shift
// CHECK-COUNT-2: seg.batch_norm
// CHECK-NOT: seg.fold_batch_norm
// expected-remark @+1 {{fuse-conv-bn-relu: 0 batch_norm folded, 0 activations fused, 0 residual adds fused, 0 batch_norm folded forward}}
func.func @negative_bn_grouped_or_zero_shift(%x: tensor<1x2x8x8xf32>, %w: tensor<2x1x1x1xf32>, %w2: tensor<2x2x1x1xf32>, %v: tensor<2xf32>) -> (tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>) {
  %n = seg.batch_norm %x, %v, %v, %v, %v epsilon = 1.0e-05 : tensor<1x2x8x8xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32> -> tensor<1x2x8x8xf32>
  %y = seg.conv2d %n, %w stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 2 : tensor<1x2x8x8xf32>, tensor<2x1x1x1xf32> -> tensor<1x2x8x8xf32>
  %m = seg.batch_norm %x, %v, %v, %v, %v epsilon = 1.0e-05 : tensor<1x2x8x8xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32> -> tensor<1x2x8x8xf32>
  %z = seg.fused_conv2d %m, %w2 offsets_h = [0, 1] offsets_w = [] mode = zero stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 activation = none : (tensor<1x2x8x8xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x8x8xf32>
  return %y, %z : tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>
}

// -----

// The channels must stay whole and be what the consumer contracts: a concat
// along another axis, a reshape that merges the channels with a spatial dim,
// a linear over the width, and a BN whose result has another use all stay.
// CHECK-LABEL: func.func @negative_bn_channels_not_contracted
// CHECK-COUNT-4: seg.batch_norm
// CHECK-NOT: seg.fold_batch_norm
// expected-remark @+1 {{fuse-conv-bn-relu: 0 batch_norm folded, 0 activations fused, 0 residual adds fused, 0 batch_norm folded forward}}
func.func @negative_bn_channels_not_contracted(%x: tensor<1x4x2x2xf32>, %v: tensor<4xf32>, %w8: tensor<3x8xf32>, %w2: tensor<3x2xf32>, %o: tensor<1x4x2x2xf32>) -> (tensor<1x4x2x3xf32>, tensor<1x2x3xf32>, tensor<1x4x2x3xf32>, tensor<1x4x2x2xf32>, tensor<1x4x2x3xf32>) {
  %n1 = seg.batch_norm %x, %v, %v, %v, %v epsilon = 1.0e-05 : tensor<1x4x2x2xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<1x4x2x2xf32>
  %c1 = seg.concat %n1, %o dim = 3 : tensor<1x4x2x2xf32>, tensor<1x4x2x2xf32> -> tensor<1x4x2x4xf32>
  %r1 = seg.reshape %c1 : tensor<1x4x2x4xf32> -> tensor<1x4x8xf32>
  %y1 = seg.linear %r1, %w8 : tensor<1x4x8xf32>, tensor<3x8xf32> -> tensor<1x4x3xf32>
  %z1 = seg.reshape %y1 : tensor<1x4x3xf32> -> tensor<1x4x1x3xf32>
  %u1 = seg.concat %z1, %z1 dim = 2 : tensor<1x4x1x3xf32>, tensor<1x4x1x3xf32> -> tensor<1x4x2x3xf32>
  %n2 = seg.batch_norm %x, %v, %v, %v, %v epsilon = 1.0e-05 : tensor<1x4x2x2xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<1x4x2x2xf32>
  %r2 = seg.reshape %n2 : tensor<1x4x2x2xf32> -> tensor<1x2x8xf32>
  %y2 = seg.linear %r2, %w8 : tensor<1x2x8xf32>, tensor<3x8xf32> -> tensor<1x2x3xf32>
  %n3 = seg.batch_norm %x, %v, %v, %v, %v epsilon = 1.0e-05 : tensor<1x4x2x2xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<1x4x2x2xf32>
  %y3 = seg.linear %n3, %w2 : tensor<1x4x2x2xf32>, tensor<3x2xf32> -> tensor<1x4x2x3xf32>
  %n4 = seg.batch_norm %x, %v, %v, %v, %v epsilon = 1.0e-05 : tensor<1x4x2x2xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<1x4x2x2xf32>
  %p4 = seg.permute %n4 dims = [0, 2, 3, 1] : tensor<1x4x2x2xf32> -> tensor<1x2x2x4xf32>
  %w4 = seg.reshape %w8 : tensor<3x8xf32> -> tensor<6x4xf32>
  %y4 = seg.linear %p4, %w4 : tensor<1x2x2x4xf32>, tensor<6x4xf32> -> tensor<1x2x2x6xf32>
  %z4 = seg.reshape %y4 : tensor<1x2x2x6xf32> -> tensor<1x4x2x3xf32>
  return %u1, %y2, %y3, %n4, %z4 : tensor<1x4x2x3xf32>, tensor<1x2x3xf32>, tensor<1x4x2x3xf32>, tensor<1x4x2x2xf32>, tensor<1x4x2x3xf32>
}

// -----

// After --simplify-token-layout, Rolling-UNet's fc6 is a 1×1 convolution of
// a channel concat: the BN feeds input channels 2..3 of 4.
// CHECK-LABEL: func.func @bn_concat_conv1x1
// CHECK-SAME: (%[[X:.*]]: tensor<1x2x4x4xf32>, %[[O:.*]]: tensor<1x2x4x4xf32>, %[[W:.*]]: tensor<3x4x1x1xf32>, %[[B:.*]]: tensor<3xf32>, %[[V:.*]]: tensor<2xf32>)
// CHECK: %[[CAT:.*]] = seg.concat %[[O]], %[[X]] dim = 1
// CHECK: %[[PART:.*]] = seg.slice %[[W]] start = [0, 2, 0, 0] size = [3, 2, 1, 1] step = [1, 1, 1, 1]
// CHECK: %[[PT:.*]] = seg.permute %[[PART]] dims = [1, 0, 2, 3]
// CHECK: %[[FW:.*]], %[[SHIFT:.*]] = seg.fold_batch_norm %[[PT]], %[[V]], %[[V]], %[[V]], %[[V]]
// CHECK: %[[SCALED:.*]] = seg.permute %[[FW]] dims = [1, 0, 2, 3]
// CHECK: %[[KEEP:.*]] = seg.slice %[[W]] start = [0, 0, 0, 0] size = [3, 2, 1, 1]
// CHECK: %[[NW:.*]] = seg.concat %[[KEEP]], %[[SCALED]] dim = 1
// CHECK: %[[T:.*]] = seg.reshape %[[SHIFT]] : tensor<2xf32> -> tensor<1x2x1x1xf32>
// CHECK: %[[BM:.*]] = seg.conv2d %[[T]], %[[PART]], %[[B]] stride = [1, 1] padding = [0, 0]
// CHECK: %[[NB:.*]] = seg.reshape %[[BM]] : tensor<1x3x1x1xf32> -> tensor<3xf32>
// CHECK: %[[Y:.*]] = seg.conv2d %[[CAT]], %[[NW]], %[[NB]]
// CHECK: return %[[Y]]
// expected-remark @+1 {{fuse-conv-bn-relu: 0 batch_norm folded, 0 activations fused, 0 residual adds fused, 1 batch_norm folded forward}}
func.func @bn_concat_conv1x1(%x: tensor<1x2x4x4xf32>, %o: tensor<1x2x4x4xf32>, %w: tensor<3x4x1x1xf32>, %b: tensor<3xf32>, %v: tensor<2xf32>) -> tensor<1x3x4x4xf32> {
  %n = seg.batch_norm %x, %v, %v, %v, %v epsilon = 1.0e-05 : tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32> -> tensor<1x2x4x4xf32>
  %c = seg.concat %o, %n dim = 1 : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32> -> tensor<1x4x4x4xf32>
  %y = seg.conv2d %c, %w, %b stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 : tensor<1x4x4x4xf32>, tensor<3x4x1x1xf32>, tensor<3xf32> -> tensor<1x3x4x4xf32>
  return %y : tensor<1x3x4x4xf32>
}

// -----

// An empty map: nothing to fold.
// CHECK-LABEL: func.func @negative_bn_empty
// CHECK: seg.batch_norm
// expected-remark @+1 {{fuse-conv-bn-relu: 0 batch_norm folded, 0 activations fused, 0 residual adds fused, 0 batch_norm folded forward}}
func.func @negative_bn_empty(%x: tensor<0x2x4x4xf32>, %w: tensor<3x2x1x1xf32>, %v: tensor<2xf32>) -> tensor<0x3x4x4xf32> {
  %n = seg.batch_norm %x, %v, %v, %v, %v epsilon = 1.0e-05 : tensor<0x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32> -> tensor<0x2x4x4xf32>
  %y = seg.conv2d %n, %w stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 : tensor<0x2x4x4xf32>, tensor<3x2x1x1xf32> -> tensor<0x3x4x4xf32>
  return %y : tensor<0x3x4x4xf32>
}

// -----

// A convolution reading through a frame shift (TSM) keeps it when the
// BatchNorm after it and the ReLU fold in.
// CHECK-LABEL: func.func @frame_shifted_conv_bn_relu
// CHECK-SAME: (%[[X:.*]]: tensor<4x2x4x4xf32>, %[[W:.*]]: tensor<2x2x3x3xf32>, %[[V:.*]]: tensor<2xf32>)
// CHECK: %[[NW:.*]], %[[NB:.*]] = seg.fold_batch_norm %[[W]], %[[V]], %[[V]], %[[V]], %[[V]]
// CHECK: seg.fused_conv2d %[[X]], %[[NW]], %[[NB]] offsets_h = [] offsets_w = [] mode = zero frame_shift = <frames = 2, offsets = [1, -1]> stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 1 activation = relu
// CHECK-NOT: seg.batch_norm
// expected-remark @+1 {{fuse-conv-bn-relu: 1 batch_norm folded, 1 activations fused, 0 residual adds fused}}
func.func @frame_shifted_conv_bn_relu(%x: tensor<4x2x4x4xf32>, %w: tensor<2x2x3x3xf32>, %v: tensor<2xf32>) -> tensor<4x2x4x4xf32> {
  %c = seg.fused_conv2d %x, %w offsets_h = [] offsets_w = [] mode = zero frame_shift = <frames = 2, offsets = [1, -1]> stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 1 activation = none : (tensor<4x2x4x4xf32>, tensor<2x2x3x3xf32>) -> tensor<4x2x4x4xf32>
  %n = seg.batch_norm %c, %v, %v, %v, %v epsilon = 1.0e-05 : tensor<4x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32> -> tensor<4x2x4x4xf32>
  %r = seg.relu %n : tensor<4x2x4x4xf32>
  return %r : tensor<4x2x4x4xf32>
}

// -----

// A frame shift brings in zeros (the frames outside the clip), which a
// BatchNorm folded forward into the weights would need too: it stays.
// CHECK-LABEL: func.func @negative_bn_frame_shifted_conv
// CHECK: seg.batch_norm
// CHECK-NOT: seg.fold_batch_norm
// expected-remark @+1 {{fuse-conv-bn-relu: 0 batch_norm folded, 0 activations fused, 0 residual adds fused, 0 batch_norm folded forward}}
func.func @negative_bn_frame_shifted_conv(%x: tensor<4x2x4x4xf32>, %w: tensor<2x2x1x1xf32>, %v: tensor<2xf32>) -> tensor<4x2x4x4xf32> {
  %n = seg.batch_norm %x, %v, %v, %v, %v epsilon = 1.0e-05 : tensor<4x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32> -> tensor<4x2x4x4xf32>
  %y = seg.fused_conv2d %n, %w offsets_h = [] offsets_w = [] mode = cyclic frame_shift = <frames = 2, offsets = [1, 0]> stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 activation = none : (tensor<4x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<4x2x4x4xf32>
  return %y : tensor<4x2x4x4xf32>
}
