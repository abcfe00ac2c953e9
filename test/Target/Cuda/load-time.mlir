// REQUIRES: ptxas, cuda-runtime
// RUN: gpuopt-compile %s --target=cuda --cuda-format=ptx -o %t.gpuopt
// RUN: gpuopt-cuda-run %t.gpuopt --dump | %python %S/Inputs/dump_steps.py | FileCheck %s
// RUN: gpuopt-cuda-run %t.gpuopt --dump | %python %S/Inputs/dump_steps.py | FileCheck %s --check-prefix=RUNS

// The CUDA plan's load-time steps are the launches of --seg-split-load-time's
// @forward_init (LoadTime.h), no other classification: the fold of
// parameters (weight and bias: two launches) runs once at load and writes
// persistent ("constant") buffers; the fold of the runtime weight %w runs
// per forward. Same graph as test/Dialect/Seg/Transforms/
// load-time-consumers.mlir (split and cost report).
// CHECK: init [[#FOLD1:@LINE+19]] param,param,param,constant
// CHECK-NEXT: init [[#FOLD1]] param,param,param,param,param,constant
// CHECK-NOT: init
// CHECK: run [[#FOLD1+2]] input,param,param,temp
// CHECK-NOT: init
// No forward launch is the fold of parameters:
// RUNS-NOT: {{^}}run [[#@LINE+13]]{{ }}
func.func @forward(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32> {
  %w1 = seg.param "conv1.weight" : tensor<4x3x3x3xf32>
  %b1 = seg.param "conv1.bias" : tensor<4xf32>
  %m1 = seg.param "bn1.running_mean" : tensor<4xf32>
  %v1 = seg.param "bn1.running_var" : tensor<4xf32>
  %g1 = seg.param "bn1.weight" : tensor<4xf32>
  %be1 = seg.param "bn1.bias" : tensor<4xf32>
  %b2 = seg.param "conv2.bias" : tensor<4xf32>
  %m2 = seg.param "bn2.running_mean" : tensor<4xf32>
  %v2 = seg.param "bn2.running_var" : tensor<4xf32>
  %g2 = seg.param "bn2.weight" : tensor<4xf32>
  %be2 = seg.param "bn2.bias" : tensor<4xf32>
  %fw1, %fb1 = seg.fold_batch_norm %w1 bias %b1, %m1, %v1, %g1, %be1 epsilon = 1.0e-05 : (tensor<4x3x3x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<4x3x3x3xf32>, tensor<4xf32>)
  %y1 = seg.conv2d %x, %fw1, %fb1 stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 1 : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32> -> tensor<1x4x8x8xf32>
  %fw2, %fb2 = seg.fold_batch_norm %w bias %b2, %m2, %v2, %g2, %be2 epsilon = 1.0e-05 : (tensor<4x3x3x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<4x3x3x3xf32>, tensor<4xf32>)
  %y2 = seg.conv2d %x, %fw2, %fb2 stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 1 : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32> -> tensor<1x4x8x8xf32>
  %r = seg.add %y1, %y2 : tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32> -> tensor<1x4x8x8xf32>
  return %r : tensor<1x4x8x8xf32>
}
