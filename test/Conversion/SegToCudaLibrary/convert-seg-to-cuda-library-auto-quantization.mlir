// RUN: gpuopt-opt %s -split-input-file --convert-seg-to-cuda-library="select=auto devices=%S/Inputs/devices.json device=waves" | FileCheck %s --check-prefix=WAVES
// RUN: gpuopt-opt %s -split-input-file --convert-seg-to-cuda-library="select=auto devices=%S/Inputs/devices.json device=flat" | FileCheck %s --check-prefix=FLAT

// Both routes compute at the same rate with no fixed cost; only tile and
// wave quantization differ. A 3x3 convolution of 16 into 16 channels of
// 4x4 pixels (M = 16 channels, N = 16 pixels): the workgroup tiles' least
// padding is one 32 x 32 block, 1/16 of the 4 units' 32 x 32 slots; the
// library's 16 x 16 tile fills 1/4 of its 4 units: the library call is
// predicted 4x faster (device "waves"). Without units (device "flat")
// neither quantizes: a tie, which stays generated.
// WAVES-LABEL: func.func @quantized
// WAVES: call @gpuopt_cpu_conv2d
// FLAT-LABEL: func.func @quantized
// FLAT: seg.conv2d
// FLAT-NOT: call
func.func @quantized(%x: tensor<1x16x4x4xf32>, %w: tensor<16x16x3x3xf32>) -> tensor<1x16x4x4xf32> {
  %y = seg.conv2d %x, %w stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 1 : tensor<1x16x4x4xf32>, tensor<16x16x3x3xf32> -> tensor<1x16x4x4xf32>
  return %y : tensor<1x16x4x4xf32>
}

// -----

// 8 output channels: the workgroup tiles leave the product to register
// tiles, which the model does not quantize, and the library is granted
// the better of its own fill (1/8) and that one: a tie, so it stays
// generated.
// WAVES-LABEL: func.func @negative_register_tiled
// WAVES: seg.conv2d
// WAVES-NOT: call
func.func @negative_register_tiled(%x: tensor<1x16x4x4xf32>, %w: tensor<8x16x3x3xf32>) -> tensor<1x8x4x4xf32> {
  %y = seg.conv2d %x, %w stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 1 : tensor<1x16x4x4xf32>, tensor<8x16x3x3xf32> -> tensor<1x8x4x4xf32>
  return %y : tensor<1x8x4x4xf32>
}
