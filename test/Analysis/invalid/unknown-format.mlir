// RUN: gpuopt-opt %s --seg-cost-report="format=csv" -verify-diagnostics -o /dev/null

// expected-error @+1 {{seg-cost-report: unknown format 'csv' (expected 'table' or 'json')}}
func.func @negative_unknown_format(%x: tensor<1x8xf32>) -> tensor<1x8xf32> {
  %y = seg.relu %x : tensor<1x8xf32>
  return %y : tensor<1x8xf32>
}
