// The demo block of `make demo`: a UNet DoubleConv followed by one Rolling-UNet
// roll group (channel c rolled by c along H, then a Linear + GELU on the tokens),
// written as the exporter will write it: one seg.roll per channel slice.
// Parameters are named as in the state_dict of DemoBlock in examples/demo.py.
func.func @forward(%x: tensor<1x3x32x32xf32>) -> tensor<1x8x32x32xf32> {
  %conv0_w = seg.param "double_conv.0.weight" : tensor<8x3x3x3xf32>
  %conv0_b = seg.param "double_conv.0.bias" : tensor<8xf32>
  %c0 = seg.conv2d %x, %conv0_w, %conv0_b stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 1
        : tensor<1x3x32x32xf32>, tensor<8x3x3x3xf32>, tensor<8xf32> -> tensor<1x8x32x32xf32>
  %bn0_running_mean = seg.param "double_conv.1.running_mean" : tensor<8xf32>
  %bn0_running_var = seg.param "double_conv.1.running_var" : tensor<8xf32>
  %bn0_weight = seg.param "double_conv.1.weight" : tensor<8xf32>
  %bn0_bias = seg.param "double_conv.1.bias" : tensor<8xf32>
  %n0 = seg.batch_norm %c0, %bn0_running_mean, %bn0_running_var, %bn0_weight, %bn0_bias epsilon = 1.0e-05
        : tensor<1x8x32x32xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<1x8x32x32xf32>
  %r0 = seg.relu %n0 : tensor<1x8x32x32xf32>
  %conv1_w = seg.param "double_conv.3.weight" : tensor<8x8x3x3xf32>
  %conv1_b = seg.param "double_conv.3.bias" : tensor<8xf32>
  %c1 = seg.conv2d %r0, %conv1_w, %conv1_b stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 1
        : tensor<1x8x32x32xf32>, tensor<8x8x3x3xf32>, tensor<8xf32> -> tensor<1x8x32x32xf32>
  %bn1_running_mean = seg.param "double_conv.4.running_mean" : tensor<8xf32>
  %bn1_running_var = seg.param "double_conv.4.running_var" : tensor<8xf32>
  %bn1_weight = seg.param "double_conv.4.weight" : tensor<8xf32>
  %bn1_bias = seg.param "double_conv.4.bias" : tensor<8xf32>
  %n1 = seg.batch_norm %c1, %bn1_running_mean, %bn1_running_var, %bn1_weight, %bn1_bias epsilon = 1.0e-05
        : tensor<1x8x32x32xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<1x8x32x32xf32>
  %r1 = seg.relu %n1 : tensor<1x8x32x32xf32>
  // torch.chunk(x, C, dim=1) -> C one-channel slices, slice c rolled by c along H.
  %s0 = seg.slice %r1 start = [0, 0, 0, 0] size = [1, 1, 32, 32] step = [1, 1, 1, 1] : tensor<1x8x32x32xf32> -> tensor<1x1x32x32xf32>
  %h0 = seg.roll %s0 shifts = [0] dims = [2] : tensor<1x1x32x32xf32>
  %s1 = seg.slice %r1 start = [0, 1, 0, 0] size = [1, 1, 32, 32] step = [1, 1, 1, 1] : tensor<1x8x32x32xf32> -> tensor<1x1x32x32xf32>
  %h1 = seg.roll %s1 shifts = [1] dims = [2] : tensor<1x1x32x32xf32>
  %s2 = seg.slice %r1 start = [0, 2, 0, 0] size = [1, 1, 32, 32] step = [1, 1, 1, 1] : tensor<1x8x32x32xf32> -> tensor<1x1x32x32xf32>
  %h2 = seg.roll %s2 shifts = [2] dims = [2] : tensor<1x1x32x32xf32>
  %s3 = seg.slice %r1 start = [0, 3, 0, 0] size = [1, 1, 32, 32] step = [1, 1, 1, 1] : tensor<1x8x32x32xf32> -> tensor<1x1x32x32xf32>
  %h3 = seg.roll %s3 shifts = [3] dims = [2] : tensor<1x1x32x32xf32>
  %s4 = seg.slice %r1 start = [0, 4, 0, 0] size = [1, 1, 32, 32] step = [1, 1, 1, 1] : tensor<1x8x32x32xf32> -> tensor<1x1x32x32xf32>
  %h4 = seg.roll %s4 shifts = [4] dims = [2] : tensor<1x1x32x32xf32>
  %s5 = seg.slice %r1 start = [0, 5, 0, 0] size = [1, 1, 32, 32] step = [1, 1, 1, 1] : tensor<1x8x32x32xf32> -> tensor<1x1x32x32xf32>
  %h5 = seg.roll %s5 shifts = [5] dims = [2] : tensor<1x1x32x32xf32>
  %s6 = seg.slice %r1 start = [0, 6, 0, 0] size = [1, 1, 32, 32] step = [1, 1, 1, 1] : tensor<1x8x32x32xf32> -> tensor<1x1x32x32xf32>
  %h6 = seg.roll %s6 shifts = [6] dims = [2] : tensor<1x1x32x32xf32>
  %s7 = seg.slice %r1 start = [0, 7, 0, 0] size = [1, 1, 32, 32] step = [1, 1, 1, 1] : tensor<1x8x32x32xf32> -> tensor<1x1x32x32xf32>
  %h7 = seg.roll %s7 shifts = [7] dims = [2] : tensor<1x1x32x32xf32>
  %cat = seg.concat %h0, %h1, %h2, %h3, %h4, %h5, %h6, %h7 dim = 1
        : tensor<1x1x32x32xf32>, tensor<1x1x32x32xf32>, tensor<1x1x32x32xf32>, tensor<1x1x32x32xf32>, tensor<1x1x32x32xf32>, tensor<1x1x32x32xf32>, tensor<1x1x32x32xf32>, tensor<1x1x32x32xf32> -> tensor<1x8x32x32xf32>
  // x.flatten(2).transpose(1, 2): NCHW -> tokens (B, N, C).
  %flat = seg.reshape %cat : tensor<1x8x32x32xf32> -> tensor<1x8x1024xf32>
  %tok = seg.permute %flat dims = [0, 2, 1] : tensor<1x8x1024xf32> -> tensor<1x1024x8xf32>
  %fc_w = seg.param "fc1.weight" : tensor<8x8xf32>
  %fc_b = seg.param "fc1.bias" : tensor<8xf32>
  %lin = seg.linear %tok, %fc_w, %fc_b : tensor<1x1024x8xf32>, tensor<8x8xf32>, tensor<8xf32> -> tensor<1x1024x8xf32>
  %act = seg.gelu %lin : tensor<1x1024x8xf32>
  %back = seg.permute %act dims = [0, 2, 1] : tensor<1x1024x8xf32> -> tensor<1x8x1024xf32>
  %y = seg.reshape %back : tensor<1x8x1024xf32> -> tensor<1x8x32x32xf32>
  return %y : tensor<1x8x32x32xf32>
}
