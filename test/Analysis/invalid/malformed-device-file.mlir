// RUN: echo '{"devices": {"unit": }}' > %t.json
// RUN: gpuopt-opt %s --seg-cost-report="devices=%t.json device=unit" -verify-diagnostics -o /dev/null

// The JSON error names the line and column.
// expected-error-re @+1 {{seg-cost-report: device file '{{.*}}.json': malformed JSON at [1:22, byte=22]: Invalid JSON value}}
func.func @negative_malformed_device_file(%x: tensor<1x8xf32>) -> tensor<1x8xf32> {
  %y = seg.relu %x : tensor<1x8xf32>
  return %y : tensor<1x8xf32>
}
