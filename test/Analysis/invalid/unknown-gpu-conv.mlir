// RUN: gpuopt-opt %s --seg-cost-report="device=h200 gpu-conv=cudnn" -verify-diagnostics -o /dev/null

// expected-error @+1 {{seg-cost-report: unknown gpu-conv 'cudnn' (expected 'model', 'generated', 'library' or 'auto')}}
func.func @negative_unknown_gpu_conv(%x: tensor<1x8xf32>) -> tensor<1x8xf32> {
  %y = seg.relu %x : tensor<1x8xf32>
  return %y : tensor<1x8xf32>
}
