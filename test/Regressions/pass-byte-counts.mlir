// RUN: gpuopt-opt %s -split-input-file -verify-diagnostics -o /dev/null

// Fuzzing regression: --fuse-roll's count of the bytes that data movement ops
// touch overflowed int64 on huge shapes (it saturates now). Such shapes are
// no longer valid at all: a tensor holds at most 2^40 bytes
// (test/Regressions/tensor-size-limit.mlir), where no byte count overflows.

func.func @huge_roll(%x: tensor<2305843009213693952x3xf32>) -> tensor<2305843009213693952x3xf32> {
  // expected-error @+1 {{operand #0 of type 'tensor<2305843009213693952x3xf32>' exceeds the limit}}
  %y = seg.roll %x shifts = [1] dims = [1] : tensor<2305843009213693952x3xf32>
  return %y : tensor<2305843009213693952x3xf32>
}

// -----

func.func @huge_slice(%x: tensor<4611686018427387904x4xf32>) -> tensor<4611686018427387904x2xf32> {
  // expected-error @+1 {{operand #0 of type 'tensor<4611686018427387904x4xf32>' exceeds the limit}}
  %y = seg.slice %x start = [0, 1] size = [4611686018427387904, 2] step = [1, 1]
       : tensor<4611686018427387904x4xf32> -> tensor<4611686018427387904x2xf32>
  return %y : tensor<4611686018427387904x2xf32>
}
