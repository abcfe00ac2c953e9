// A graph calling a function that nothing defines: refused before lowering
// (--seg-verify-lowerable), not left to the link step.
func.func private @not_in_the_runtime(memref<4xf32>)
func.func @forward(%x: tensor<4xf32>) -> tensor<4xf32> {
  %m = bufferization.to_buffer %x : tensor<4xf32> to memref<4xf32>
  func.call @not_in_the_runtime(%m) : (memref<4xf32>) -> ()
  return %x : tensor<4xf32>
}
