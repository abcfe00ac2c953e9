func.func @forward(%t: tensor<1x4x3xf32>) -> tensor<1x4x8xf32> {
  %w = seg.param "w" : tensor<8x3xf32>
  %e = seg.param "e" : tensor<1x4x0xf32>
  %z = seg.param "z" : tensor<8x0xf32>
  %y = seg.linear %t, %w : tensor<1x4x3xf32>, tensor<8x3xf32> -> tensor<1x4x8xf32>
  %k = seg.linear %e, %z : tensor<1x4x0xf32>, tensor<8x0xf32> -> tensor<1x4x8xf32>
  %s = seg.add %y, %k : tensor<1x4x8xf32>, tensor<1x4x8xf32> -> tensor<1x4x8xf32>
  return %s : tensor<1x4x8xf32>
}
