// RUN: gpuopt-opt %s --seg-cost-report="device=h200 gpu-conv=generated workgroup-tile-max-thread-outputs=2" -verify-diagnostics -o /dev/null

// expected-error @+1 {{seg-cost-report: workgroup-tile-max-thread-outputs must be at least 4, got 2}}
func.func @negative_bad_max_thread_outputs(%x: tensor<1x8xf32>) -> tensor<1x8xf32> {
  %y = seg.relu %x : tensor<1x8xf32>
  return %y : tensor<1x8xf32>
}
