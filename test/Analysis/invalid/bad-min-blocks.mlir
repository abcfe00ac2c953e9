// RUN: gpuopt-opt %s --seg-cost-report="device=h200 gpu-conv=generated workgroup-tile-min-blocks=0" -verify-diagnostics -o /dev/null

// expected-error @+1 {{seg-cost-report: workgroup-tile-min-blocks must be at least 1, got 0}}
func.func @negative_bad_min_blocks(%x: tensor<1x8xf32>) -> tensor<1x8xf32> {
  %y = seg.relu %x : tensor<1x8xf32>
  return %y : tensor<1x8xf32>
}
