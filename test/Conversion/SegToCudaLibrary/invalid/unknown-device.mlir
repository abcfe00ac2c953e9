// RUN: gpuopt-opt %s --convert-seg-to-cuda-library="select=auto devices=%S/../Inputs/devices.json device=none" -verify-diagnostics -o /dev/null

// expected-error-re @+1 {{convert-seg-to-cuda-library: device file '{{.*}}devices.json': unknown device 'none'; known devices: flat, no_tf32, routes, split, waves}}
func.func @negative_conv(%x: tensor<1x4x8x8xf32>, %w: tensor<8x4x3x3xf32>) -> tensor<1x8x8x8xf32> {
  %y = seg.conv2d %x, %w stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 1 : tensor<1x4x8x8xf32>, tensor<8x4x3x3xf32> -> tensor<1x8x8x8xf32>
  return %y : tensor<1x8x8x8xf32>
}
