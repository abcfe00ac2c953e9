// RUN: gpuopt-opt %s -split-input-file -verify-diagnostics

// One case per verifier message of the seg dialect.

func.func @param_non_empty_parameter_name() {
  // expected-error @+1 {{expected a non-empty parameter name}}
  %w = seg.param "" : tensor<4xf32>
  return
}

// -----

func.func @gelu_approximate_none_tanh_fast(%x: tensor<4xf32>) {
  // expected-error @+1 {{unknown GELU approximation "fast", expected one of: none, tanh}}
  %y = seg.gelu %x approximate = fast : tensor<4xf32>
  return
}

// -----

// The old string spelling parses as the keyword; an unknown one is rejected
// the same way.
func.func @gelu_approximate_string(%x: tensor<4xf32>) {
  // expected-error @+1 {{unknown GELU approximation "erf", expected one of: none, tanh}}
  %y = seg.gelu %x approximate = "erf" : tensor<4xf32>
  return
}

// -----

// Generic form: the attribute must be the enum attribute, not a string.
func.func @gelu_approximate_generic_string(%x: tensor<4xf32>) {
  // expected-error @+1 {{Invalid attribute `approximate` in property conversion: "tanh"}}
  %y = "seg.gelu"(%x) <{approximate = "tanh"}> : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @reshape_same_number_elements(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{expected the same number of elements, got 16 and 15}}
  %y = seg.reshape %x : tensor<4x4xf32> -> tensor<15xf32>
  return
}

// -----

func.func @relu_must_statically_shaped_tensor(%x: tensor<?x4xf32>) {
  // expected-error @+1 {{must be statically shaped tensor}}
  %y = seg.relu %x : tensor<?x4xf32>
  return
}

// -----

func.func @conv2d_input_rank_nchw_rank(%x: tensor<4x8x8xf32>, %w: tensor<8x4x3x3xf32>) {
  // expected-error @+1 {{expected 'input' of rank 4 (NCHW), got rank 3}}
  %y = seg.conv2d %x, %w stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 1 : tensor<4x8x8xf32>, tensor<8x4x3x3xf32> -> tensor<1x8x8x8xf32>
  return
}

// -----

func.func @conv2d_weight_rank_rank(%x: tensor<1x4x8x8xf32>, %w: tensor<8x4x3xf32>) {
  // expected-error @+1 {{expected 'weight' of rank 4, got rank 3}}
  %y = seg.conv2d %x, %w stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 1 : tensor<1x4x8x8xf32>, tensor<8x4x3xf32> -> tensor<1x8x8x8xf32>
  return
}

// -----

func.func @conv2d_weight_have_element_type(%x: tensor<1x4x8x8xf32>, %w: tensor<8x4x3x3xf16>) {
  // expected-error @+1 {{expected 'weight' to have element type 'f32', got 'f16'}}
  %y = seg.conv2d %x, %w stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 1 : tensor<1x4x8x8xf32>, tensor<8x4x3x3xf16> -> tensor<1x8x8x8xf32>
  return
}

// -----

func.func @conv2d_stride_have_entries(%x: tensor<1x4x8x8xf32>, %w: tensor<8x4x3x3xf32>) {
  // expected-error @+1 {{expected 'stride' to have 2 entries, got 1}}
  %y = seg.conv2d %x, %w stride = [1] padding = [1, 1] dilation = [1, 1] groups = 1 : tensor<1x4x8x8xf32>, tensor<8x4x3x3xf32> -> tensor<1x8x8x8xf32>
  return
}

// -----

func.func @conv2d_every_entry_stride_least(%x: tensor<1x4x8x8xf32>, %w: tensor<8x4x3x3xf32>) {
  // expected-error @+1 {{expected every entry of 'stride' to be at least 1, got [0, 1]}}
  %y = seg.conv2d %x, %w stride = [0, 1] padding = [1, 1] dilation = [1, 1] groups = 1 : tensor<1x4x8x8xf32>, tensor<8x4x3x3xf32> -> tensor<1x8x8x8xf32>
  return
}

// -----

func.func @conv2d_every_entry_padding_least(%x: tensor<1x4x8x8xf32>, %w: tensor<8x4x3x3xf32>) {
  // expected-error @+1 {{expected every entry of 'padding' to be at least 0, got [-1, 1]}}
  %y = seg.conv2d %x, %w stride = [1, 1] padding = [-1, 1] dilation = [1, 1] groups = 1 : tensor<1x4x8x8xf32>, tensor<8x4x3x3xf32> -> tensor<1x8x8x8xf32>
  return
}

// -----

func.func @conv2d_groups_least(%x: tensor<1x4x8x8xf32>, %w: tensor<8x4x3x3xf32>) {
  // expected-error @+1 {{expected 'groups' to be at least 1, got 0}}
  %y = seg.conv2d %x, %w stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 0 : tensor<1x4x8x8xf32>, tensor<8x4x3x3xf32> -> tensor<1x8x8x8xf32>
  return
}

// -----

