// RUN: gpuopt-opt %s --convert-seg-to-linalg | FileCheck %s

// A linear layer of 0 input features: 4 rows (the dims before the last),
// 8 outputs, no terms: the zero fill, a contraction of no steps, the bias.
// (Its rows were once counted as elements / K: a division by zero.)
// CHECK-LABEL: func.func @linear_empty_reduction
// CHECK: tensor.expand_shape %{{.*}} : tensor<0xf32> into tensor<4x0xf32>
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<4x8xf32>)
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]{{.*}} ins(%{{.*}}, %{{.*}} : tensor<4x0xf32>, tensor<8x0xf32>) outs(%{{.*}} : tensor<4x8xf32>)
// CHECK: arith.addf
// CHECK: tensor.expand_shape {{.*}} output_shape [1, 4, 8]
func.func @linear_empty_reduction(%t: tensor<1x4x0xf32>, %w: tensor<8x0xf32>, %b: tensor<8xf32>) -> tensor<1x4x8xf32> {
  %y = seg.linear %t, %w, %b : tensor<1x4x0xf32>, tensor<8x0xf32>, tensor<8xf32> -> tensor<1x4x8xf32>
  return %y : tensor<1x4x8xf32>
}
