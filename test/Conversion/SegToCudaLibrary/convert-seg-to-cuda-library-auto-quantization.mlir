// RUN: gpuopt-opt %s -split-input-file --convert-seg-to-cuda-library="select=auto devices=%S/Inputs/devices.json device=waves" | FileCheck %s --check-prefix=WAVES
// RUN: gpuopt-opt %s -split-input-file --convert-seg-to-cuda-library="select=auto devices=%S/Inputs/devices.json device=flat" | FileCheck %s --check-prefix=FLAT
// RUN: gpuopt-opt %s -split-input-file --convert-seg-to-cuda-library="select=auto devices=%S/Inputs/devices.json device=waves workgroup-tile-min-blocks=1" | FileCheck %s --check-prefix=MB1
// RUN: gpuopt-opt %s -split-input-file --convert-seg-to-cuda-library="select=auto devices=%S/Inputs/devices.json device=waves workgroup-tile-min-blocks=1 workgroup-tile-max-thread-outputs=16" | FileCheck %s --check-prefix=NARROW
// RUN: gpuopt-opt %s -split-input-file --convert-seg-to-cuda-library="select=auto devices=%S/Inputs/devices.json device=split workgroup-tile-min-blocks=4 explain=true" 2>&1 | FileCheck %s --check-prefix=SPLIT
// RUN: gpuopt-opt %s -split-input-file --convert-seg-to-cuda-library="select=auto devices=%S/Inputs/devices.json device=split workgroup-tile-min-blocks=4 workgroup-tile-split-k=1 explain=true" 2>&1 | FileCheck %s --check-prefix=NOSPLIT

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

// -----

// A 1x1 convolution of 64 into 64 channels of 8x8 pixels: with
// workgroup-tile-min-blocks 4 or more (the default 132 asks for more blocks
// than any shape gives: the most, 4) the workgroup tiles are 32 x 32, one
// wave of 4 blocks that fills the 4 units, as do the library's 16 x 16
// tiles: a tie, generated. With 1, the workgroup tiles take one 64 x 64
// block, a quarter of the units: the library call.
// WAVES-LABEL: func.func @min_blocks
// WAVES: seg.conv2d
// WAVES-NOT: call
// MB1-LABEL: func.func @min_blocks
// MB1: call @gpuopt_cpu_conv2d
func.func @min_blocks(%x: tensor<1x64x8x8xf32>, %w: tensor<64x64x1x1xf32>) -> tensor<1x64x8x8xf32> {
  %y = seg.conv2d %x, %w stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 : tensor<1x64x8x8xf32>, tensor<64x64x1x1xf32> -> tensor<1x64x8x8xf32>
  return %y : tensor<1x64x8x8xf32>
}

// -----

// K = 4 reduction steps: the workgroup tiles leave it to register tiles,
// not quantized; were it quantized like @quantized (one 32 x 32 block for
// 16 x 16 outputs), the library call would win.
// WAVES-LABEL: func.func @negative_short_reduction
// WAVES: seg.conv2d
// WAVES-NOT: call
func.func @negative_short_reduction(%x: tensor<1x4x4x4xf32>, %w: tensor<16x4x1x1xf32>) -> tensor<1x16x4x4xf32> {
  %y = seg.conv2d %x, %w stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 : tensor<1x4x4x4xf32>, tensor<16x4x1x1xf32> -> tensor<1x16x4x4xf32>
  return %y : tensor<1x16x4x4xf32>
}

// -----

// M = 128 channels, N = 128 pixels (8 x 16), workgroup-tile-min-blocks 1:
// with workgroup-tile-max-thread-outputs 64 (this pass's default, the
// pipeline's) the generated kernels are predicted to take one 128 x 128
// block of 8 x 8 outputs per thread, a quarter of the 4 units: the library
// call. With 16 they take four 64 x 64 blocks that fill the units: a tie,
// generated.
// MB1-LABEL: func.func @wide_thread_tiles
// MB1: call @gpuopt_cpu_conv2d
// NARROW-LABEL: func.func @wide_thread_tiles
// NARROW: seg.conv2d
// NARROW-NOT: call
func.func @wide_thread_tiles(%x: tensor<1x64x8x16xf32>, %w: tensor<128x64x1x1xf32>) -> tensor<1x128x8x16xf32> {
  %y = seg.conv2d %x, %w stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 : tensor<1x64x8x16xf32>, tensor<128x64x1x1xf32> -> tensor<1x128x8x16xf32>
  return %y : tensor<1x128x8x16xf32>
}

// -----

// Split-K in the generated route (device "split": 4 units, generated
// kernels at half the library's rate, 6 us per library call, 64 x 64
// library tiles). A 1x1 convolution of 1024 into 32 channels of 4 x 8
// pixels: 2.1 MFLOP, K = 1024 = 64 steps. Unsplit, the workgroup tiles
// give at most 2 blocks (64 x 16 of 2 x 2 threads) for the 4 units: a
// quarter of the slots, 16.8 us generated against 8.4 + 6 us as a library
// call (granted the same fill): the library. With workgroup-tile-split-k 8
// (the default) the reduction is split in 4 parts of 64 x 32 tiles (4 x 2
// per thread), 4 blocks, half the slots: 8.4 us plus the second kernel's
// 0.02 us of bytes against 4.2 + 6 us: generated.
// SPLIT: remark: generated kernel: predicted 8.{{[0-9]}} us, 10.2 us as a library call (split, fp32); generated: 64 x 32 tiles, 4 x 2 per thread, reduction split in 4 parts
// SPLIT-LABEL: func.func @split_k
// SPLIT: seg.conv2d
// SPLIT-NOT: call
// NOSPLIT: remark: library call: predicted 14.4 us, 16.8 us as a generated kernel (split, fp32); generated: 64 x 16 tiles, 2 x 2 per thread{{$}}
// NOSPLIT-LABEL: func.func @split_k
// NOSPLIT: call @gpuopt_cpu_conv2d
// (Labels end the -NOT checks above.)
// WAVES-LABEL: func.func @split_k
// FLAT-LABEL: func.func @split_k
// NARROW-LABEL: func.func @split_k
func.func @split_k(%x: tensor<1x1024x4x8xf32>, %w: tensor<32x1024x1x1xf32>) -> tensor<1x32x4x8xf32> {
  %y = seg.conv2d %x, %w stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 : tensor<1x1024x4x8xf32>, tensor<32x1024x1x1xf32> -> tensor<1x32x4x8xf32>
  return %y : tensor<1x32x4x8xf32>
}
