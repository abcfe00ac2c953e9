// RUN: cp %s %t.mlir
// RUN: not gpuopt-opt %t.mlir --seg-cost-report="device=h200 output=%t.mlir" -o /dev/null 2>&1 | FileCheck %s
// RUN: FileCheck %s --check-prefix=INTACT < %t.mlir

// The report would replace the graph it reports on.
// CHECK: error: seg-cost-report: output '{{.*}}.mlir' is the input {{.*}}.mlir; refusing to overwrite an input
// INTACT: func.func @negative_output_is_input
func.func @negative_output_is_input(%x: tensor<1x8xf32>) -> tensor<1x8xf32> {
  %y = seg.relu %x : tensor<1x8xf32>
  return %y : tensor<1x8xf32>
}
