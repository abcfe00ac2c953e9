// RUN: gpuopt-opt %s --seg-cost-report="devices=%S/../Inputs/devices.json device=unit output=%t.no-such-dir/report.txt" -verify-diagnostics -o /dev/null

// expected-error-re @+1 {{seg-cost-report: cannot open output file '{{.*}}report.txt': No such file or directory}}
func.func @negative_unwritable_output(%x: tensor<1x8xf32>) -> tensor<1x8xf32> {
  %y = seg.relu %x : tensor<1x8xf32>
  return %y : tensor<1x8xf32>
}
