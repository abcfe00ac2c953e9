// RUN: gpuopt-opt %s --seg-cost-report="devices=/dev/zero" -verify-diagnostics -o /dev/null

// A character device (or a FIFO) would be read without end.
// expected-error @+1 {{seg-cost-report: device file '/dev/zero': cannot read it: not a regular file}}
func.func @negative_device_file_not_regular(%x: tensor<1x8xf32>) -> tensor<1x8xf32> {
  %y = seg.relu %x : tensor<1x8xf32>
  return %y : tensor<1x8xf32>
}
