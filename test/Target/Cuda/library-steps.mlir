// REQUIRES: cuda-runtime
// RUN: gpuopt-compile %s --target=cuda --cuda-format=ptx --pipeline=gpuopt-optimize --gpu-conv=library --gpu-precision=tf32 -o %t.gpuopt
// RUN: gpuopt-cuda-run %t.gpuopt --inspect | FileCheck %s --check-prefix=INSPECT
// RUN: gpuopt-cuda-run %t.gpuopt --dump | FileCheck %s --check-prefix=DUMP
// RUN: gpuopt-compile %s --target=cuda --cuda-format=ptx --pipeline=gpuopt-optimize -o %t.generated.gpuopt
// RUN: gpuopt-cuda-run %t.generated.gpuopt --dump | FileCheck %s --check-prefix=GENERATED

// --gpu-conv=library: the Conv-BN-ReLU (its BatchNorm folded at load time),
// the transposed convolution and the linear layer are Library steps; the
// GELU stays a generated kernel. The folded weight is a constant buffer
// written by the init launches.
// INSPECT: buffers: 1 input, 1 output, 9 param, {{[1-9][0-9]*}} constant
// INSPECT: launches: {{[1-9][0-9]*}} at load time, 4 per forward
func.func @forward(%x: tensor<1x3x8x8xf32>) -> tensor<1x2x16x5xf32> {
  %w = seg.param "conv.weight" : tensor<4x3x3x3xf32>
  %b = seg.param "conv.bias" : tensor<4xf32>
  %m = seg.param "bn.running_mean" : tensor<4xf32>
  %v = seg.param "bn.running_var" : tensor<4xf32>
  %g = seg.param "bn.weight" : tensor<4xf32>
  %be = seg.param "bn.bias" : tensor<4xf32>
  %wt = seg.param "up.weight" : tensor<4x2x2x2xf32>
  %wl = seg.param "fc.weight" : tensor<5x16xf32>
  %bl = seg.param "fc.bias" : tensor<5xf32>
  %y = seg.conv2d %x, %w, %b stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 1 : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32> -> tensor<1x4x8x8xf32>
  %n = seg.batch_norm %y, %m, %v, %g, %be epsilon = 1.0e-05 : tensor<1x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<1x4x8x8xf32>
  %r = seg.relu %n : tensor<1x4x8x8xf32>
  %t = seg.conv_transpose2d %r, %wt stride = [2, 2] padding = [0, 0] output_padding = [0, 0] dilation = [1, 1] groups = 1 : tensor<1x4x8x8xf32>, tensor<4x2x2x2xf32> -> tensor<1x2x16x16xf32>
  %l = seg.linear %t, %wl, %bl : tensor<1x2x16x16xf32>, tensor<5x16xf32>, tensor<5xf32> -> tensor<1x2x16x5xf32>
  %o = seg.gelu %l : tensor<1x2x16x5xf32>
  return %o : tensor<1x2x16x5xf32>
}

// The first forward step, field by field: the convolution with bias and
// ReLU. Operand 0 is the output, 1 the input, 2 the folded weight (dense),
// 3 the folded bias, 4 the input again (no residual), 5-7 the empty shift
// operands (no buffer); the scalars stride, padding, dilation, groups,
// frames, flags (bias) and activation (relu); args the distinct buffers.
// DUMP:      "run": [
// DUMP-NEXT:   {
// DUMP-NEXT:     "kind": "Library",
// DUMP:          "args": [
// DUMP-NEXT:       [[OUT:[0-9]+]],
// DUMP-NEXT:       [[IN:[0-9]+]],
// DUMP-NEXT:       [[W:[0-9]+]],
// DUMP-NEXT:       [[B:[0-9]+]]
// DUMP-NEXT:     ],
// DUMP-NEXT:     "loc": "{{.*}}library-steps.mlir:[[#@LINE-21]]:{{[0-9]+}}",
// DUMP-NEXT:     "library": "conv2d",
// DUMP:          "operands": [
// DUMP-NEXT:       {
// DUMP-NEXT:         "buffer": [[OUT]],
// DUMP-NEXT:         "offset": 0,
// DUMP-NEXT:         "sizes": [
// DUMP-NEXT:           1,
// DUMP-NEXT:           4,
// DUMP-NEXT:           8,
// DUMP-NEXT:           8
// DUMP-NEXT:         ],
// DUMP-NEXT:         "strides": [
// DUMP-NEXT:           256,
// DUMP-NEXT:           64,
// DUMP-NEXT:           8,
// DUMP-NEXT:           1
// DUMP-NEXT:         ]
// DUMP-NEXT:       },
// DUMP-NEXT:       {
// DUMP-NEXT:         "buffer": [[IN]],
// DUMP:              "buffer": [[W]],
// DUMP-NEXT:         "offset": 0,
// DUMP-NEXT:         "sizes": [
// DUMP-NEXT:           4,
// DUMP-NEXT:           3,
// DUMP-NEXT:           3,
// DUMP-NEXT:           3
// DUMP-NEXT:         ],
// DUMP-NEXT:         "strides": [
// DUMP-NEXT:           27,
// DUMP-NEXT:           9,
// DUMP-NEXT:           3,
// DUMP-NEXT:           1
// DUMP-NEXT:         ]
// DUMP:              "buffer": [[B]],
// DUMP:              "buffer": [[IN]],
// DUMP-COUNT-3:      "sizes": [
// DUMP-NEXT:           0
// DUMP-NEXT:         ],
// DUMP:          "scalars": [
// DUMP-NEXT:       1,
// DUMP-NEXT:       1,
// DUMP-NEXT:       1,
// DUMP-NEXT:       1,
// DUMP-NEXT:       1,
// DUMP-NEXT:       1,
// DUMP-NEXT:       1,
// DUMP-NEXT:       0,
// DUMP-NEXT:       1,
// DUMP-NEXT:       1
// DUMP-NEXT:     ]
// DUMP-NEXT:   },
// Then the transposed convolution (bias absent: hasBias 0), the linear layer
// on the rows of its collapsed input (hasBias 1) and the GELU kernel.
// DUMP-NEXT:   {
// DUMP-NEXT:     "kind": "Library",
// DUMP:          "library": "conv_transpose2d",
// DUMP:          "scalars": [
// DUMP-NEXT:       0
// DUMP-NEXT:     ]
// DUMP:          "kind": "Library",
// DUMP:          "library": "linear",
// DUMP:          "sizes": [
// DUMP-NEXT:           32,
// DUMP-NEXT:           5
// DUMP:          "scalars": [
// DUMP-NEXT:       1
// DUMP-NEXT:     ]
// DUMP:          "kind": "Kernel",
// DUMP:        "precision": "TF32"

// Without --gpu-conv=library: kernels only, FP32.
// GENERATED-NOT: "kind": "Library"
// GENERATED:     "precision": "FP32"
// GENERATED-NOT: "kind": "Library"