func.func @conv2d_input_channels_divisible_by(%x: tensor<1x4x8x8xf32>, %w: tensor<8x4x3x3xf32>) {
  // expected-error @+1 {{expected input channels (4) divisible by groups (3)}}
  %y = seg.conv2d %x, %w stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 3 : tensor<1x4x8x8xf32>, tensor<8x4x3x3xf32> -> tensor<1x8x8x8xf32>
  return
}

// -----

func.func @conv2d_output_channels_divisible_by(%x: tensor<1x4x8x8xf32>, %w: tensor<6x2x3x3xf32>) {
  // expected-error @+1 {{expected output channels (6) divisible by groups (4)}}
  %y = seg.conv2d %x, %w stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 4 : tensor<1x4x8x8xf32>, tensor<6x2x3x3xf32> -> tensor<1x6x8x8xf32>
  return
}

// -----

func.func @conv2d_weight_dim_input_channels(%x: tensor<1x4x8x8xf32>, %w: tensor<8x2x3x3xf32>) {
  // expected-error @+1 {{expected weight dim 1 to be input channels / groups (4), got 2}}
  %y = seg.conv2d %x, %w stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 1 : tensor<1x4x8x8xf32>, tensor<8x2x3x3xf32> -> tensor<1x8x8x8xf32>
  return
}

// -----

func.func @conv2d_bias_shape(%x: tensor<1x4x8x8xf32>, %w: tensor<8x4x3x3xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{expected 'bias' of shape [8], got [4]}}
  %y = seg.conv2d %x, %w, %b stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 1 : tensor<1x4x8x8xf32>, tensor<8x4x3x3xf32>, tensor<4xf32> -> tensor<1x8x8x8xf32>
  return
}

// -----

func.func @conv2d_dilated_kernel_larger_padded(%x: tensor<1x4x2x2xf32>, %w: tensor<8x4x5x5xf32>) {
  // expected-error @+1 {{dilated kernel 5 is larger than the padded input 2 along spatial dim 0}}
  %y = seg.conv2d %x, %w stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 : tensor<1x4x2x2xf32>, tensor<8x4x5x5xf32> -> tensor<1x8x1x1xf32>
  return
}

// -----

func.func @conv2d_result_shape(%x: tensor<1x4x8x8xf32>, %w: tensor<8x4x3x3xf32>) {
  // expected-error @+1 {{expected result shape [1, 8, 8, 8], got [1, 8, 7, 8]}}
  %y = seg.conv2d %x, %w stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 1 : tensor<1x4x8x8xf32>, tensor<8x4x3x3xf32> -> tensor<1x8x7x8xf32>
  return
}

// -----

func.func @conv2d_result_element_type_f(%x: tensor<1x4x8x8xf32>, %w: tensor<8x4x3x3xf32>) {
  // expected-error @+1 {{expected result element type 'f32', got 'f16'}}
  %y = seg.conv2d %x, %w stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 1 : tensor<1x4x8x8xf32>, tensor<8x4x3x3xf32> -> tensor<1x8x8x8xf16>
  return
}

// -----

func.func @conv_transpose2d_input_channels_divisible_by(%x: tensor<1x6x4x4xf32>, %w: tensor<6x2x2x2xf32>) {
  // expected-error @+1 {{expected input channels (6) divisible by groups (4)}}
  %y = seg.conv_transpose2d %x, %w stride = [2, 2] padding = [0, 0] output_padding = [0, 0] dilation = [1, 1] groups = 4 : tensor<1x6x4x4xf32>, tensor<6x2x2x2xf32> -> tensor<1x8x8x8xf32>
  return
}

// -----

func.func @conv_transpose2d_weight_dim_input_channels(%x: tensor<1x4x4x4xf32>, %w: tensor<8x2x2x2xf32>) {
  // expected-error @+1 {{expected weight dim 0 to be input channels (4), got 8}}
  %y = seg.conv_transpose2d %x, %w stride = [2, 2] padding = [0, 0] output_padding = [0, 0] dilation = [1, 1] groups = 1 : tensor<1x4x4x4xf32>, tensor<8x2x2x2xf32> -> tensor<1x2x8x8xf32>
  return
}

// -----

func.func @conv_transpose2d_output_padding_smaller_stride_dilation(%x: tensor<1x4x4x4xf32>, %w: tensor<4x2x2x2xf32>) {
  // expected-error @+1 {{expected output_padding (2) smaller than stride or dilation along spatial dim 0}}
  %y = seg.conv_transpose2d %x, %w stride = [2, 2] padding = [0, 0] output_padding = [2, 0] dilation = [1, 1] groups = 1 : tensor<1x4x4x4xf32>, tensor<4x2x2x2xf32> -> tensor<1x2x10x8xf32>
  return
}

// -----

func.func @conv_transpose2d_padding_leaves_no_output(%x: tensor<1x4x1x1xf32>, %w: tensor<4x2x1x1xf32>) {
  // expected-error @+1 {{padding 1 leaves no output along spatial dim 0}}
  %y = seg.conv_transpose2d %x, %w stride = [1, 1] padding = [1, 1] output_padding = [0, 0] dilation = [1, 1] groups = 1 : tensor<1x4x1x1xf32>, tensor<4x2x1x1xf32> -> tensor<1x2x1x1xf32>
  return
}

