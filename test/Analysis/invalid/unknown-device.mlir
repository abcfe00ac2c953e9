// RUN: gpuopt-opt %s --seg-cost-report="devices=%S/../Inputs/devices.json device=nope" -verify-diagnostics -o /dev/null

// expected-error-re @+1 {{seg-cost-report: device file '{{.*}}devices.json': unknown device 'nope'; known devices: bad_efficiency, bad_generated_efficiency, no_bandwidth, routes, tiles, unit}}
func.func @negative_unknown_device(%x: tensor<1x8xf32>) -> tensor<1x8xf32> {
  %y = seg.relu %x : tensor<1x8xf32>
  return %y : tensor<1x8xf32>
}
