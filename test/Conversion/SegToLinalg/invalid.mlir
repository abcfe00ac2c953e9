// RUN: gpuopt-opt %s -split-input-file --convert-seg-to-linalg -verify-diagnostics

// Offsets are computed in f32 only: an f16 seg.shift_offsets has no lowering.
func.func @f16_shift_offsets() -> tensor<1x4x4x4xf16> {
  // expected-error @+1 {{failed to legalize operation 'seg.shift_offsets' that was explicitly marked illegal}}
  %o = seg.shift_offsets offsets_h = [1, 2] offsets_w = [] mode = zero input_size = [4, 4] kernel = [1, 1] stride = [1, 1] padding = [0, 0] dilation = [1, 1] : tensor<1x4x4x4xf16>
  return %o : tensor<1x4x4x4xf16>
}

// -----

func.func @param_two_types() -> (tensor<4xf32>, tensor<2x2xf32>) {
  %a = seg.param "w" : tensor<4xf32>
  // expected-error @+1 {{parameter 'w' is used with two types: 'tensor<4xf32>' and 'tensor<2x2xf32>'}}
  %b = seg.param "w" : tensor<2x2xf32>
  return %a, %b : tensor<4xf32>, tensor<2x2xf32>
}
