// --runs=1 is one call, which includes the warm-up (the first touch of the
// weights and buffers, the thread pool's start): gpuopt-run reports it as
// "first call (includes warm-up)", never as an inference time, on every path
// (the reference and cpu backends and a compiled model library); --runs=N>1
// reports the median.
// REQUIRES: torch
// RUN: %python -c "import numpy as np, sys; np.save(sys.argv[1], np.ones((1, 3, 8, 8), np.float32))" %t.x.npy
// RUN: gpuopt-compile %s -o %t.so
// RUN: gpuopt-run %s --input=@%t.x.npy --backend=reference --runs=1 | FileCheck %s --check-prefixes=ONE,REFERENCE
// RUN: gpuopt-run %s --input=@%t.x.npy --backend=cpu --runs=1 | FileCheck %s --check-prefixes=ONE,CPU
// RUN: gpuopt-run %t.so --input=@%t.x.npy --runs=1 | FileCheck %s --check-prefixes=ONE,SO
// RUN: gpuopt-run %s --input=@%t.x.npy --backend=reference --runs=3 | FileCheck %s --check-prefixes=MEDIAN,REFERENCE
// RUN: gpuopt-run %s --input=@%t.x.npy --backend=cpu --runs=3 | FileCheck %s --check-prefixes=MEDIAN,CPU
// RUN: gpuopt-run %t.so --input=@%t.x.npy --runs=3 | FileCheck %s --check-prefixes=MEDIAN,SO
// The default is one run.
// RUN: gpuopt-run %t.so --input=@%t.x.npy | FileCheck %s --check-prefixes=ONE,SO

// ONE: output 0: [1, 3, 8, 8] f32 -> (not written)
// MEDIAN: output 0: [1, 3, 8, 8] f32 -> (not written)
// REFERENCE-NEXT: {{^}}backend reference: load-time
// CPU-NEXT: {{^}}backend cpu ({{.*}} kernels): load-time
// SO-NEXT: {{^}}compiled {{.*}}.so{{.*}}: load-time
// ONE-SAME: ms, first call (includes warm-up) {{[0-9.]+}} ms{{$}}
// MEDIAN-SAME: ms, inference {{[0-9.]+}} ms (median of 3){{$}}
// ONE-NOT: {{.}}
// MEDIAN-NOT: {{.}}

func.func @forward(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32> {
  %a = seg.relu %x : tensor<1x3x8x8xf32>
  %b = seg.add %a, %x : tensor<1x3x8x8xf32>, tensor<1x3x8x8xf32> -> tensor<1x3x8x8xf32>
  return %b : tensor<1x3x8x8xf32>
}
