// A single-valued option given twice is an error, not "the last one wins"
// (LLVM's default since 15): `--backend=cpu ... --backend=reference` ran the
// reference backend silently. List options (--input, --output) may repeat.
// RUN: not gpuopt-run %s --backend=cpu --backend=reference 2>&1 | FileCheck %s --check-prefix=TOOL
// TOOL: gpuopt-run: error: --backend is given 2 times; give it once
// RUN: not gpuopt-compile %s --target=cpu --target=cpu -o %t.so 2>&1 | FileCheck %s --check-prefix=COMPILE
// COMPILE: gpuopt-compile: error: --target is given 2 times; give it once
// RUN: not ls %t.so
// RUN: not gpuopt-compile %s --target=cpu --cpu=x86-64 --cpu=x86-64-v3 -o %t.so 2>&1 | FileCheck %s --check-prefix=TARGET-FLAG
// TARGET-FLAG: gpuopt-compile: error: --cpu is given 2 times; give it once

func.func @forward(%x: tensor<1x2xf32>) -> tensor<1x2xf32> {
  return %x : tensor<1x2xf32>
}
