// RUN: gpuopt-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(unshare-init-tensors))' | FileCheck %s

// One tensor.empty (the init of the fill and of two ops) and one fill (the
// init of two ops): the first init use of each keeps it, every other one gets
// its own clone, placed right before the op.
// CHECK-LABEL: func.func @shared(
// CHECK-SAME: %[[X:[^:]*]]: tensor<4xf32>
// CHECK: %[[E:.*]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT: %[[F:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E]] : tensor<4xf32>)
// CHECK-NEXT: %[[E1:.*]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT: %[[A:.*]] = linalg.exp ins(%[[X]] : tensor<4xf32>) outs(%[[E1]] : tensor<4xf32>)
// CHECK-NEXT: %[[E2:.*]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT: %[[B:.*]] = linalg.exp ins(%[[A]] : tensor<4xf32>) outs(%[[E2]] : tensor<4xf32>)
// CHECK-NEXT: %[[C:.*]] = linalg.add ins(%[[A]], %[[B]] : tensor<4xf32>, tensor<4xf32>) outs(%[[F]] : tensor<4xf32>)
// CHECK-NEXT: %[[E3:.*]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT: %[[F2:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E3]] : tensor<4xf32>)
// CHECK-NEXT: %[[D:.*]] = linalg.add ins(%[[C]], %[[B]] : tensor<4xf32>, tensor<4xf32>) outs(%[[F2]] : tensor<4xf32>)
func.func @shared(%x: tensor<4xf32>) -> tensor<4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %a = linalg.exp ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %b = linalg.exp ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %c = linalg.add ins(%a, %b : tensor<4xf32>, tensor<4xf32>) outs(%f : tensor<4xf32>) -> tensor<4xf32>
  %d = linalg.add ins(%c, %b : tensor<4xf32>, tensor<4xf32>) outs(%f : tensor<4xf32>) -> tensor<4xf32>
  return %d : tensor<4xf32>
}

// -----

// A shared value used as an input, and a shared init that is neither an
// empty nor a fill of one (a function argument), stay shared; a single use
// is left alone.
// CHECK-LABEL: func.func @negative_not_shared_inits(
// CHECK-SAME: %[[X:[^:]*]]: tensor<4xf32>, %[[Y:[^:]*]]: tensor<4xf32>
// CHECK: %[[E:.*]] = tensor.empty() : tensor<4xf32>
// CHECK-NOT: tensor.empty
// CHECK: linalg.exp ins(%[[E]] : tensor<4xf32>) outs(%[[Y]] : tensor<4xf32>)
// CHECK: linalg.exp ins(%[[E]] : tensor<4xf32>) outs(%[[Y]] : tensor<4xf32>)
// CHECK: linalg.exp ins(%[[X]] : tensor<4xf32>) outs(%[[E]] : tensor<4xf32>)
func.func @negative_not_shared_inits(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %e = tensor.empty() : tensor<4xf32>
  %a = linalg.exp ins(%e : tensor<4xf32>) outs(%y : tensor<4xf32>) -> tensor<4xf32>
  %b = linalg.exp ins(%e : tensor<4xf32>) outs(%y : tensor<4xf32>) -> tensor<4xf32>
  %c = linalg.exp ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %a, %b, %c : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// A reshape of the shared fill is the init (CSE merges the reshapes too):
// the fill, its empty and the reshape are cloned together.
// CHECK-LABEL: func.func @shared_through_a_reshape(
// CHECK: %[[F:.*]] = linalg.fill
// CHECK: %[[V:.*]] = tensor.expand_shape %[[F]]
// CHECK: linalg.exp ins(%{{.*}} : tensor<2x2xf32>) outs(%[[V]] : tensor<2x2xf32>)
// CHECK-NEXT: %[[E1:.*]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT: %[[F1:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E1]] : tensor<4xf32>)
// CHECK-NEXT: %[[V1:.*]] = tensor.expand_shape %[[F1]]
// CHECK-NEXT: linalg.exp ins(%{{.*}} : tensor<2x2xf32>) outs(%[[V1]] : tensor<2x2xf32>)
func.func @shared_through_a_reshape(%x: tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %v = tensor.expand_shape %f [[0, 1]] output_shape [2, 2] : tensor<4xf32> into tensor<2x2xf32>
  %a = linalg.exp ins(%x : tensor<2x2xf32>) outs(%v : tensor<2x2xf32>) -> tensor<2x2xf32>
  %b = linalg.exp ins(%x : tensor<2x2xf32>) outs(%v : tensor<2x2xf32>) -> tensor<2x2xf32>
  return %a, %b : tensor<2x2xf32>, tensor<2x2xf32>
}
