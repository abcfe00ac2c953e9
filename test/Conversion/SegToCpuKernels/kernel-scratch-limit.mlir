// RUN: gpuopt-opt %s -split-input-file --convert-seg-to-cpu-kernels | FileCheck %s

// The conv2d kernel sizes its scratch (im2col columns for strided
// convolutions, padded input planes) in int64 from the shapes: where that
// scratch would exceed the per-tensor limit (here 2^33 taps x 49 columns of
// f32: about 1.4 TiB), the op stays for the linalg lowering.
// CHECK-LABEL: func.func @negative_im2col_over_limit
// CHECK: seg.conv2d
// CHECK-NOT: call @gpuopt_cpu_conv2d
func.func @negative_im2col_over_limit(%x: tensor<1x2048x1x1xf32>, %w: tensor<1x2048x2048x2048xf32>) -> tensor<1x1x1x1xf32> {
  %y = seg.conv2d %x, %w stride = [2, 2] padding = [1024, 1024] dilation = [1, 1] groups = 1
       : tensor<1x2048x1x1xf32>, tensor<1x2048x2048x2048xf32> -> tensor<1x1x1x1xf32>
  return %y : tensor<1x1x1x1xf32>
}

// -----

// The same convolution with stride 1 needs no im2col: the kernel takes it.
// CHECK-LABEL: func.func @unstrided_fits
// CHECK-NOT: seg.conv2d
// CHECK: call @gpuopt_cpu_conv2d
func.func @unstrided_fits(%x: tensor<1x2048x1x1xf32>, %w: tensor<1x2048x2048x2048xf32>) -> tensor<1x1x2x2xf32> {
  %y = seg.conv2d %x, %w stride = [1, 1] padding = [1024, 1024] dilation = [1, 1] groups = 1
       : tensor<1x2048x1x1xf32>, tensor<1x2048x2048x2048xf32> -> tensor<1x1x2x2xf32>
  return %y : tensor<1x1x2x2xf32>
}
