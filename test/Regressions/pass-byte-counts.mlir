// RUN: gpuopt-opt %s -split-input-file --fuse-roll=report=true -verify-diagnostics -o /dev/null
// RUN: gpuopt-opt %s -split-input-file --gpuopt-optimize --verify-each -o /dev/null

// Fuzzing regression: --fuse-roll's count of the bytes that data movement ops
// touch overflowed int64 on huge (but valid) shapes; it saturates now. The
// ASan/UBSan build (make check-asan) turns a relapse into a failure.

// expected-remark @below {{fuse-roll: 0 seg.roll removed, 0 shifts fused, 0 seg.channel_shift left, 0 bytes no longer moved}}
func.func @huge_roll(%x: tensor<2305843009213693952x3xf32>) -> tensor<2305843009213693952x3xf32> {
  %y = seg.roll %x shifts = [1] dims = [1] : tensor<2305843009213693952x3xf32>
  return %y : tensor<2305843009213693952x3xf32>
}

// -----

// expected-remark @below {{fuse-roll: 0 seg.roll removed, 0 shifts fused, 0 seg.channel_shift left, 0 bytes no longer moved}}
func.func @huge_slice(%x: tensor<4611686018427387904x4xf32>) -> tensor<4611686018427387904x2xf32> {
  %y = seg.slice %x start = [0, 1] size = [4611686018427387904, 2] step = [1, 1]
       : tensor<4611686018427387904x4xf32> -> tensor<4611686018427387904x2xf32>
  return %y : tensor<4611686018427387904x2xf32>
}
