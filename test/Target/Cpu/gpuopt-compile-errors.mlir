// Every error of gpuopt-compile: a message on stderr and exit code 1.
// RUN: not gpuopt-compile %s --target=cpu 2>&1 | FileCheck %s --check-prefix=NO-OUTPUT
// RUN: not gpuopt-compile %s --target=tpu -o %t.so 2>&1 | FileCheck %s --check-prefix=TARGET
// RUN: not gpuopt-compile %S/Inputs/no-such-file.mlir -o %t.so 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not gpuopt-compile %S/Inputs/parse-error.mlir -o %t.so 2>&1 | FileCheck %s --check-prefix=PARSE
// RUN: not gpuopt-compile %s --entry=nope -o %t.so 2>&1 | FileCheck %s --check-prefix=ENTRY
// RUN: not gpuopt-compile %s --pipeline=no-such-pass -o %t.so 2>&1 | FileCheck %s --check-prefix=PIPELINE
// RUN: not gpuopt-compile %S/Inputs/f16.mlir -o %t.so 2>&1 | FileCheck %s --check-prefix=F16
// RUN: not gpuopt-compile %s -o %t.no-such-dir/model.so 2>&1 | FileCheck %s --check-prefix=LINK
// RUN: not gpuopt-compile %s --pipeline='seg-split-load-time{entry=nope}' -o %t.so 2>&1 | FileCheck %s --check-prefix=PIPELINE-FAILED
// RUN: not gpuopt-compile %S/Inputs/f16-result.mlir -o %t.so 2>&1 | FileCheck %s --check-prefix=F16-RESULT
// RUN: not gpuopt-compile %S/Inputs/param-two-types.mlir -o %t.so 2>&1 | FileCheck %s --check-prefix=TWO-TYPES
// RUN: not gpuopt-compile %S/Inputs/external-call.mlir -o %t.so 2>&1 | FileCheck %s --check-prefix=UNDEFINED
// RUN: not gpuopt-compile %S/Inputs/zero-sized.mlir -o %t.so 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: not gpuopt-compile %S/Inputs/zero-sized-linear.mlir -o %t.so 2>&1 | FileCheck %s --check-prefix=ZERO-OP

// NO-OUTPUT: gpuopt-compile: error: no output file: pass -o MODEL.so
// TARGET: gpuopt-compile: error: unknown target 'tpu' (targets: cpu, cuda)
// MISSING: gpuopt-compile: error: {{.*}}no-such-file.mlir: cannot open: No such file or directory
// PARSE: parse-error.mlir:3:{{[0-9]+}}: error:
// ENTRY: error: no function named @nope in the module
// PIPELINE: error: bad --pipeline 'no-such-pass'
// F16: f16.mlir:2:1: error: the CPU target takes statically shaped f32 tensors; argument 0 of @forward is 'tensor<4xf16>'
// LINK: gpuopt-compile: error: {{.*}}no-such-dir/model.so: cannot create: No such file or directory
// LINK-NOT: see current operation
// PIPELINE-FAILED: error: no function body named @nope to split
// PIPELINE-FAILED: error: the pipeline 'seg-split-load-time{entry=nope}' failed
// F16-RESULT: f16-result.mlir:2:1: error: the CPU target returns statically shaped f32 tensors; result 0 of @forward is 'tensor<4xf16>'
// TWO-TYPES: param-two-types.mlir:3:1: error: parameter 'p' is used with two types: 'tensor<2x2xf32>' and 'tensor<4xf32>'
// ZERO: zero-sized.mlir:2:8: error: 'seg.concat' op has a zero-sized tensor ('tensor<1x0x4x4xf32>'), which the CPU target does not compute (--target=cuda does)
// ZERO-OP: zero-sized-linear.mlir:6:8: error: 'seg.linear' op has a zero-sized tensor ('tensor<1x4x0xf32>'), which the CPU target does not compute (--target=cuda does)
// UNDEFINED: external-call.mlir:6:3: error: 'func.call' op calls @not_in_the_runtime, which has no body; the lowerings compile only functions defined in the module

func.func @forward(%x: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %w = seg.param "w" : tensor<8x8xf32>
  %y = seg.linear %x, %w : tensor<1x4x8x8xf32>, tensor<8x8xf32> -> tensor<1x4x8x8xf32>
  return %y : tensor<1x4x8x8xf32>
}
