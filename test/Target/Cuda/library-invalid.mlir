// RUN: not gpuopt-compile %s --target=cuda --cuda-format=ptx --gpu-conv=library -o %t 2>&1 | FileCheck %s

// A Library step's operands are static views of plan buffers; a linear
// layer's rows must be unit-stride (cuBLASLt's row-major matrices): a
// column-strided slice as its input is an error located at the op.
// CHECK: library-invalid.mlir:[[#@LINE+4]]:8: error: 'func.call' op passes operand 1 of library routine 'linear' as a view the CUDA launch plan cannot express: its rows must have unit stride, got 'memref<4x8xf32, strided<[16, 2]>>'
func.func @forward(%x: tensor<4x16xf32>) -> tensor<4x6xf32> {
  %w = seg.param "fc.weight" : tensor<6x8xf32>
  %s = tensor.extract_slice %x[0, 0] [4, 8] [1, 2] : tensor<4x16xf32> to tensor<4x8xf32>
  %y = seg.linear %s, %w : tensor<4x8xf32>, tensor<6x8xf32> -> tensor<4x6xf32>
  return %y : tensor<4x6xf32>
}
