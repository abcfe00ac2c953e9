// RUN: gpuopt-opt %s --seg-cost-report="devices=%S/../Inputs/devices.json device=bad_efficiency" -verify-diagnostics -o /dev/null

// expected-error-re @+1 {{seg-cost-report: device file '{{.*}}devices.json': device 'bad_efficiency': 'compute_efficiency' must be a number > 0 and <= 1}}
func.func @negative_bad_device_value(%x: tensor<1x8xf32>) -> tensor<1x8xf32> {
  %y = seg.relu %x : tensor<1x8xf32>
  return %y : tensor<1x8xf32>
}
