// One parameter name with two shapes, one read at load time and one per
// inference: each function alone is consistent, the model is not.
func.func @forward(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = seg.param "p" : tensor<4xf32>
  %b = seg.param "p" : tensor<2x2xf32>
  %r = seg.reshape %b : tensor<2x2xf32> -> tensor<4xf32>
  %s = seg.add %x, %a : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %y = seg.add %s, %r : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  return %y : tensor<4xf32>
}
