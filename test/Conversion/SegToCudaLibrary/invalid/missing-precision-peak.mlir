// RUN: gpuopt-opt %s --convert-seg-to-cuda-library="select=auto devices=%S/../Inputs/devices.json device=no_tf32 precision=tf32" -verify-diagnostics -o /dev/null

// The error is the op's: the first op the cost model cannot time.
func.func @negative_conv(%x: tensor<1x4x8x8xf32>, %w: tensor<8x4x3x3xf32>) -> tensor<1x8x8x8xf32> {
  // expected-error @+1 {{'seg.conv2d' op convert-seg-to-cuda-library: device 'no_tf32' has no peak for 'tf32'}}
  %y = seg.conv2d %x, %w stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 1 : tensor<1x4x8x8xf32>, tensor<8x4x3x3xf32> -> tensor<1x8x8x8xf32>
  return %y : tensor<1x8x8x8xf32>
}
