// A wrong input shape on gpuopt-run MODEL.mlir is one located error (the
// message, the source line and its caret), on both backends: no note with the
// entry function in generic form after it (MLIR's "see current operation",
// which for an exported network is thousands of lines).
// REQUIRES: torch
// RUN: %python -c "import numpy as np, sys; np.save(sys.argv[1], np.ones((1, 3, 8, 9), np.float32))" %t.x.npy
// RUN: not gpuopt-run %s --input=@%t.x.npy --backend=reference 2> %t.reference.err
// RUN: FileCheck %s --input-file=%t.reference.err --implicit-check-not=error: --implicit-check-not=note: \
// RUN:   --implicit-check-not=see --implicit-check-not='"func.func"' --implicit-check-not='"seg.relu"'
// RUN: grep -c 'error:' %t.reference.err | count 1
// RUN: not gpuopt-run %s --input=@%t.x.npy --backend=cpu 2> %t.cpu.err
// RUN: FileCheck %s --input-file=%t.cpu.err --implicit-check-not=error: --implicit-check-not=note: \
// RUN:   --implicit-check-not=see --implicit-check-not='"func.func"' --implicit-check-not='"seg.relu"'
// RUN: grep -c 'error:' %t.cpu.err | count 1
// Nothing else on stderr: the message, the source line, the caret.
// RUN: cat %t.reference.err %t.cpu.err | wc -l | FileCheck %s --check-prefix=LINES

// CHECK: gpuopt-run-one-line.mlir:[[@LINE+3]]:1: error: input 0 has shape [1, 3, 8, 9], but @forward expects 'tensor<1x3x8x8xf32>'
// LINES: {{^ *6$}}

func.func @forward(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32> {
  %a = seg.relu %x : tensor<1x3x8x8xf32>
  %b = seg.add %a, %x : tensor<1x3x8x8xf32>, tensor<1x3x8x8xf32> -> tensor<1x3x8x8xf32>
  %c = seg.relu %b : tensor<1x3x8x8xf32>
  return %c : tensor<1x3x8x8xf32>
}
