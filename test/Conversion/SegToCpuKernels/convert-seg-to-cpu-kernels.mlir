// RUN: gpuopt-opt %s -split-input-file --convert-seg-to-cpu-kernels --verify-each | FileCheck %s

// A fused convolution: shift offsets as constants, flags = bias | residual |
// zero mode = 7, activation gelu = 2; stride, padding, dilation, groups.
// CHECK-LABEL: func.func @fused
// CHECK-DAG: %[[OUT:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1x4x8x8xf32>
// CHECK-DAG: %[[OUTV:.*]] = memref.cast %[[OUT]] : memref<1x4x8x8xf32> to memref<?x?x?x?xf32, strided<[?, ?, ?, ?], offset: ?>>
// CHECK-DAG: bufferization.to_buffer %{{.*}} read_only : tensor<1x4x8x8xf32> to memref<1x4x8x8xf32, strided<[?, ?, ?, ?], offset: ?>>
// CHECK-DAG: arith.constant dense<[0, 1, 2, 3]> : tensor<4xi64>
// CHECK-DAG: arith.constant dense<> : tensor<0xi64>
// CHECK-DAG: %[[FLAGS:.*]] = arith.constant 7 : i64
// CHECK-DAG: %[[ACT:.*]] = arith.constant 2 : i64
// CHECK: call @gpuopt_cpu_conv2d(%[[OUTV]], {{.*}}, %[[FLAGS]], %[[ACT]])
// CHECK: %[[R:.*]] = bufferization.to_tensor %[[OUT]] restrict writable
// CHECK: return %[[R]]
// CHECK: func.func private @gpuopt_cpu_conv2d(memref<?x?x?x?xf32, strided<[?, ?, ?, ?], offset: ?>>, {{.*}}, i64) attributes {gpuopt.cpu_kernel, llvm.emit_c_interface}
func.func @fused(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x3x3xf32>, %b: tensor<4xf32>, %r: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %y = seg.fused_conv2d %x, %w, %b residual %r offsets_h = [0, 1, 2, 3] offsets_w = [] mode = zero stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 1 activation = gelu : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>, tensor<4xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  return %y : tensor<1x4x8x8xf32>
}

// -----

// A frame shift (TSM): its offsets as a third constant buffer after the
// (empty) dh and dw ones, and its frames after the groups.
// CHECK-LABEL: func.func @frame_shift
// CHECK-DAG: %[[OFFT:.*]] = arith.constant dense<[-1, 1, 0, 0]> : tensor<4xi64>
// CHECK-DAG: %[[TB:.*]] = bufferization.to_buffer %[[OFFT]] read_only
// CHECK-DAG: %[[T:.*]] = memref.cast %[[TB]] : memref<4xi64, strided<[?], offset: ?>> to memref<?xi64, strided<[?], offset: ?>>
// CHECK-DAG: %[[FRAMES:.*]] = arith.constant 2 : i64
// CHECK: call @gpuopt_cpu_conv2d(%{{[^, )]+}}, %{{[^, )]+}}, %{{[^, )]+}}, %{{[^, )]+}}, %{{[^, )]+}}, %{{[^, )]+}}, %{{[^, )]+}}, %[[T]], %{{[^, )]+}}, %{{[^, )]+}}, %{{[^, )]+}}, %{{[^, )]+}}, %{{[^, )]+}}, %{{[^, )]+}}, %{{[^, )]+}}, %[[FRAMES]], %{{[^, )]+}}, %{{[^, )]+}})
func.func @frame_shift(%x: tensor<4x4x8x8xf32>, %w: tensor<4x4x1x1xf32>) -> tensor<4x4x8x8xf32> {
  %y = seg.fused_conv2d %x, %w offsets_h = [] offsets_w = [] mode = cyclic frame_shift = <frames = 2, offsets = [-1, 1, 0, 0]> stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 activation = none : (tensor<4x4x8x8xf32>, tensor<4x4x1x1xf32>) -> tensor<4x4x8x8xf32>
  return %y : tensor<4x4x8x8xf32>
}

// -----

// A plain convolution without bias: an empty bias buffer, flags = 0, and
// the input doubles as the (unused) residual.
// CHECK-LABEL: func.func @plain
// CHECK: %[[IN:.*]] = memref.cast %{{.*}} : memref<1x3x16x15xf32, strided<[?, ?, ?, ?], offset: ?>> to memref<?x?x?x?xf32, strided<[?, ?, ?, ?], offset: ?>>
// CHECK: arith.constant dense<> : tensor<0xf32>
// CHECK: call @gpuopt_cpu_conv2d(%{{.*}}, %[[IN]], %{{.*}}, %{{.*}}, %[[IN]],
func.func @plain(%x: tensor<1x3x16x15xf32>, %w: tensor<5x3x3x3xf32>) -> tensor<1x5x8x8xf32> {
  %y = seg.conv2d %x, %w stride = [2, 2] padding = [1, 1] dilation = [1, 1] groups = 1 : tensor<1x3x16x15xf32>, tensor<5x3x3x3xf32> -> tensor<1x5x8x8xf32>
  return %y : tensor<1x5x8x8xf32>
}

// -----

