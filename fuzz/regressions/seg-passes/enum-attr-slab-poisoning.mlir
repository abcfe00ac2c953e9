func.func @conv_bn_maxpool_relu(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %v: tensor<4xf32>) -> tensor<1x4x4x4xf32> {
  %c = seg.conv2d %x, %w, %v stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 1 : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32> -> tensor<1x4x8x8xf32>
  %n = seg.batch_norm %c, %v, %v, %v, %v epsilon = 1.0e-05 : tensor<1x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<1x4x8x8xf32>
  %p = seg.max_pool2d %n kernel = [2, 2] stride = [2, 2] padding = [0, 0] dilation = [1, 1] ceil_mode = false : tensor<1x4x8x8xf32> -> tensor<1x4x4x4xf32>
  %r = seg.relu %p : tensor<1x4x4x4xf32>
  return %r : tensor<1x4x4x4xf32>
}
