// RUN: gpuopt-opt %s --seg-cost-report="devices=%t.does-not-exist.json" -verify-diagnostics -o /dev/null

// expected-error-re @+1 {{seg-cost-report: device file '{{.*}}does-not-exist.json': cannot read it: No such file or directory}}
func.func @negative_missing_device_file(%x: tensor<1x8xf32>) -> tensor<1x8xf32> {
  %y = seg.relu %x : tensor<1x8xf32>
  return %y : tensor<1x8xf32>
}
