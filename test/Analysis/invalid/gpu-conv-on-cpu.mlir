// RUN: gpuopt-opt %s --seg-cost-report="device=cpu gpu-conv=generated" -verify-diagnostics -o /dev/null

// The routes are gpuopt-compile --target=cuda's: a CPU device has none.
// expected-error @+1 {{seg-cost-report: gpu-conv=generated needs a GPU; 'cpu' is a cpu (use gpu-conv=model)}}
func.func @negative_gpu_conv_on_cpu(%x: tensor<1x8xf32>) -> tensor<1x8xf32> {
  %y = seg.relu %x : tensor<1x8xf32>
  return %y : tensor<1x8xf32>
}
