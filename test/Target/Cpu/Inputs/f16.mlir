// A graph on f16 tensors, which the CPU target does not compile.
func.func @forward(%x: tensor<4xf16>) -> tensor<4xf16> {
  %y = seg.relu %x : tensor<4xf16>
  return %y : tensor<4xf16>
}
