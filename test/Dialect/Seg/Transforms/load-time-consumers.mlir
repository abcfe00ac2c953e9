// One definition of load-time work (include/gpuopt/Dialect/Seg/Transforms/
// LoadTime.h): the split, the cost report and the CUDA plan agree on a graph
// with two BatchNorm folds, one of parameters only (load-time) and one of a
// runtime input (per inference). test/Target/Cuda/load-time.mlir compiles
// the same graph for CUDA; test/python/test_load_time.py runs it with the
// reference interpreter and the CPU JIT against PyTorch.

// RUN: gpuopt-opt %s --seg-split-load-time | FileCheck %s --check-prefix=SPLIT
// RUN: gpuopt-opt %s --seg-cost-report="devices=%S/../../../Analysis/Inputs/devices.json device=unit format=json" -o /dev/null | FileCheck %s --check-prefix=COST

// SPLIT-LABEL: func.func @forward_init()
// SPLIT-SAME: -> (tensor<4x3x3x3xf32>, tensor<4xf32>)
// SPLIT: seg.param "conv1.weight"
// SPLIT: seg.fold_batch_norm
// SPLIT-NOT: seg.fold_batch_norm
// SPLIT: return
// SPLIT-LABEL: func.func @forward
// SPLIT-SAME: (%[[X:.*]]: tensor<1x3x8x8xf32>, %[[W:.*]]: tensor<4x3x3x3xf32>, %[[DW:.*]]: tensor<4x3x3x3xf32> {seg.derived = 0 : i64}, %[[DB:.*]]: tensor<4xf32> {seg.derived = 1 : i64})
// SPLIT-NOT: seg.param "conv1.
// SPLIT: seg.conv2d %[[X]], %[[DW]], %[[DB]]
// SPLIT: seg.fold_batch_norm %[[W]] bias
// SPLIT-NOT: seg.fold_batch_norm

// The fold of parameters costs nothing per inference; the fold of the
// runtime weight %w is per-inference work. Its FLOPs: 108 weight products
// and 6 per channel (4 channels) = 132. Compiled: one kernel reading 432 + 5
// vectors of 16 B and writing 432 + 16 B = 960 B. Eager (PyTorch's
// fuse_conv_bn_weights): six kernels over the channels (32, 32, 48, 48, 48,
// 48 B) and the weight scaling (2·432 + 16 B) = 1136 B. Its parameter
// operands: the bias and the statistics, 5·4 = 20 values.
// COST-LABEL: "name": "forward"
// COST: "name":"seg.fold_batch_norm"{{.*}}"load_time":true,{{.*}}"eager":{"kernels":0,{{.*}}"compiled":{"kernels":0,
// COST: "name":"seg.conv2d"{{.*}}"params":112,"load_time":false,
// COST: "name":"seg.fold_batch_norm"{{.*}}"flops":132,"params":20,"load_time":false,"modeled":true,{{.*}}"eager":{"kernels":7,"flops":132,"bytes":1136,{{.*}}"compute_s":0,"memory_s":1136,{{.*}}"compiled":{"kernels":1,"flops":132,"bytes":960,{{.*}}"memory_s":960,
// COST: "name":"seg.conv2d"{{.*}}"params":0,"load_time":false,
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
