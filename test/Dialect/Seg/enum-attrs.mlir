// RUN: gpuopt-opt %s | FileCheck %s
// RUN: gpuopt-opt %s | gpuopt-opt | FileCheck %s
// RUN: gpuopt-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC
// RUN: gpuopt-opt %s --mlir-print-op-generic | gpuopt-opt | FileCheck %s

// Every case of the seg enum attributes (SegEnums.td): a bare keyword in the
// custom form, #seg<kind case> in the generic form; the old string spelling
// ("cyclic") still parses, as the keyword.

// CHECK-LABEL: func.func @shift_modes
// GENERIC-LABEL: sym_name = "shift_modes"
func.func @shift_modes(%x: tensor<1x2x4x4xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) {
  // CHECK: seg.channel_shift %{{.*}} offsets_h = [0, 1] offsets_w = [] mode = cyclic : tensor<1x2x4x4xf32>
  // GENERIC: "seg.channel_shift"(%{{.*}}) <{mode = #seg<shift_mode cyclic>,
  %a = seg.channel_shift %x offsets_h = [0, 1] offsets_w = [] mode = cyclic : tensor<1x2x4x4xf32>
  // CHECK: seg.channel_shift %{{.*}} offsets_h = [0, 1] offsets_w = [] mode = zero : tensor<1x2x4x4xf32>
  // GENERIC: "seg.channel_shift"(%{{.*}}) <{mode = #seg<shift_mode zero>,
  %b = seg.channel_shift %x offsets_h = [0, 1] offsets_w = [] mode = zero : tensor<1x2x4x4xf32>
  // CHECK: seg.channel_shift %{{.*}} offsets_h = [] offsets_w = [1, 0] mode = zero : tensor<1x2x4x4xf32>
  // GENERIC: "seg.channel_shift"(%{{.*}}) <{mode = #seg<shift_mode zero>,
  %c = seg.channel_shift %x offsets_h = [] offsets_w = [1, 0] mode = "zero" : tensor<1x2x4x4xf32>
  return %a, %b, %c : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
}

// CHECK-LABEL: func.func @activations
// GENERIC-LABEL: sym_name = "activations"
func.func @activations(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32> {
  // CHECK: seg.fused_conv2d {{.*}} groups = 1 activation = none :
  // GENERIC: "seg.fused_conv2d"(%{{.*}}) <{activation = #seg<activation none>,
  %a = seg.fused_conv2d %x, %w offsets_h = [] offsets_w = [] mode = cyclic stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 activation = none : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  // CHECK: seg.fused_conv2d {{.*}} groups = 1 activation = relu :
  // GENERIC: "seg.fused_conv2d"(%{{.*}}) <{activation = #seg<activation relu>,
  %b = seg.fused_conv2d %a, %w offsets_h = [] offsets_w = [] mode = cyclic stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 activation = relu : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  // CHECK: seg.fused_conv2d {{.*}} groups = 1 activation = gelu :
  // GENERIC: "seg.fused_conv2d"(%{{.*}}) <{activation = #seg<activation gelu>,
  %c = seg.fused_conv2d %b, %w offsets_h = [] offsets_w = [] mode = cyclic stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 activation = gelu : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  // CHECK: seg.fused_conv2d {{.*}} groups = 1 activation = gelu_tanh :
  // GENERIC: "seg.fused_conv2d"(%{{.*}}) <{activation = #seg<activation gelu_tanh>,
  %d = seg.fused_conv2d %c, %w offsets_h = [] offsets_w = [] mode = cyclic stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 activation = gelu_tanh : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  return %d : tensor<1x2x4x4xf32>
}

// CHECK-LABEL: func.func @gelu_approximations
// GENERIC-LABEL: sym_name = "gelu_approximations"
func.func @gelu_approximations(%x: tensor<4xf32>) -> tensor<4xf32> {
  // The default (none) is elided in the custom form.
  // CHECK: %[[A:.*]] = seg.gelu %{{.*}} : tensor<4xf32>
  // GENERIC: "seg.gelu"(%{{.*}}) <{approximate = #seg<gelu_approximation none>}>
  %a = seg.gelu %x : tensor<4xf32>
  // CHECK: %[[B:.*]] = seg.gelu %[[A]] : tensor<4xf32>
  // GENERIC: "seg.gelu"(%{{.*}}) <{approximate = #seg<gelu_approximation none>}>
  %b = seg.gelu %a approximate = none : tensor<4xf32>
  // CHECK: seg.gelu %[[B]] approximate = tanh : tensor<4xf32>
  // GENERIC: "seg.gelu"(%{{.*}}) <{approximate = #seg<gelu_approximation tanh>}>
  %c = seg.gelu %b approximate = tanh : tensor<4xf32>
  return %c : tensor<4xf32>
}
