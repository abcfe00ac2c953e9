// RUN: gpuopt-opt %s --seg-cost-report="devices=%S/../Inputs/devices.json device=bad_generated_efficiency" -verify-diagnostics -o /dev/null

// expected-error-re @+1 {{seg-cost-report: device file '{{.*}}devices.json': device 'bad_generated_efficiency': 'generated_compute_efficiency.fp32' must be a number > 0 and <= 1}}
func.func @negative_bad_generated_efficiency(%x: tensor<1x8xf32>) -> tensor<1x8xf32> {
  %y = seg.relu %x : tensor<1x8xf32>
  return %y : tensor<1x8xf32>
}
