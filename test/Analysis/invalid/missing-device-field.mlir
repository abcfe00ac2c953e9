// RUN: gpuopt-opt %s --seg-cost-report="devices=%S/../Inputs/devices.json device=no_bandwidth" -verify-diagnostics -o /dev/null

// expected-error-re @+1 {{seg-cost-report: device file '{{.*}}devices.json': device 'no_bandwidth': missing 'bandwidth'}}
func.func @negative_missing_device_field(%x: tensor<1x8xf32>) -> tensor<1x8xf32> {
  %y = seg.relu %x : tensor<1x8xf32>
  return %y : tensor<1x8xf32>
}
