// A graph returning f16, which the CPU target does not compile.
func.func @forward(%x: tensor<4xf32>) -> tensor<4xf16> {
  %y = arith.truncf %x : tensor<4xf32> to tensor<4xf16>
  return %y : tensor<4xf16>
}
