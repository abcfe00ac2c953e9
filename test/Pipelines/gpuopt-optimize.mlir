// RUN: gpuopt-opt %s --gpuopt-optimize | FileCheck %s
// RUN: gpuopt-opt %s --gpuopt-optimize=fuse-conv-bn-relu=false | FileCheck %s --check-prefix=NOFUSE
// RUN: gpuopt-opt %s --gpuopt-optimize=deform-conv=true | FileCheck %s --check-prefix=DEFORM
// RUN: gpuopt-opt %s --gpuopt-optimize --verify-each --mlir-print-ir-after-all -o /dev/null 2>&1 | FileCheck %s --check-prefix=ORDER
// RUN: gpuopt-opt %s --gpuopt-optimize=deform-conv=true --verify-each -o /dev/null
// RUN: gpuopt-opt %s --gpuopt-optimize=fuse-conv-bn-relu=false --verify-each -o /dev/null
// RUN: gpuopt-opt %s --gpuopt-optimize=report=true -verify-diagnostics -o /dev/null

// A Rolling-UNet OR-MLP on a BN-ReLU'd map: roll group -> tokens -> fc1 ->
// GELU -> NCHW. Everything folds into two fused convolutions.
// CHECK-LABEL: func.func @or_mlp
// CHECK-SAME: (%[[X:.*]]: tensor<1x2x4x4xf32>
// CHECK: seg.fold_batch_norm
// CHECK: %[[A:.*]] = seg.fused_conv2d %[[X]], {{.*}} offsets_h = [] offsets_w = [] {{.*}} activation = relu
// CHECK: %[[B:.*]] = seg.fused_conv2d %[[A]], {{.*}} offsets_h = [0, 1] offsets_w = [] mode = cyclic {{.*}} activation = gelu
// CHECK-NOT: seg.roll
// CHECK-NOT: seg.permute
// CHECK: return %[[B]]
// DEFORM-LABEL: func.func @or_mlp
// DEFORM: seg.shift_offsets offsets_h = [0, 1]
// DEFORM: seg.deform_conv2d
// DEFORM-NOT: seg.roll
// NOFUSE-LABEL: func.func @or_mlp
// NOFUSE: seg.batch_norm
// NOFUSE: seg.fused_conv2d {{.*}} offsets_h = [0, 1]
// ORDER: IR Dump After FuseRollPass
// ORDER: IR Dump After SimplifyTokenLayoutPass
// ORDER: IR Dump After FuseRollPass
// ORDER: IR Dump After FuseConvBnReluPass
// ORDER: IR Dump After Canonicalizer
// ORDER: IR Dump After CSE
// expected-remark @+3 {{fuse-roll: 2 seg.roll removed, 1 shifts fused, 0 seg.channel_shift left, 0 seg.shift left, 768 bytes no longer moved}}
// expected-remark @+2 {{fuse-roll: 0 seg.roll removed, 0 shifts fused, 0 seg.channel_shift left, 0 seg.shift left, 0 bytes no longer moved}}
// expected-remark @+1 {{fuse-conv-bn-relu: 1 batch_norm folded, 2 activations fused, 0 residual adds fused}}
func.func @or_mlp(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x3x3xf32>, %v: tensor<2xf32>, %fc: tensor<2x2xf32>) -> tensor<1x2x4x4xf32> {
  %c = seg.conv2d %x, %w stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 1 : tensor<1x2x4x4xf32>, tensor<2x2x3x3xf32> -> tensor<1x2x4x4xf32>
  %n = seg.batch_norm %c, %v, %v, %v, %v epsilon = 1.0e-05 : tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32> -> tensor<1x2x4x4xf32>
  %r = seg.relu %n : tensor<1x2x4x4xf32>
  %s0 = seg.slice %r start = [0, 0, 0, 0] size = [1, 1, 4, 4] step = [1, 1, 1, 1] : tensor<1x2x4x4xf32> -> tensor<1x1x4x4xf32>
  %s1 = seg.slice %r start = [0, 1, 0, 0] size = [1, 1, 4, 4] step = [1, 1, 1, 1] : tensor<1x2x4x4xf32> -> tensor<1x1x4x4xf32>
  %r0 = seg.roll %s0 shifts = [0] dims = [2] : tensor<1x1x4x4xf32>
  %r1 = seg.roll %s1 shifts = [1] dims = [2] : tensor<1x1x4x4xf32>
  %cat = seg.concat %r0, %r1 dim = 1 : tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32> -> tensor<1x2x4x4xf32>
  %f = seg.reshape %cat : tensor<1x2x4x4xf32> -> tensor<1x2x16xf32>
  %t = seg.permute %f dims = [0, 2, 1] : tensor<1x2x16xf32> -> tensor<1x16x2xf32>
  %y = seg.linear %t, %fc, %v : tensor<1x16x2xf32>, tensor<2x2xf32>, tensor<2xf32> -> tensor<1x16x2xf32>
  %g = seg.gelu %y : tensor<1x16x2xf32>
  %u = seg.permute %g dims = [0, 2, 1] : tensor<1x16x2xf32> -> tensor<1x2x16xf32>
  %z = seg.reshape %u : tensor<1x2x16xf32> -> tensor<1x2x4x4xf32>
  return %z : tensor<1x2x4x4xf32>
}
