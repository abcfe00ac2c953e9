// RUN: gpuopt-opt %s -split-input-file -verify-diagnostics

// Fuzzing regressions: shape arithmetic on huge dims and attribute entries
// (int64 overflow, undefined behavior before the fix) is an error.

func.func @conv2d_dilated_kernel(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{the dilated kernel overflows int64}}
  %y = seg.conv2d %x, %w stride = [1, 1] padding = [1, 1] dilation = [9223372036854775807, 1] groups = 1
       : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<1x4x8x8xf32>
  return
}

// -----

func.func @conv2d_output_size(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{the output size overflows int64}}
  %y = seg.conv2d %x, %w stride = [1, 1] padding = [9223372036854775807, 1] dilation = [1, 1] groups = 1
       : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<1x4x8x8xf32>
  return
}

// -----

func.func @conv_transpose2d_output_size(%x: tensor<1x4x8x8xf32>, %w: tensor<4x2x3x3xf32>) {
  // expected-error @+1 {{the output size overflows int64}}
  %y = seg.conv_transpose2d %x, %w stride = [9223372036854775807, 1] padding = [0, 0] output_padding = [0, 0]
       dilation = [1, 1] groups = 1 : tensor<1x4x8x8xf32>, tensor<4x2x3x3xf32> -> tensor<1x2x8x8xf32>
  return
}

// -----

func.func @conv_transpose2d_output_channels(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4611686018427387904x1x1xf32>) {
  // expected-error @+1 {{the output channel count overflows int64}}
  %y = seg.conv_transpose2d %x, %w stride = [1, 1] padding = [0, 0] output_padding = [0, 0]
       dilation = [1, 1] groups = 4 : tensor<1x4x8x8xf32>, tensor<4x4611686018427387904x1x1xf32> -> tensor<1x4x8x8xf32>
  return
}

// -----

func.func @max_pool2d_output_size(%x: tensor<1x1x9223372036854775807x1xf32>) {
  // expected-error @+1 {{the output size overflows int64}}
  %y = seg.max_pool2d %x kernel = [2, 1] stride = [1, 1] padding = [1, 0] dilation = [1, 1] ceil_mode = false
       : tensor<1x1x9223372036854775807x1xf32> -> tensor<1x1x1x1xf32>
  return
}

// -----

func.func @max_pool2d_padding(%x: tensor<1x1x8x8xf32>) {
  // expected-error @+1 {{expected padding (4611686018427387904) at most half the kernel size (9223372036854775807)}}
  %y = seg.max_pool2d %x kernel = [9223372036854775807, 1] stride = [1, 1] padding = [4611686018427387904, 0]
       dilation = [1, 1] ceil_mode = false : tensor<1x1x8x8xf32> -> tensor<1x1x1x1xf32>
  return
}

// -----

func.func @concat_dim(%x: tensor<9223372036854775807xf32>) {
  // expected-error @+1 {{the concatenated dim overflows int64}}
  %y = seg.concat %x, %x dim = 0 : tensor<9223372036854775807xf32>, tensor<9223372036854775807xf32> -> tensor<2xf32>
  return
}

// -----

func.func @slice_last_index(%x: tensor<8xf32>) {
  // expected-error @+1 {{the last slice index overflows int64}}
  %y = seg.slice %x start = [1] size = [2] step = [9223372036854775807] : tensor<8xf32> -> tensor<2xf32>
  return
}

// -----

func.func @pad_size(%x: tensor<8xf32>) {
  // expected-error @+1 {{the padded size overflows int64}}
  %y = seg.pad %x low = [9223372036854775807] high = [1] value = 0.0 : tensor<8xf32> -> tensor<2xf32>
  return
}

// -----

func.func @deform_conv2d_kernel_size(%x: tensor<1x1x4294967296x4294967296xf32>, %o: tensor<1x2x1x1xf32>,
                                     %w: tensor<1x1x4294967296x4294967296xf32>) {
  // expected-error @+1 {{the kernel size overflows int64}}
  %y = seg.deform_conv2d %x, %o, %w stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 offset_groups = 1
       : (tensor<1x1x4294967296x4294967296xf32>, tensor<1x2x1x1xf32>, tensor<1x1x4294967296x4294967296xf32>)
         -> tensor<1x1x1x1xf32>
  return
}

// -----

func.func @deform_conv2d_offset_channels(%x: tensor<1x2x2147483648x2147483648xf32>, %o: tensor<1x2x1x1xf32>,
                                         %w: tensor<1x2x2147483648x2147483648xf32>) {
  // expected-error @+1 {{the offset channel count overflows int64}}
  %y = seg.deform_conv2d %x, %o, %w stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 offset_groups = 2
       : (tensor<1x2x2147483648x2147483648xf32>, tensor<1x2x1x1xf32>, tensor<1x2x2147483648x2147483648xf32>)
         -> tensor<1x1x1x1xf32>
  return
}

// -----

func.func @shift_offsets_kernel_size() {
  // expected-error @+1 {{the kernel size overflows int64}}
  %o = seg.shift_offsets offsets_h = [0, 1] offsets_w = [] mode = cyclic input_size = [8, 8]
       kernel = [4611686018427387904, 4] stride = [1, 1] padding = [0, 0] dilation = [1, 1] : tensor<1x4x8x8xf32>
  return
}

// -----

func.func @shift_offsets_offset_channels() {
  // expected-error @+1 {{the offset channel count overflows int64}}
  %o = seg.shift_offsets offsets_h = [0, 1] offsets_w = [] mode = cyclic input_size = [8, 8]
       kernel = [4611686018427387904, 1] stride = [1, 1] padding = [0, 0] dilation = [1, 1] : tensor<1x4x8x8xf32>
  return
}

// -----

func.func @shift_offsets_output_size() {
  // expected-error @+1 {{the output size overflows int64}}
  %o = seg.shift_offsets offsets_h = [0, 1] offsets_w = [] mode = cyclic input_size = [8, 8]
       kernel = [1, 1] stride = [1, 1] padding = [9223372036854775807, 0] dilation = [1, 1] : tensor<1x4x8x8xf32>
  return
}

// -----

func.func @reshape_element_count(%x: tensor<4294967296x4294967296xf32>) {
  // expected-error @+1 {{the element count overflows int64}}
  %y = seg.reshape %x : tensor<4294967296x4294967296xf32> -> tensor<0xf32>
  return
}
