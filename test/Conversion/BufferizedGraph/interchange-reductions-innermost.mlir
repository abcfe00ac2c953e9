// RUN: gpuopt-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(interchange-reductions-innermost))' | FileCheck %s

// A sum over the middle dim of (M, K, I), iterated (m, k, i): the
// reduction dim moves innermost, the maps follow, the body is unchanged.
// CHECK-DAG: #[[X:.*]] = affine_map<(d0, d1, d2) -> (d0, d2, d1)>
// CHECK-DAG: #[[S:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @middle_sum
// CHECK: linalg.generic {indexing_maps = [#[[X]], #[[S]]], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK-SAME: ins(%{{.*}} : tensor<2x8x3xf32>) outs(%{{.*}} : tensor<2x3xf32>)
// CHECK: arith.addf
func.func @middle_sum(%x: tensor<2x8x3xf32>, %z: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %s = linalg.generic {indexing_maps = [affine_map<(m, k, i) -> (m, k, i)>, affine_map<(m, k, i) -> (m, i)>],
                       iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x : tensor<2x8x3xf32>) outs(%z : tensor<2x3xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %acc, %a : f32
    linalg.yield %r : f32
  } -> tensor<2x3xf32>
  return %s : tensor<2x3xf32>
}

// -----

// Reductions already innermost (a matmul-like contraction) and purely
// parallel generics are left as they are.
// CHECK-LABEL: func.func @negative_already_innermost
// CHECK: iterator_types = ["parallel", "parallel", "reduction"]
// CHECK-SAME: ins(%{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<8x5xf32>)
func.func @negative_already_innermost(%a: tensor<4x8xf32>, %b: tensor<8x5xf32>, %c: tensor<4x5xf32>) -> tensor<4x5xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (k, j)>, affine_map<(i, j, k) -> (i, j)>],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<4x8xf32>, tensor<8x5xf32>) outs(%c : tensor<4x5xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x5xf32>
  return %r : tensor<4x5xf32>
}
