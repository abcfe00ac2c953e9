func.func @forward(%x: tensor<1x0x4x4xf32>, %y: tensor<1x0x4x4xf32>) -> tensor<1x0x4x4xf32> {
  %c = seg.concat %x, %y dim = 1 : tensor<1x0x4x4xf32>, tensor<1x0x4x4xf32> -> tensor<1x0x4x4xf32>
  return %c : tensor<1x0x4x4xf32>
}
