// RUN: gpuopt-opt %s --seg-cost-report="devices=%S/../Inputs/devices.json device=unit" -verify-diagnostics -o /dev/null

// The "unit" device has an fp32 peak only; the error points at the op.
func.func @negative_missing_precision(%x: tensor<1x8xf16>) -> tensor<1x8xf16> {
  // expected-error-re @+1 {{seg-cost-report: device 'unit' in '{{.*}}devices.json' has no peak for 'fp16' (add it to 'peak_flops' or pass precision=...)}}
  %y = seg.relu %x : tensor<1x8xf16>
  return %y : tensor<1x8xf16>
}