// -----

func.func @conv_transpose2d_output_padding_have_entries(%x: tensor<1x4x4x4xf32>, %w: tensor<4x2x2x2xf32>) {
  // expected-error @+1 {{expected 'output_padding' to have 2 entries, got 1}}
  %y = seg.conv_transpose2d %x, %w stride = [2, 2] padding = [0, 0] output_padding = [0] dilation = [1, 1] groups = 1 : tensor<1x4x4x4xf32>, tensor<4x2x2x2xf32> -> tensor<1x2x8x8xf32>
  return
}

// -----

func.func @batch_norm_input_rank_more_rank(%x: tensor<4xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>) {
  // expected-error @+1 {{expected 'input' of rank 2 or more, got rank 1}}
  %y = seg.batch_norm %x, %m, %v, %v, %v epsilon = 1.0e-05 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  return
}

// -----

func.func @batch_norm_positive_epsilon(%x: tensor<1x4x2x2xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>) {
  // expected-error @+1 {{expected a positive 'epsilon', got 0}}
  %y = seg.batch_norm %x, %m, %v, %v, %v epsilon = 0.0 : tensor<1x4x2x2xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<1x4x2x2xf32>
  return
}

// -----

func.func @batch_norm_mean_shape(%x: tensor<1x4x2x2xf32>, %m: tensor<3xf32>, %v: tensor<4xf32>) {
  // expected-error @+1 {{expected 'mean' of shape [4], got [3]}}
  %y = seg.batch_norm %x, %m, %v, %v, %v epsilon = 1.0e-05 : tensor<1x4x2x2xf32>, tensor<3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<1x4x2x2xf32>
  return
}

// -----

func.func @layer_norm_positive_epsilon(%x: tensor<2x8xf32>, %w: tensor<8xf32>, %b: tensor<8xf32>) {
  // expected-error @+1 {{expected a positive 'epsilon', got -1}}
  %y = seg.layer_norm %x, %w, %b epsilon = -1.0 : tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<2x8xf32>
  return
}

// -----

func.func @layer_norm_weight_bias_same_shape(%x: tensor<2x8xf32>, %w: tensor<8xf32>, %b: tensor<2x8xf32>) {
  // expected-error @+1 {{expected 'weight' and 'bias' of the same shape, got [8] and [2, 8]}}
  %y = seg.layer_norm %x, %w, %b epsilon = 1.0e-05 : tensor<2x8xf32>, tensor<8xf32>, tensor<2x8xf32> -> tensor<2x8xf32>
  return
}

// -----

func.func @layer_norm_normalized_shape_equal_trailing(%x: tensor<2x8xf32>, %w: tensor<4xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{expected the normalized shape [4] to equal the trailing dims of the input [2, 8]}}
  %y = seg.layer_norm %x, %w, %b epsilon = 1.0e-05 : tensor<2x8xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<2x8xf32>
  return
}

// -----

func.func @layer_norm_axis_in_range(%x: tensor<2x8xf32>, %w: tensor<8xf32>, %b: tensor<8xf32>) {
  // expected-error @+1 {{expected 'axis' in [0, 2), got 2}}
  %y = seg.layer_norm %x, %w, %b axis = 2 epsilon = 1.0e-05 : tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<2x8xf32>
  return
}

// -----

func.func @layer_norm_axis_not_negative(%x: tensor<2x8xf32>, %w: tensor<8xf32>, %b: tensor<8xf32>) {
  // expected-error @+1 {{expected 'axis' in [0, 2), got -1}}
  %y = seg.layer_norm %x, %w, %b axis = -1 epsilon = 1.0e-05 : tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<2x8xf32>
  return
}

// -----

func.func @layer_norm_axis_weight_shape(%x: tensor<1x4x3x3xf32>, %w: tensor<3xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{expected 'weight' of shape [4] (dim 1 of the input), got [3]}}
  %y = seg.layer_norm %x, %w, %b axis = 1 epsilon = 1.0e-05 : tensor<1x4x3x3xf32>, tensor<3xf32>, tensor<3xf32> -> tensor<1x4x3x3xf32>
  return
}

// -----

func.func @layer_norm_weight_have_element_type(%x: tensor<2x8xf32>, %w: tensor<8xf16>, %b: tensor<8xf16>) {
  // expected-error @+1 {{expected 'weight' to have element type 'f32', got 'f16'}}
  %y = seg.layer_norm %x, %w, %b epsilon = 1.0e-05 : tensor<2x8xf32>, tensor<8xf16>, tensor<8xf16> -> tensor<2x8xf32>
  return
}

// -----

func.func @linear_input_rank_more(%x: tensor<f32>, %w: tensor<4x1xf32>) {
  // expected-error @+1 {{expected 'input' of rank 1 or more}}
  %y = seg.linear %x, %w : tensor<f32>, tensor<4x1xf32> -> tensor<4xf32>
  return
}

// -----

