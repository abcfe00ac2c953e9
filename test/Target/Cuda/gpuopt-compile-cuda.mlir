// REQUIRES: ptxas, cuda-runtime
// RUN: gpuopt-compile %s --target=cuda --cuda-arch=sm_90,sm_86 --pipeline=gpuopt-optimize -o %t.sm90.gpuopt
// RUN: gpuopt-cuda-run %t.sm90.gpuopt --inspect | FileCheck %s --check-prefix=SM90
// RUN: gpuopt-compile %s --target=cuda --cuda-arch=sm_86 --cuda-format=ptx -o %t.ptx.gpuopt
// RUN: gpuopt-cuda-run %t.ptx.gpuopt --inspect | FileCheck %s --check-prefix=PTX

// One artifact for two chips: a fatbin (cubin and PTX) each.
// After --gpuopt-optimize the BatchNorm is folded into the convolution's
// weights by a load-time computation: its kernel runs once at load time
// and writes "constant" buffers; the forward launches read them.
// SM90: entry forward, {{[0-9]+}} kernels; images: fatbin sm_90 ({{[0-9]+}} bytes) fatbin sm_86 ({{[0-9]+}} bytes)
// SM90: buffers: 1 input, 1 output, 6 param, {{[1-9][0-9]*}} constant
// SM90: launches: {{[1-9][0-9]*}} at load time, {{[1-9][0-9]*}} per forward

// Without the optimization the BatchNorm runs in the forward pass.
// PTX: entry forward, {{[0-9]+}} kernels; images: ptx sm_86 ({{[0-9]+}} bytes)
// PTX: buffers: 1 input, 1 output, 6 param, 0 constant
// PTX: launches: 0 at load time, {{[1-9][0-9]*}} per forward
func.func @forward(%x: tensor<1x3x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %w = seg.param "conv.weight" : tensor<4x3x3x3xf32>
  %b = seg.param "conv.bias" : tensor<4xf32>
  %m = seg.param "bn.running_mean" : tensor<4xf32>
  %v = seg.param "bn.running_var" : tensor<4xf32>
  %g = seg.param "bn.weight" : tensor<4xf32>
  %be = seg.param "bn.bias" : tensor<4xf32>
  %y = seg.conv2d %x, %w, %b stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 1 : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32> -> tensor<1x4x8x8xf32>
  %n = seg.batch_norm %y, %m, %v, %g, %be epsilon = 1.0e-05 : tensor<1x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<1x4x8x8xf32>
  %r = seg.relu %n : tensor<1x4x8x8xf32>
  return %r : tensor<1x4x8x8xf32>
}
