// A diagnostic that names its location is not followed by the operation in
// generic form (MLIR's "see current operation" note: for an error on a module
// or the entry function, the whole network).
//
// A pass failing on the module: gpuopt-opt and gpuopt-compile.
// RUN: not gpuopt-opt %s --pass-pipeline='builtin.module(seg-split-load-time{entry=nope})' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=PASS --implicit-check-not=see --implicit-check-not='"func.func"'
// RUN: not gpuopt-compile %s --pipeline='seg-split-load-time{entry=nope}' -o %t.so 2>&1 \
// RUN:   | FileCheck %s --check-prefix=COMPILE --implicit-check-not=see --implicit-check-not='"func.func"'
// A verifier error: the message alone, not the op.
// RUN: not gpuopt-opt %S/Inputs/conv-bad-groups.mlir 2>&1 \
// RUN:   | FileCheck %s --check-prefix=VERIFY --implicit-check-not=see --implicit-check-not='"seg.conv2d"'
// mlir-opt's behaviour stays available on request (and shows what the checks above would catch).
// RUN: not gpuopt-opt %s --mlir-print-op-on-diagnostic --pass-pipeline='builtin.module(seg-split-load-time{entry=nope})' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=DUMP
// Three lines at most: the message, the source line, the caret.
// RUN: not gpuopt-opt %s --pass-pipeline='builtin.module(seg-split-load-time{entry=nope})' 2>&1 | wc -l \
// RUN:   | FileCheck %s --check-prefix=LINES
// RUN: not gpuopt-opt %S/Inputs/conv-bad-groups.mlir 2>&1 | wc -l | FileCheck %s --check-prefix=LINES

// PASS: error: no function body named @nope to split
// COMPILE: error: no function body named @nope to split
// COMPILE: error: the pipeline 'seg-split-load-time{entry=nope}' failed
// VERIFY: conv-bad-groups.mlir:4:8: error: {{.*}}groups
// DUMP: error: no function body named @nope to split
// DUMP: see current operation
// LINES: {{^ *[1-3]$}}

func.func @forward(%x: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %w = seg.param "w" : tensor<8x8xf32>
  %y = seg.linear %x, %w : tensor<1x4x8x8xf32>, tensor<8x8xf32> -> tensor<1x4x8x8xf32>
  %z = seg.relu %y : tensor<1x4x8x8xf32>
  return %z : tensor<1x4x8x8xf32>
}
