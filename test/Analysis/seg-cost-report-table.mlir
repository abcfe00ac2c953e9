// RUN: gpuopt-opt %s --seg-cost-report="devices=%S/Inputs/devices.json device=unit top=1" | FileCheck %s
// RUN: gpuopt-opt %s --seg-cost-report="devices=%S/Inputs/devices.json device=unit top=1 sort=compiled" -o /dev/null | FileCheck %s --check-prefix=COMPILED
// RUN: gpuopt-opt %s --seg-cost-report="devices=%S/Inputs/devices.json device=unit output=%t.txt" | FileCheck %s --check-prefix=IR
// RUN: FileCheck %s --check-prefix=FILE < %t.txt

// On the "unit" device (1 FLOP/s, 1 B/s, launches 1000 s compiled and
// 10000 s eager) the convolution takes 1728 + 396 + 2·10000 s eager and
// 1776 + 1000 s compiled (see seg-cost-report.mlir); the ReLU of 625 elements
// moves 5000 B: 5000 + 10000 s eager, 5000 + 1000 s compiled. The ms columns
// are seconds × 1000.

// The table comes first, then the unchanged IR.
// CHECK-LABEL: === seg-cost-report: @table on unit (1 FLOP/s, 1 B/s), batch 1
// CHECK: params: 57 learned, 0 BatchNorm statistics
// CHECK: kernels{{ +}}3{{ +}}2
// CHECK: compute-bound time (ms){{ +}}1728000.000{{ +}}1776000.000
// CHECK: memory-bound time (ms){{ +}}5396000.000{{ +}}5000000.000
// CHECK: launch time (ms){{ +}}30000000.000{{ +}}2000000.000
// CHECK: predicted latency (ms){{ +}}37124000.000{{ +}}8776000.000
// CHECK: bound{{ +}}launch{{ +}}memory
// CHECK: per op kind (per inference; load-time ops omitted), by eager time:
// CHECK-NEXT: op
// CHECK-NEXT: seg.conv2d{{ +}}1{{ +}}2/1{{.*}}22124000.000{{ +}}2776000.000
// CHECK-NEXT: seg.relu{{ +}}1{{ +}}1/1{{.*}}15000000.000{{ +}}6000000.000
// CHECK: top 1 ops by eager time:
// CHECK-NEXT: #
// CHECK-NEXT: 2{{ +}}seg.conv2d{{ +}}tensor<1x3x4x4xf32>{{ +}}2/1{{.*}}22124000.000{{ +}}2776000.000{{ +}}launch  seg-cost-report-table.mlir:[[@LINE+19]]:8
// CHECK-NOT: seg.relu
// CHECK: func.func @table

// COMPILED: per op kind (per inference; load-time ops omitted), by compiled time:
// COMPILED-NEXT: op
// COMPILED-NEXT: seg.relu
// COMPILED: top 1 ops by compiled time:
// COMPILED-NEXT: #
// COMPILED-NEXT: 3{{ +}}seg.relu{{ +}}tensor<1x1x25x25xf32>{{ +}}1/1{{.*}}15000000.000{{ +}}6000000.000{{ +}}memory

// With an output file, stdout has only the IR.
// IR-NOT: seg-cost-report
// IR: func.func @table
// FILE: === seg-cost-report: @table on unit
// FILE: top 4 ops by eager time:
func.func @table(%x: tensor<1x2x4x4xf32>, %z: tensor<1x1x25x25xf32>) -> (tensor<1x3x4x4xf32>, tensor<1x1x25x25xf32>) {
  %w = seg.param "w" : tensor<3x2x3x3xf32>
  %b = seg.param "b" : tensor<3xf32>
  %y = seg.conv2d %x, %w, %b stride = [1, 1] padding = [1, 1] dilation = [1, 1] groups = 1
       : tensor<1x2x4x4xf32>, tensor<3x2x3x3xf32>, tensor<3xf32> -> tensor<1x3x4x4xf32>
  %r = seg.relu %z : tensor<1x1x25x25xf32>
  return %y, %r : tensor<1x3x4x4xf32>, tensor<1x1x25x25xf32>
}
