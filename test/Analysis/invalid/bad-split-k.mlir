// RUN: gpuopt-opt %s --seg-cost-report="device=h200 gpu-conv=generated workgroup-tile-split-k=6" -verify-diagnostics -o /dev/null

// expected-error @+1 {{seg-cost-report: workgroup-tile-split-k must be a power of two, got 6}}
func.func @negative_bad_split_k(%x: tensor<1x8xf32>) -> tensor<1x8xf32> {
  %y = seg.relu %x : tensor<1x8xf32>
  return %y : tensor<1x8xf32>
}