func.func @linear_weight_rank_out_rank(%x: tensor<2x8xf32>, %w: tensor<8xf32>) {
  // expected-error @+1 {{expected 'weight' of rank 2 (out, in), got rank 1}}
  %y = seg.linear %x, %w : tensor<2x8xf32>, tensor<8xf32> -> tensor<2x8xf32>
  return
}

// -----

func.func @linear_weight_dim_equal_input(%x: tensor<2x8xf32>, %w: tensor<4x6xf32>) {
  // expected-error @+1 {{expected weight dim 1 (6) to equal the input's last dim (8)}}
  %y = seg.linear %x, %w : tensor<2x8xf32>, tensor<4x6xf32> -> tensor<2x4xf32>
  return
}

// -----

func.func @linear_bias_shape(%x: tensor<2x8xf32>, %w: tensor<4x8xf32>, %b: tensor<8xf32>) {
  // expected-error @+1 {{expected 'bias' of shape [4], got [8]}}
  %y = seg.linear %x, %w, %b : tensor<2x8xf32>, tensor<4x8xf32>, tensor<8xf32> -> tensor<2x4xf32>
  return
}

// -----

func.func @add_operand_shapes_are_not(%a: tensor<2x3xf32>, %b: tensor<2x4xf32>) {
  // expected-error @+1 {{operand shapes [2, 3] and [2, 4] are not broadcast-compatible}}
  %y = seg.add %a, %b : tensor<2x3xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
  return
}

// -----

func.func @mul_result_shape(%a: tensor<2x3xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{expected result shape [2, 3], got [3]}}
  %y = seg.mul %a, %b : tensor<2x3xf32>, tensor<3xf32> -> tensor<3xf32>
  return
}

// -----

func.func @max_pool2d_input_rank_nchw_rank(%x: tensor<4x8x8xf32>) {
  // expected-error @+1 {{expected 'input' of rank 4 (NCHW), got rank 3}}
  %y = seg.max_pool2d %x kernel = [2, 2] stride = [2, 2] padding = [0, 0] dilation = [1, 1] ceil_mode = false : tensor<4x8x8xf32> -> tensor<4x4x4xf32>
  return
}

// -----

func.func @max_pool2d_kernel_have_entries(%x: tensor<1x4x8x8xf32>) {
  // expected-error @+1 {{expected 'kernel' to have 2 entries, got 3}}
  %y = seg.max_pool2d %x kernel = [2, 2, 2] stride = [2, 2] padding = [0, 0] dilation = [1, 1] ceil_mode = false : tensor<1x4x8x8xf32> -> tensor<1x4x4x4xf32>
  return
}

// -----

func.func @max_pool2d_padding_most_half_kernel(%x: tensor<1x4x8x8xf32>) {
  // expected-error @+1 {{expected padding (2) at most half the kernel size (2)}}
  %y = seg.max_pool2d %x kernel = [2, 2] stride = [2, 2] padding = [2, 0] dilation = [1, 1] ceil_mode = false : tensor<1x4x8x8xf32> -> tensor<1x4x6x4xf32>
  return
}

// -----

func.func @max_pool2d_pooling_window_larger_padded(%x: tensor<1x4x2x2xf32>) {
  // expected-error @+1 {{pooling window is larger than the padded input along spatial dim 0}}
  %y = seg.max_pool2d %x kernel = [4, 4] stride = [1, 1] padding = [0, 0] dilation = [1, 1] ceil_mode = false : tensor<1x4x2x2xf32> -> tensor<1x4x1x1xf32>
  return
}

// -----

func.func @upsample_bilinear_input_rank_nchw_rank(%x: tensor<4x2x2xf32>) {
  // expected-error @+1 {{expected 'input' of rank 4 (NCHW), got rank 3}}
  %y = seg.upsample_bilinear %x size = [4, 4] align_corners = false : tensor<4x2x2xf32> -> tensor<4x4x4xf32>
  return
}

// -----

func.func @upsample_nearest_size_have_entries(%x: tensor<1x4x2x2xf32>) {
  // expected-error @+1 {{expected 'size' to have 2 entries, got 1}}
  %y = seg.upsample_nearest %x size = [4] : tensor<1x4x2x2xf32> -> tensor<1x4x4x4xf32>
  return
}

// -----

func.func @upsample_nearest_every_entry_size_least(%x: tensor<1x4x2x2xf32>) {
  // expected-error @+1 {{expected every entry of 'size' to be at least 1, got [0, 4]}}
  %y = seg.upsample_nearest %x size = [0, 4] : tensor<1x4x2x2xf32> -> tensor<1x4x0x4xf32>
  return
}

// -----

func.func @upsample_nearest_empty_input(%x: tensor<1x2x0x0xf32>) {
  // expected-error @+1 {{expected a non-empty input map to upsample, got 0 x 0}}
  %y = seg.upsample_nearest %x size = [4, 4] : tensor<1x2x0x0xf32> -> tensor<1x2x4x4xf32>
  return
}

// -----

func.func @upsample_bilinear_empty_input(%x: tensor<1x2x3x0xf32>) {
  // expected-error @+1 {{expected a non-empty input map to upsample, got 3 x 0}}
  %y = seg.upsample_bilinear %x size = [4, 4] align_corners = false : tensor<1x2x3x0xf32> -> tensor<1x2x4x4xf32>
  return
}

