// RUN: gpuopt-opt %s -split-input-file -verify-diagnostics --convert-seg-to-cuda-library="select=auto explain=true devices=%S/Inputs/devices.json device=routes" | FileCheck %s
// RUN: gpuopt-opt %s -split-input-file --convert-seg-to-cuda-library="select=auto devices=%S/Inputs/devices.json device=routes precision=tf32" | FileCheck %s --check-prefix=TF32

// The device "routes" (Inputs/devices.json): a library call costs 10 us
// more than a generated kernel's launch and computes at 2x the generated
// kernels' FP32 rate (8x in TF32). A 3x3 convolution of 64 into 64 channels
// of 64x64 pixels with bias and ReLU: 2 x 151.0 M MACs + 2 x 262,144 =
// 302.5 MFLOP (2.2 MB: compute-bound), 302.5 + 1 + 10 us as a library call,
// 605.0 + 1 us generated: a library call.
// CHECK-LABEL: func.func @large_conv
// CHECK: call @gpuopt_cpu_conv2d
// CHECK-NOT: seg.fused_conv2d
// TF32-LABEL: func.func @large_conv
// TF32: call @gpuopt_cpu_conv2d
func.func @large_conv(%x: tensor<1x64x64x64xf32>, %w: tensor<64x64x3x3xf32>, %b: tensor<64xf32>) -> tensor<1x64x64x64xf32> {
  // expected-remark @+1 {{library call: predicted 313.5 us, 606.0 us as a generated kernel (routes, fp32)}}
  %y = seg.fused_conv2d %x, %w, %b offsets_h = [] offsets_w = [] mode = cyclic stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 1 activation = relu : (tensor<1x64x64x64xf32>, tensor<64x64x3x3xf32>, tensor<64xf32>) -> tensor<1x64x64x64xf32>
  return %y : tensor<1x64x64x64xf32>
}

// -----

// 37.9 kFLOP: the call's fixed cost dominates (1.08 us generated, 11.04 us
// as a library call); the convolution stays for the generated kernels, in
// either precision.
// CHECK-LABEL: func.func @negative_small_conv
// CHECK: seg.fused_conv2d
// CHECK-NOT: call
// TF32-LABEL: func.func @negative_small_conv
// TF32: seg.fused_conv2d
// TF32-NOT: call
func.func @negative_small_conv(%x: tensor<1x4x8x8xf32>, %w: tensor<8x4x3x3xf32>, %b: tensor<8xf32>) -> tensor<1x8x8x8xf32> {
  // expected-remark @+1 {{generated kernel: predicted 1.1 us, 11.0 us as a library call (routes, fp32)}}
  %y = seg.fused_conv2d %x, %w, %b offsets_h = [] offsets_w = [] mode = cyclic stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 1 activation = relu : (tensor<1x4x8x8xf32>, tensor<8x4x3x3xf32>, tensor<8xf32>) -> tensor<1x8x8x8xf32>
  return %y : tensor<1x8x8x8xf32>
}

// -----

// 7.7 MFLOP: generated in FP32 (15.3 + 1 us against 7.7 + 11 us), a
// library call in TF32 (1.9 + 11 us against 15.3 + 1 us: the library's
// TF32 rate is 4 TFLOP/s, the generated kernels' 0.5).
// CHECK-LABEL: func.func @precision_decides
// CHECK: seg.fused_conv2d
// CHECK-NOT: call
// TF32-LABEL: func.func @precision_decides
// TF32: call @gpuopt_cpu_conv2d
func.func @precision_decides(%x: tensor<1x16x32x32xf32>, %w: tensor<26x16x3x3xf32>, %b: tensor<26xf32>) -> tensor<1x26x32x32xf32> {
  // expected-remark @+1 {{generated kernel: predicted}}
  %y = seg.fused_conv2d %x, %w, %b offsets_h = [] offsets_w = [] mode = cyclic stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 1 activation = none : (tensor<1x16x32x32xf32>, tensor<26x16x3x3xf32>, tensor<26xf32>) -> tensor<1x26x32x32xf32>
  return %y : tensor<1x26x32x32xf32>
}

// -----

// An ineligible op (a shifted convolution) is not costed: no remark, and it
// stays generated however large.
// CHECK-LABEL: func.func @negative_ineligible
// CHECK: seg.fused_conv2d
// CHECK-NOT: call
func.func @negative_ineligible(%x: tensor<1x64x64x64xf32>, %w: tensor<64x64x3x3xf32>) -> tensor<1x64x64x64xf32> {
  %y = seg.fused_conv2d %x, %w offsets_h = [0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7] offsets_w = [] mode = cyclic stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 1 activation = none : (tensor<1x64x64x64xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x64x64xf32>
  return %y : tensor<1x64x64x64xf32>
}

// -----

// A function declaration is not costed (and does not stop the pass); an
// op computed from parameters only runs at load time: a library call, as
// with select=all.
// CHECK-LABEL: func.func @load_time
// CHECK: call @gpuopt_cpu_linear
func.func private @declared(tensor<4xf32>) -> tensor<4xf32>
func.func @load_time(%x: tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  %a = seg.param "a" : tensor<1x4x8xf32>
  %w = seg.param "w" : tensor<8x8xf32>
  // expected-remark @+1 {{library call: computed at load time}}
  %l = seg.linear %a, %w : tensor<1x4x8xf32>, tensor<8x8xf32> -> tensor<1x4x8xf32>
  %y = seg.add %x, %l : tensor<1x4x8xf32>, tensor<1x4x8xf32> -> tensor<1x4x8xf32>
  return %y : tensor<1x4x8xf32>
}
