// A graph that does not parse (gpuopt-compile-errors.mlir).
func.func @forward(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = seg.no_such_op %x : tensor<4xf32>
  return %y : tensor<4xf32>
}