// -----

func.func @concat_least_one_operand() {
  // expected-error @+1 {{expected at least one operand}}
  %y = "seg.concat"() <{dim = 0 : i64}> : () -> tensor<1xf32>
  return
}

// -----

func.func @concat_dim(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) {
  // expected-error @+1 {{expected 'dim' in [0, 2), got 2}}
  %y = seg.concat %a, %b dim = 2 : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x6xf32>
  return
}

// -----

func.func @concat_operand_have_element_type(%a: tensor<2x3xf32>, %b: tensor<2x3xf16>) {
  // expected-error @+1 {{expected operand 1 to have element type 'f32', got 'f16'}}
  %y = seg.concat %a, %b dim = 1 : tensor<2x3xf32>, tensor<2x3xf16> -> tensor<2x6xf32>
  return
}

// -----

func.func @concat_operand_rank_rank(%a: tensor<2x3xf32>, %b: tensor<2x3x1xf32>) {
  // expected-error @+1 {{expected operand 1 of rank 2, got rank 3}}
  %y = seg.concat %a, %b dim = 1 : tensor<2x3xf32>, tensor<2x3x1xf32> -> tensor<2x6xf32>
  return
}

// -----

func.func @concat_operand_match_operand_dim(%a: tensor<2x3xf32>, %b: tensor<4x3xf32>) {
  // expected-error @+1 {{expected operand 1 to match operand 0 in dim 0 (2), got 4}}
  %y = seg.concat %a, %b dim = 1 : tensor<2x3xf32>, tensor<4x3xf32> -> tensor<2x6xf32>
  return
}

// -----

func.func @slice_start_have_entries(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{expected 'start' to have 2 entries, got 1}}
  %y = seg.slice %x start = [0] size = [4, 8] step = [1, 1] : tensor<4x8xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @slice_every_entry_size_least(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{expected every entry of 'size' to be at least 1, got [4, 0]}}
  %y = seg.slice %x start = [0, 0] size = [4, 0] step = [1, 1] : tensor<4x8xf32> -> tensor<4x0xf32>
  return
}

// -----

func.func @slice_every_entry_step_least(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{expected every entry of 'step' to be at least 1, got [1, 0]}}
  %y = seg.slice %x start = [0, 0] size = [4, 4] step = [1, 0] : tensor<4x8xf32> -> tensor<4x4xf32>
  return
}

// -----

func.func @slice_slice_reads_index_dim(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{slice reads index 8 of dim 1 of size 8}}
  %y = seg.slice %x start = [0, 2] size = [4, 4] step = [1, 2] : tensor<4x8xf32> -> tensor<4x4xf32>
  return
}

// -----

func.func @pad_every_entry_low_least(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{expected every entry of 'low' to be at least 0, got [0, -1]}}
  %y = seg.pad %x low = [0, -1] high = [0, 0] value = 0.0 : tensor<4x8xf32> -> tensor<4x7xf32>
  return
}

// -----

func.func @pad_high_have_entries(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{expected 'high' to have 2 entries, got 1}}
  %y = seg.pad %x low = [0, 1] high = [0] value = 0.0 : tensor<4x8xf32> -> tensor<4x9xf32>
  return
}

// -----

func.func @roll_least_one_dim_roll(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{expected at least one dim to roll}}
  %y = seg.roll %x shifts = [] dims = [] : tensor<4x8xf32>
  return
}

// -----

func.func @roll_as_many_shifts_as(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{expected as many shifts as dims, got 2 and 1}}
  %y = seg.roll %x shifts = [1, 2] dims = [0] : tensor<4x8xf32>
  return
}

// -----

func.func @roll_roll_dims(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{expected roll dims in [0, 2), got [2]}}
  %y = seg.roll %x shifts = [1] dims = [2] : tensor<4x8xf32>
  return
}

// -----

func.func @roll_distinct_roll_dims(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{expected distinct roll dims, got [1, 1]}}
  %y = seg.roll %x shifts = [1, 1] dims = [1, 1] : tensor<4x8xf32>
  return
}

// -----

func.func @permute_dims_have_entries(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{expected 'dims' to have 2 entries, got 1}}
  %y = seg.permute %x dims = [0] : tensor<4x8xf32> -> tensor<4xf32>
  return
}

// -----

func.func @permute_dims_permutation(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{expected 'dims' to be a permutation of [0, 2), got [1, 1]}}
  %y = seg.permute %x dims = [1, 1] : tensor<4x8xf32> -> tensor<8x8xf32>
  return
}

// -----

func.func @channel_shift_rank(%x: tensor<4x8x8xf32>) {
  // expected-error @+1 {{expected 'input' of rank 4 (NCHW), got rank 3}}
  %y = seg.channel_shift %x offsets_h = [1, 2, 3, 4] offsets_w = [] mode = cyclic : tensor<4x8x8xf32>
  return
}

// -----

