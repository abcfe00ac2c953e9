// RUN: gpuopt-opt %s -split-input-file --convert-seg-to-cuda-library --verify-each | FileCheck %s

// A convolution + bias + ReLU: a call of conv2d with flags = bias (1) and
// activation relu (1); the weight is passed dense (identity layout).
// CHECK-LABEL: func.func @conv_relu
// CHECK-DAG: %[[OUT:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1x8x16x16xf32>
// CHECK-DAG: bufferization.to_buffer %{{.*}} read_only : tensor<8x4x3x3xf32> to memref<8x4x3x3xf32>
// CHECK: %[[FRAMES:.*]] = arith.constant 0 : i64
// CHECK-NEXT: %[[FLAGS:.*]] = arith.constant 1 : i64
// CHECK-NEXT: %[[ACT:.*]] = arith.constant 1 : i64
// CHECK-NEXT: call @gpuopt_cpu_conv2d({{.*}}, %[[FRAMES]], %[[FLAGS]], %[[ACT]])
// CHECK: %[[R:.*]] = bufferization.to_tensor %[[OUT]] restrict writable
// CHECK: return %[[R]]
// CHECK: func.func private @gpuopt_cpu_conv2d({{.*}}) attributes {gpuopt.cpu_kernel, llvm.emit_c_interface}
func.func @conv_relu(%x: tensor<1x4x16x16xf32>, %w: tensor<8x4x3x3xf32>, %b: tensor<8xf32>) -> tensor<1x8x16x16xf32> {
  %y = seg.fused_conv2d %x, %w, %b offsets_h = [] offsets_w = [] mode = cyclic stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 1 activation = relu : (tensor<1x4x16x16xf32>, tensor<8x4x3x3xf32>, tensor<8xf32>) -> tensor<1x8x16x16xf32>
  return %y : tensor<1x8x16x16xf32>
}

// -----

// A residual without activation (flags = bias | residual = 3), and
// all-zero offsets, which are no shift: empty shift operands.
// CHECK-LABEL: func.func @residual_zero_shift
// CHECK-NOT: dense<0>
// CHECK: %[[FLAGS:.*]] = arith.constant 3 : i64
// CHECK-NEXT: %[[ACT:.*]] = arith.constant 0 : i64
// CHECK-NEXT: call @gpuopt_cpu_conv2d({{.*}}, %[[FLAGS]], %[[ACT]])
func.func @residual_zero_shift(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x3x3xf32>, %b: tensor<4xf32>, %r: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %y = seg.fused_conv2d %x, %w, %b residual %r offsets_h = [0, 0, 0, 0] offsets_w = [] mode = cyclic stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 1 activation = none : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>, tensor<4xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  return %y : tensor<1x4x8x8xf32>
}

// -----

// seg.conv2d, seg.conv_transpose2d (kernel == stride) and seg.linear.
// CHECK-LABEL: func.func @others
// CHECK: call @gpuopt_cpu_conv2d
// CHECK: call @gpuopt_cpu_conv_transpose2d
// CHECK: call @gpuopt_cpu_linear
// CHECK-NOT: seg.
func.func @others(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %wt: tensor<4x2x2x2xf32>, %bt: tensor<2xf32>, %wl: tensor<6x16xf32>) -> tensor<1x2x6xf32> {
  %y = seg.conv2d %x, %w stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 1 : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<1x4x8x8xf32>
  %t = seg.conv_transpose2d %y, %wt, %bt stride = [2, 2] padding = [0, 0] output_padding = [0, 0] dilation = [1, 1] groups = 1 : tensor<1x4x8x8xf32>, tensor<4x2x2x2xf32>, tensor<2xf32> -> tensor<1x2x16x16xf32>
  %c = tensor.collapse_shape %t [[0], [1], [2, 3]] : tensor<1x2x16x16xf32> into tensor<1x2x256xf32>
  %s = tensor.extract_slice %c[0, 0, 0] [1, 2, 16] [1, 1, 1] : tensor<1x2x256xf32> to tensor<1x2x16xf32>
  %l = seg.linear %s, %wl : tensor<1x2x16xf32>, tensor<6x16xf32> -> tensor<1x2x6xf32>
  return %l : tensor<1x2x6xf32>
}

// -----

// A shifted convolution stays generated: the libraries have no per-channel
// shift.
// CHECK-LABEL: func.func @negative_shifted
// CHECK: seg.fused_conv2d
// CHECK-NOT: call
func.func @negative_shifted(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x3x3xf32>) -> tensor<1x4x8x8xf32> {
  %y = seg.fused_conv2d %x, %w offsets_h = [0, 1, 2, 3] offsets_w = [] mode = cyclic stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 1 activation = none : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x8x8xf32>
  return %y : tensor<1x4x8x8xf32>
}

// -----

// GELU stays generated (no GELU epilogue in the library subset).
// CHECK-LABEL: func.func @negative_gelu
// CHECK: seg.fused_conv2d
// CHECK-NOT: call
func.func @negative_gelu(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x3x3xf32>) -> tensor<1x4x8x8xf32> {
  %y = seg.fused_conv2d %x, %w offsets_h = [] offsets_w = [] mode = cyclic stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 1 activation = gelu : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x8x8xf32>
  return %y : tensor<1x4x8x8xf32>
}

// -----

// ReLU with a residual stays generated (cuDNN adds the residual before the
// activation, seg after it).
// CHECK-LABEL: func.func @negative_relu_residual
// CHECK: seg.fused_conv2d
// CHECK-NOT: call
func.func @negative_relu_residual(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x3x3xf32>, %r: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %y = seg.fused_conv2d %x, %w residual %r offsets_h = [] offsets_w = [] mode = cyclic stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 1 activation = relu : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  return %y : tensor<1x4x8x8xf32>
}

// -----

// A transposed convolution outside the kernel's domain (padding) and an
// upsampling (not a library op) stay generated.
// CHECK-LABEL: func.func @negative_transpose_padded
// CHECK: seg.conv_transpose2d
// CHECK: seg.upsample_bilinear
// CHECK-NOT: call
func.func @negative_transpose_padded(%x: tensor<1x4x8x8xf32>, %w: tensor<4x2x3x3xf32>) -> tensor<1x2x30x30xf32> {
  %t = seg.conv_transpose2d %x, %w stride = [2, 2] padding = [1, 1] output_padding = [0, 0] dilation = [1, 1] groups = 1 : tensor<1x4x8x8xf32>, tensor<4x2x3x3xf32> -> tensor<1x2x15x15xf32>
  %u = seg.upsample_bilinear %t size = [30, 30] align_corners = false : tensor<1x2x15x15xf32> -> tensor<1x2x30x30xf32>
  return %u : tensor<1x2x30x30xf32>
}
