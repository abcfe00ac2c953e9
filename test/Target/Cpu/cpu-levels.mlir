// gpuopt-compile --cpu=LEVEL: the generated code (--emit=asm: without the
// runtime kernels, which carry target-attributed AVX-512 code by design and
// choose at run time) uses only the level's extensions, and the metadata
// records exactly those.
// RUN: gpuopt-compile %s --cpu=x86-64-v2 --emit=asm -o %t.v2.s
// RUN: FileCheck %s --check-prefix=V2 --implicit-check-not=ymm --implicit-check-not=zmm < %t.v2.s
// RUN: gpuopt-compile %s --cpu=x86-64-v3 --emit=asm -o %t.v3.s
// RUN: FileCheck %s --check-prefix=V3 --implicit-check-not=zmm --implicit-check-not='{%k' < %t.v3.s
// RUN: gpuopt-compile %s --cpu=x86-64-v4 --emit=asm -o %t.v4.s
// RUN: FileCheck %s --check-prefix=V4 < %t.v4.s
// RUN: gpuopt-compile %s --cpu=x86-64 --emit=asm -o %t.v1.s
// RUN: FileCheck %s --check-prefix=V1 --implicit-check-not=ymm < %t.v1.s
// The metadata of each level's library (gpuopt-run --dump, test/Target/Cpu/
// dump.mlir) records the level and exactly its extensions.
// RUN: gpuopt-compile %s --cpu=x86-64-v2 -o %t.v2.so
// RUN: gpuopt-run --dump %t.v2.so | FileCheck %s --check-prefix=V2-MD --match-full-lines
// RUN: gpuopt-compile %s --cpu=x86-64-v3 -o %t.v3.so
// RUN: gpuopt-run --dump %t.v3.so | FileCheck %s --check-prefix=V3-MD --match-full-lines
// RUN: gpuopt-compile %s --cpu=x86-64-v4 -o %t.v4.so
// RUN: gpuopt-run --dump %t.v4.so | FileCheck %s --check-prefix=V4-MD --match-full-lines
// RUN: gpuopt-compile %s --cpu=x86-64 -o %t.v1.so
// RUN: gpuopt-run --dump %t.v1.so | FileCheck %s --check-prefix=V1-MD

// Bad levels and options: a message naming the levels, exit code 1.
// RUN: not gpuopt-compile %s --cpu=x86-64-v5 -o %t.so 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not gpuopt-compile %s --cpu= -o %t.so 2>&1 | FileCheck %s --check-prefix=EMPTY
// RUN: not gpuopt-compile %s --target=cuda --cpu=x86-64-v3 -o %t.gpuopt 2>&1 | FileCheck %s --check-prefix=CUDA
// RUN: not gpuopt-compile %s --emit=obj -o %t.o 2>&1 | FileCheck %s --check-prefix=EMIT

// V2: gpuopt_compiled_forward:
// V3: forward_op0:
// V3: {{v[a-z0-9]+ .*%ymm}}
// V3: gpuopt_compiled_forward:
// V4: forward_op0:
// V4: {{v[a-z0-9]+ .*%zmm}}
// V4: gpuopt_compiled_forward:
// V1: gpuopt_compiled_forward:

// V2-MD:      "cpu": "x86-64-v2",
// V2-MD-NEXT: "cpu_features": [
// V2-MD-NEXT:   "cx16",
// V2-MD-NEXT:   "sahf",
// V2-MD-NEXT:   "popcnt",
// V2-MD-NEXT:   "sse3",
// V2-MD-NEXT:   "ssse3",
// V2-MD-NEXT:   "sse4.1",
// V2-MD-NEXT:   "sse4.2"
// V2-MD-NEXT: ],
// V3-MD:      "cpu": "x86-64-v3",
// V3-MD-NEXT: "cpu_features": [
// V3-MD-NEXT:   "cx16",
// V3-MD-NEXT:   "sahf",
// V3-MD-NEXT:   "popcnt",
// V3-MD-NEXT:   "sse3",
// V3-MD-NEXT:   "ssse3",
// V3-MD-NEXT:   "sse4.1",
// V3-MD-NEXT:   "sse4.2",
// V3-MD-NEXT:   "avx",
// V3-MD-NEXT:   "avx2",
// V3-MD-NEXT:   "bmi",
// V3-MD-NEXT:   "bmi2",
// V3-MD-NEXT:   "f16c",
// V3-MD-NEXT:   "fma",
// V3-MD-NEXT:   "lzcnt",
// V3-MD-NEXT:   "movbe",
// V3-MD-NEXT:   "xsave"
// V3-MD-NEXT: ],
// V4-MD:      "cpu": "x86-64-v4",
// V4-MD-NEXT: "cpu_features": [
// V4-MD-NEXT:   "cx16",
// V4-MD-NEXT:   "sahf",
// V4-MD-NEXT:   "popcnt",
// V4-MD-NEXT:   "sse3",
// V4-MD-NEXT:   "ssse3",
// V4-MD-NEXT:   "sse4.1",
// V4-MD-NEXT:   "sse4.2",
// V4-MD-NEXT:   "avx",
// V4-MD-NEXT:   "avx2",
// V4-MD-NEXT:   "bmi",
// V4-MD-NEXT:   "bmi2",
// V4-MD-NEXT:   "f16c",
// V4-MD-NEXT:   "fma",
// V4-MD-NEXT:   "lzcnt",
// V4-MD-NEXT:   "movbe",
// V4-MD-NEXT:   "xsave",
// V4-MD-NEXT:   "avx512f",
// V4-MD-NEXT:   "avx512bw",
// V4-MD-NEXT:   "avx512cd",
// V4-MD-NEXT:   "avx512dq",
// V4-MD-NEXT:   "avx512vl"
// V4-MD-NEXT: ],
// x86-64 requires no extension: an empty list.
// V1-MD:      "cpu": "x86-64",
// V1-MD-NEXT: "cpu_features": [
// V1-MD-NEXT: {{^ +$}}
// V1-MD-NEXT: ],

// UNKNOWN: gpuopt-compile: error: unknown --cpu level 'x86-64-v5' (levels: native, x86-64, x86-64-v2, x86-64-v3, x86-64-v4)
// EMPTY: gpuopt-compile: error: unknown --cpu level '' (levels: native,
// CUDA: gpuopt-compile: error: --cpu applies to --target=cpu, not --target=cuda
// EMIT: gpuopt-compile: error: --emit must be lib or asm, got 'obj'

// Elementwise work on 16-float rows, which LLVM vectorises at each level's
// width.
func.func @forward(%x: tensor<1x4x16x16xf32>, %r: tensor<1x4x16x16xf32>) -> tensor<1x4x16x16xf32> {
  %y = seg.relu %x : tensor<1x4x16x16xf32>
  %z = seg.add %y, %r : tensor<1x4x16x16xf32>, tensor<1x4x16x16xf32> -> tensor<1x4x16x16xf32>
  return %z : tensor<1x4x16x16xf32>
}