func.func @channel_shift_offsets_per_channel(%x: tensor<1x4x8x8xf32>) {
  // expected-error @+1 {{expected 'offsets_w' to be empty or have one entry per channel (4), got 3}}
  %y = seg.channel_shift %x offsets_h = [] offsets_w = [1, 2, 3] mode = cyclic : tensor<1x4x8x8xf32>
  return
}

// -----

func.func @channel_shift_mode(%x: tensor<1x4x8x8xf32>) {
  // expected-error @+1 {{unknown shift mode "reflect", expected one of: cyclic, zero}}
  %y = seg.channel_shift %x offsets_h = [0, 1, 2, 3] offsets_w = [] mode = reflect : tensor<1x4x8x8xf32>
  return
}

// -----

func.func @channel_shift_mode_generic(%x: tensor<1x4x8x8xf32>) {
  // expected-error @+1 {{unknown shift mode "reflect", expected one of: cyclic, zero}}
  %y = "seg.channel_shift"(%x) <{mode = #seg<shift_mode reflect>, offsets_h = array<i64: 0, 1, 2, 3>, offsets_w = array<i64>}> : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  return
}

// -----

// Generic form: an enum attribute of another kind is not a shift mode.
func.func @channel_shift_mode_generic_kind(%x: tensor<1x4x8x8xf32>) {
  // expected-error @+1 {{Invalid attribute `mode` in property conversion: #seg<activation relu>}}
  %y = "seg.channel_shift"(%x) <{mode = #seg<activation relu>, offsets_h = array<i64: 0, 1, 2, 3>, offsets_w = array<i64>}> : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  return
}

// -----

func.func @fused_conv2d_offsets(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x1x1xf32>) {
  // expected-error @+1 {{expected 'offsets_h' to be empty or have one entry per channel (4), got 2}}
  %y = seg.fused_conv2d %x, %w offsets_h = [1, 2] offsets_w = [] mode = cyclic stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 activation = none : (tensor<1x4x8x8xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x8x8xf32>
  return
}

// -----

func.func @fused_conv2d_weight(%x: tensor<1x4x8x8xf32>, %w: tensor<4x2x1x1xf32>) {
  // expected-error @+1 {{expected weight dim 1 to be input channels / groups (4), got 2}}
  %y = seg.fused_conv2d %x, %w offsets_h = [] offsets_w = [] mode = zero stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 activation = none : (tensor<1x4x8x8xf32>, tensor<4x2x1x1xf32>) -> tensor<1x4x8x8xf32>
  return
}

// -----

func.func @fused_conv2d_activation(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x1x1xf32>) {
  // expected-error @+1 {{unknown activation "silu", expected one of: none, relu, gelu, gelu_tanh}}
  %y = seg.fused_conv2d %x, %w offsets_h = [] offsets_w = [] mode = zero stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 activation = silu : (tensor<1x4x8x8xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x8x8xf32>
  return
}

// -----

func.func @fused_conv2d_residual(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x1x1xf32>, %r: tensor<1x4x8x7xf32>) {
  // expected-error @+1 {{expected 'residual' of the result's type, got 'tensor<1x4x8x7xf32>'}}
  %y = seg.fused_conv2d %x, %w residual %r offsets_h = [] offsets_w = [] mode = zero stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 activation = none : (tensor<1x4x8x8xf32>, tensor<4x4x1x1xf32>, tensor<1x4x8x7xf32>) -> tensor<1x4x8x8xf32>
  return
}

// -----

func.func @fused_conv2d_frame_shift_frames(%x: tensor<4x4x8x8xf32>, %w: tensor<4x4x1x1xf32>) {
  // expected-error @+1 {{expected 'frame_shift' frames to be positive, got 0}}
  %y = seg.fused_conv2d %x, %w offsets_h = [] offsets_w = [] mode = zero frame_shift = <frames = 0, offsets = [0, 0, 0, 0]> stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 activation = none : (tensor<4x4x8x8xf32>, tensor<4x4x1x1xf32>) -> tensor<4x4x8x8xf32>
  return
}

// -----

func.func @fused_conv2d_frame_shift_negative_frames(%x: tensor<4x4x8x8xf32>, %w: tensor<4x4x1x1xf32>) {
  // expected-error @+1 {{expected 'frame_shift' frames to be positive, got -2}}
  %y = seg.fused_conv2d %x, %w offsets_h = [] offsets_w = [] mode = zero frame_shift = <frames = -2, offsets = [0, 0, 0, 0]> stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 activation = none : (tensor<4x4x8x8xf32>, tensor<4x4x1x1xf32>) -> tensor<4x4x8x8xf32>
  return
}

// -----

func.func @fused_conv2d_frame_shift_batch(%x: tensor<6x4x8x8xf32>, %w: tensor<4x4x1x1xf32>) {
  // expected-error @+1 {{expected 'frame_shift' frames (4) to divide the batch (6)}}
  %y = seg.fused_conv2d %x, %w offsets_h = [] offsets_w = [] mode = zero frame_shift = <frames = 4, offsets = [1, -1, 0, 0]> stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 activation = none : (tensor<6x4x8x8xf32>, tensor<4x4x1x1xf32>) -> tensor<6x4x8x8xf32>
  return
}

// -----

func.func @fused_conv2d_frame_shift_offsets(%x: tensor<4x4x8x8xf32>, %w: tensor<4x4x1x1xf32>) {
  // expected-error @+1 {{expected 'frame_shift' to have one offset per input channel (4), got 2}}
  %y = seg.fused_conv2d %x, %w offsets_h = [] offsets_w = [] mode = zero frame_shift = <frames = 2, offsets = [1, -1]> stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 activation = none : (tensor<4x4x8x8xf32>, tensor<4x4x1x1xf32>) -> tensor<4x4x8x8xf32>
  return
}

// -----

func.func @fused_conv2d_frame_shift_whole_clip(%x: tensor<4x4x8x8xf32>, %w: tensor<4x4x1x1xf32>) {
  // expected-error @+1 {{expected 'frame_shift' offsets in (-2, 2), got [1, -2, 0, 0]}}
  %y = seg.fused_conv2d %x, %w offsets_h = [] offsets_w = [] mode = zero frame_shift = <frames = 2, offsets = [1, -2, 0, 0]> stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 activation = none : (tensor<4x4x8x8xf32>, tensor<4x4x1x1xf32>) -> tensor<4x4x8x8xf32>
  return
}

// -----

func.func @fused_conv2d_frame_shift_syntax(%x: tensor<4x4x8x8xf32>, %w: tensor<4x4x1x1xf32>) {
  // expected-error @+1 {{expected ','}}
  %y = seg.fused_conv2d %x, %w offsets_h = [] offsets_w = [] mode = zero frame_shift = <frames = 2> stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 activation = none : (tensor<4x4x8x8xf32>, tensor<4x4x1x1xf32>) -> tensor<4x4x8x8xf32>
  return
}

// -----

func.func @fold_batch_norm_stats(%w: tensor<4x3x3x3xf32>, %v: tensor<4xf32>, %m: tensor<3xf32>) {
  // expected-error @+1 {{expected 'mean' of shape [4], got [3]}}
  %a, %b = seg.fold_batch_norm %w, %m, %v, %v, %v epsilon = 1.0e-05 : (tensor<4x3x3x3xf32>, tensor<3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<4x3x3x3xf32>, tensor<3xf32>)
  return
}

// -----

func.func @fold_batch_norm_epsilon(%w: tensor<4x3x3x3xf32>, %v: tensor<4xf32>) {
  // expected-error @+1 {{expected a positive 'epsilon', got 0}}
  %a, %b = seg.fold_batch_norm %w, %v, %v, %v, %v epsilon = 0.0 : (tensor<4x3x3x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<4x3x3x3xf32>, tensor<4xf32>)
  return
}

// -----

func.func @fold_batch_norm_rank(%w: tensor<f32>, %v: tensor<4xf32>) {
  // expected-error @+1 {{expected 'weight' of rank 1 or more}}
  %a, %b = seg.fold_batch_norm %w, %v, %v, %v, %v epsilon = 1.0e-05 : (tensor<f32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>)
  return
}

// -----

func.func @fold_batch_norm_results(%w: tensor<4x3x3x3xf32>, %v: tensor<4xf32>) {
  // expected-error @+1 {{expected results of the weight's and the mean's types}}
  %a, %b = seg.fold_batch_norm %w, %v, %v, %v, %v epsilon = 1.0e-05 : (tensor<4x3x3x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<4x3x3x3xf32>, tensor<3xf32>)
  return
}

// -----

func.func @deform_conv2d_offset_groups(%x: tensor<1x4x8x8xf32>, %o: tensor<1x6x8x8xf32>, %w: tensor<2x4x1x1xf32>) {
  // expected-error @+1 {{expected 'offset_groups' (3) to be positive and divide the input channels (4)}}
  %y = seg.deform_conv2d %x, %o, %w stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 offset_groups = 3 : (tensor<1x4x8x8xf32>, tensor<1x6x8x8xf32>, tensor<2x4x1x1xf32>) -> tensor<1x2x8x8xf32>
  return
}

// -----

func.func @deform_conv2d_offset_shape(%x: tensor<2x4x8x8xf32>, %o: tensor<2x4x8x7xf32>, %w: tensor<2x4x1x1xf32>) {
  // expected-error @+1 {{expected 'offset' of shape [2, 4, 8, 8] (or a batch of 1), got [2, 4, 8, 7]}}
  %y = seg.deform_conv2d %x, %o, %w stride = [1, 1] padding = [0, 0] dilation = [1, 1] groups = 1 offset_groups = 2 : (tensor<2x4x8x8xf32>, tensor<2x4x8x7xf32>, tensor<2x4x1x1xf32>) -> tensor<2x2x8x8xf32>
  return
}

// -----

func.func @shift_offsets_no_channels() {
  // expected-error @+1 {{expected per-channel offsets along H or W}}
  %o = seg.shift_offsets offsets_h = [] offsets_w = [] mode = cyclic input_size = [4, 4] kernel = [1, 1] stride = [1, 1] padding = [0, 0] dilation = [1, 1] : tensor<1x0x4x4xf32>
  return
}

// -----

func.func @shift_offsets_lengths() {
  // expected-error @+1 {{expected 'offsets_h' and 'offsets_w' of the same length when both are given}}
  %o = seg.shift_offsets offsets_h = [1, 2] offsets_w = [1] mode = cyclic input_size = [4, 4] kernel = [1, 1] stride = [1, 1] padding = [0, 0] dilation = [1, 1] : tensor<1x4x4x4xf32>
  return
}

// -----

func.func @shift_offsets_mode() {
  // expected-error @+1 {{unknown shift mode "wrap", expected one of: cyclic, zero}}
  %o = seg.shift_offsets offsets_h = [1, 2] offsets_w = [] mode = wrap input_size = [4, 4] kernel = [1, 1] stride = [1, 1] padding = [0, 0] dilation = [1, 1] : tensor<1x4x4x4xf32>
  return
}

// -----

func.func @shift_offsets_kernel_fits() {
  // expected-error @+1 {{the kernel does not fit the padded input}}
  %o = seg.shift_offsets offsets_h = [1, 2] offsets_w = [] mode = zero input_size = [2, 2] kernel = [5, 5] stride = [1, 1] padding = [0, 0] dilation = [1, 1] : tensor<1x100x1x1xf32>
  return
}

// -----

func.func @shift_offsets_result() {
  // expected-error @+1 {{expected result shape [1, 4, 4, 4], got [1, 4, 4, 3]}}
  %o = seg.shift_offsets offsets_h = [1, 2] offsets_w = [] mode = zero input_size = [4, 4] kernel = [1, 1] stride = [1, 1] padding = [0, 0] dilation = [1, 1] : tensor<1x4x4x3xf32>
  return
}

// -----

func.func @shift_offsets_kernel_entries() {
  // expected-error @+1 {{expected 'kernel' to have 2 entries, got 1}}
  %o = seg.shift_offsets offsets_h = [1, 2] offsets_w = [] mode = zero input_size = [4, 4] kernel = [1] stride = [1, 1] padding = [0, 0] dilation = [1, 1] : tensor<1x4x4x4xf32>
  return
}

// -----

func.func @shift_group_dim(%x: tensor<2x4x8xf32>) {
  // expected-error @+1 {{expected 'group_dim' in [0, 3), got 3}}
  %y = seg.shift %x group_dim = 3 dims = [1] offsets = [1, 1] mode = zero : tensor<2x4x8xf32>
  return
}

// -----

func.func @shift_no_dims(%x: tensor<2x4x8xf32>) {
  // expected-error @+1 {{expected at least one dim to shift}}
  %y = seg.shift %x group_dim = 1 dims = [] offsets = [] mode = zero : tensor<2x4x8xf32>
  return
}

// -----

func.func @shift_dim_range(%x: tensor<2x4x8xf32>) {
  // expected-error @+1 {{expected shifted dims in [0, 3), got [-1]}}
  %y = seg.shift %x group_dim = 1 dims = [-1] offsets = [0, 0, 0, 0] mode = cyclic : tensor<2x4x8xf32>
  return
}

// -----

func.func @shift_group_dim_shifted(%x: tensor<2x4x8xf32>) {
  // expected-error @+1 {{expected shifted dims other than 'group_dim' (1), got [2, 1]}}
  %y = seg.shift %x group_dim = 1 dims = [2, 1] offsets = [0, 0, 0, 0, 0, 0, 0, 0] mode = cyclic : tensor<2x4x8xf32>
  return
}

// -----

func.func @shift_distinct_dims(%x: tensor<2x4x8xf32>) {
  // expected-error @+1 {{expected distinct shifted dims, got [2, 2]}}
  %y = seg.shift %x group_dim = 1 dims = [2, 2] offsets = [0, 0, 0, 0, 0, 0, 0, 0] mode = cyclic : tensor<2x4x8xf32>
  return
}

// -----

func.func @shift_offsets_count(%x: tensor<2x4x8xf32>) {
  // expected-error @+1 {{expected 'offsets' to have one entry per index of 'group_dim' (4) for each of the 2 shifted dims, got 4}}
  %y = seg.shift %x group_dim = 1 dims = [0, 2] offsets = [1, 2, 3, 4] mode = zero : tensor<2x4x8xf32>
  return
}

// -----

func.func @shift_mode(%x: tensor<2x4x8xf32>) {
  // expected-error @+1 {{unknown shift mode "reflect", expected one of: cyclic, zero}}
  %y = seg.shift %x group_dim = 1 dims = [2] offsets = [1, 2, 3, 4] mode = reflect : tensor<2x4x8xf32>
  return
}

// -----

func.func @shift_result_type(%x: tensor<2x4x8xf32>) {
  // expected-error @+1 {{expected result shape [2, 4, 8], got [2, 4, 9]}}
  %y = "seg.shift"(%x) <{group_dim = 1 : i64, dims = array<i64: 2>, offsets = array<i64: 1, 2, 3, 4>, mode = #seg<shift_mode zero>}> : (tensor<2x4x8xf32>) -> tensor<2x4x9xf32>
  return
}