// A token linear over [B, N, C]: collapsed to rows, expanded back.
// CHECK-LABEL: func.func @linear
// CHECK: tensor.collapse_shape %{{.*}} {{\[}}[0, 1], [2]] : tensor<2x5x8xf32> into tensor<10x8xf32>
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<10x6xf32>
// CHECK: call @gpuopt_cpu_linear
// CHECK: tensor.expand_shape %{{.*}} {{\[}}[0, 1], [2]] output_shape [2, 5, 6] : tensor<10x6xf32> into tensor<2x5x6xf32>
func.func @linear(%x: tensor<2x5x8xf32>, %w: tensor<6x8xf32>, %b: tensor<6xf32>) -> tensor<2x5x6xf32> {
  %y = seg.linear %x, %w, %b : tensor<2x5x8xf32>, tensor<6x8xf32>, tensor<6xf32> -> tensor<2x5x6xf32>
  return %y : tensor<2x5x6xf32>
}

// -----

// A transposed convolution whose kernel equals its stride (UNet's up path).
// CHECK-LABEL: func.func @up
// CHECK: call @gpuopt_cpu_conv_transpose2d
func.func @up(%x: tensor<1x8x5x6xf32>, %w: tensor<8x4x2x2xf32>, %b: tensor<4xf32>) -> tensor<1x4x10x12xf32> {
  %y = seg.conv_transpose2d %x, %w, %b stride = [2, 2] padding = [0, 0] output_padding = [0, 0] dilation = [1, 1] groups = 1 : tensor<1x8x5x6xf32>, tensor<8x4x2x2xf32>, tensor<4xf32> -> tensor<1x4x10x12xf32>
  return %y : tensor<1x4x10x12xf32>
}

// -----

// CHECK-LABEL: func.func @upsample
// CHECK: %[[ALIGN:.*]] = arith.constant 1 : i64
// CHECK: call @gpuopt_cpu_upsample_bilinear(%{{.*}}, %{{.*}}, %[[ALIGN]])
func.func @upsample(%x: tensor<1x4x5x6xf32>) -> tensor<1x4x10x12xf32> {
  %y = seg.upsample_bilinear %x size = [10, 12] align_corners = true : tensor<1x4x5x6xf32> -> tensor<1x4x10x12xf32>
  return %y : tensor<1x4x10x12xf32>
}

// -----

// A deformable convolution with the constant offsets of --roll-to-deform-conv:
// groups = 1, offset_groups = 4, no bias.
// CHECK-LABEL: func.func @deform
// CHECK: %[[OFFG:.*]] = arith.constant 4 : i64
// CHECK: %[[NOBIAS:.*]] = arith.constant 0 : i64
// CHECK: call @gpuopt_cpu_deform_conv2d({{.*}}, %[[OFFG]], %[[NOBIAS]])
func.func @deform(%x: tensor<1x4x8x8xf32>, %w: tensor<6x4x1x1xf32>) -> tensor<1x6x8x8xf32> {
  %off = seg.shift_offsets offsets_h = [0, 1, 2, 3] offsets_w = [] mode = cyclic input_size = [8, 8] kernel = [1, 1] stride = [1, 1] padding = [0, 0] dilation = [1, 1] : tensor<1x8x8x8xf32>
  %y = seg.deform_conv2d %x, %off, %w stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 offset_groups = 4 : (tensor<1x4x8x8xf32>, tensor<1x8x8x8xf32>, tensor<6x4x1x1xf32>) -> tensor<1x6x8x8xf32>
  return %y : tensor<1x6x8x8xf32>
}

// -----

// Not covered by the kernels: left for --convert-seg-to-linalg.
// CHECK-LABEL: func.func @negative_overlapping_transposed_conv
// CHECK-NOT: call
// CHECK: seg.conv_transpose2d
func.func @negative_overlapping_transposed_conv(%x: tensor<2x4x5x5xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<2x3x10x9xf32> {
  %y = seg.conv_transpose2d %x, %w stride = [2, 2] padding = [1, 1] output_padding = [1, 0] dilation = [1, 1] groups = 1 : tensor<2x4x5x5xf32>, tensor<4x3x3x3xf32> -> tensor<2x3x10x9xf32>
  return %y : tensor<2x3x10x9xf32>
}

// -----

// CHECK-LABEL: func.func @negative_f16
// CHECK-NOT: call
// CHECK: seg.conv2d
func.func @negative_f16(%x: tensor<1x3x8x8xf16>, %w: tensor<4x3x3x3xf16>) -> tensor<1x4x8x8xf16> {
  %y = seg.conv2d %x, %w stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 1 : tensor<1x3x8x8xf16>, tensor<4x3x3x3xf16> -> tensor<1x4x8x8xf16>
  return %y : tensor<1x4x8x8xf16>
}

// -----

// An empty map: left for --convert-seg-to-linalg.
// CHECK-LABEL: func.func @negative_empty
// CHECK-NOT: call
// CHECK: seg.conv2d
func.func @negative_empty(%x: tensor<1x3x0x8xf32>, %w: tensor<4x3x1x1xf32>) -> tensor<1x4x2x8xf32> {
  %y = seg.conv2d %x, %w stride = [1, 1] padding = [1, 0] dilation = [1, 1] groups = 1 : tensor<1x3x0x8xf32>, tensor<4x3x1x1xf32> -> tensor<1x4x2x8xf32>
  return %y : tensor<1x4x2x8xf32>
}
