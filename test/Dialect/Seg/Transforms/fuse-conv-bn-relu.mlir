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
